// Every registered allreduce algorithm: proven by the verifier, exact in real-payload mode, and timed by both
// executors as its closed form says on a contention-free star.
#include <catch2/catch.hpp>
#include <cmath>

#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "models/alpha_beta.hpp"
#include "rel_diff.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/simgrid_executor.hpp"

using namespace dtsim;

namespace {

double analytical_time(const std::string& name, int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost) {
  AnalyticalOptions an;
  an.cost = cost;
  return run_analytical(find_algorithm(name).build(ranks, bytes, AlgorithmOptions{}), an).time_s;
}

}  // namespace

TEST_CASE("every algorithm passes the verifier over ranks x bytes") {
  AlgorithmOptions options;
  options.set("segment-size", 100000);  // the pipelined trees cut 1 MB into 10 segments
  for (const AlgorithmInfo& algorithm : algorithms()) {
    for (int ranks : {1, 2, 3, 4, 5, 7, 8, 16, 33, 64}) {
      for (std::uint64_t bytes : {0ULL, 1ULL, 4ULL * static_cast<std::uint64_t>(ranks) - 1, 1000000ULL}) {
        CAPTURE(algorithm.name, ranks, bytes);
        const VerifyReport report = verify(algorithm.build(ranks, bytes, options));
        CAPTURE(report.error);
        CHECK(report.ok);
      }
    }
  }
}

TEST_CASE("every algorithm produces the exact sum on real payloads") {
  AlgorithmOptions options;
  options.element_bytes = 4;
  options.set("segment-size", 40000);  // the pipelined trees cut 400 kB into 10 segments
  for (const AlgorithmInfo& algorithm : algorithms()) {
    for (int ranks : {2, 3, 5, 8, 33}) {
      for (std::uint64_t bytes : {4ULL, 4ULL * (4ULL * static_cast<std::uint64_t>(ranks) - 1), 400000ULL}) {
        CAPTURE(algorithm.name, ranks, bytes);
        SimGridOptions sg;
        sg.real_payload = true;
        sg.payload_seed = bytes + static_cast<std::uint64_t>(ranks);
        const ExecutionResult result = run_simgrid(algorithm.build(ranks, bytes, options), sg);
        CHECK(result.payload_checked);
        CHECK(result.payload_ok);
      }
    }
  }
}

TEST_CASE("analytical and SimGrid times equal each algorithm's closed form on a star") {
  const std::uint64_t bytes = 1680ULL * 600;  // divisible by every rank count below, so ring chunks are even
  AlphaBetaGamma cost;
  cost.alpha_s = 5e-6;
  cost.bandwidth_Bps = 10e9 / 8;
  cost.reduce_Bps = 5e9;
  for (const AlgorithmInfo& algorithm : algorithms()) {
    if (algorithm.collective != Collective::allreduce) continue;  // the other collectives: their own test below
    for (int ranks : {2, 3, 4, 5, 7, 8, 16}) {
      CAPTURE(algorithm.name, ranks);
      const double formula = algorithm.closed_form_seconds(ranks, bytes, cost);
      REQUIRE(formula > 0);
      const Schedule s = algorithm.build(ranks, bytes, AlgorithmOptions{});
      AnalyticalOptions an;
      an.cost = cost;
      SimGridOptions sg;
      sg.cost = cost;
      // their own test below (chain-dbtree with one rank a node is dbtree); nvls's and sharp's helpers are switches
      // that reduce in flight, not hosts of the star: tests/test_nvls.cpp and tests/test_sharp.cpp time them
      if (algorithm.name == "pipelined-tree" || algorithm.name == "dbtree" || algorithm.name == "chain-dbtree" ||
          algorithm.name == "nvls" || algorithm.name == "nvls-tree" || algorithm.name == "sharp")
        continue;
      CHECK(rel_diff(run_analytical(s, an).time_s, formula) < 1e-9);
      if (algorithm.name == "ps") {
        // every worker pushes its shard through the one server's link: the incast the analytical executor leaves out
        const double shared = parameter_server_shared_link_seconds(ranks, bytes, cost, 1, false);
        CHECK(rel_diff(run_simgrid(s, sg).time_s, shared) < 1e-9);
        CHECK(shared >= 2.0 * (ranks - 1) * static_cast<double>(bytes) / cost.bandwidth_Bps);
      } else if (algorithm.name == "direct" && ranks > 2) {
        // P-1 messages leave and enter every host at once and share its one link: SimGrid shows the contention the
        // analytical executor leaves out, exactly as max-min sharing predicts.
        const double shared = direct_allreduce_shared_link_seconds(ranks, bytes, cost);
        CHECK(rel_diff(run_simgrid(s, sg).time_s, shared) < 1e-9);
      } else {
        CHECK(rel_diff(run_simgrid(s, sg).time_s, formula) < 1e-9);
      }
    }
  }
}

TEST_CASE(
    "expected shape on a 10 Gb/s, 1 us star: ring and Rabenseifner near the bound, butterfly and tree win small") {
  const AlphaBetaGamma cost;  // 1 us, 10 Gb/s, reduce 10 GB/s
  const double ring_big = analytical_time("ring", 64, 100000000, cost);
  const double butterfly_big = analytical_time("butterfly", 64, 100000000, cost);
  const double bound = 2.0 * 63 / 64 * 1e8 / cost.bandwidth_Bps;  // bandwidth lower bound 2(P-1)/P n/B
  CHECK(ring_big / bound < 1.1);
  CHECK(analytical_time("rabenseifner", 64, 100000000, cost) / bound < 1.1);
  // butterfly moves n log2(P) bytes per rank against the ring's 2n(P-1)/P: about log2(P)/2 = 3x slower
  CHECK(butterfly_big / ring_big > 2.5);
  CHECK(butterfly_big / ring_big < 3.5);
  CHECK(analytical_time("tree", 64, 100000000, cost) > butterfly_big);
  const double ring_small = analytical_time("ring", 64, 1000, cost);
  CHECK(analytical_time("butterfly", 64, 1000, cost) < ring_small);
  CHECK(analytical_time("tree", 64, 1000, cost) < ring_small);
}

TEST_CASE("parameter server: sharded, on server hosts or co-located, verified, exact, and its incast timed") {
  AlphaBetaGamma cost;
  cost.alpha_s = 2e-6;
  const std::uint64_t bytes = 1680ULL * 600;
  for (const bool colocated : {false, true}) {
    for (const std::uint32_t servers : {1U, 2U, 3U, 5U}) {
      for (const int ranks : {1, 2, 5, 8, 16}) {
        if (colocated && servers > static_cast<std::uint32_t>(ranks)) continue;
        CAPTURE(colocated, servers, ranks);
        AlgorithmOptions options;
        options.set("servers", servers);
        options.set("ps-placement", colocated ? "colocated" : "hosts");
        const Schedule s = find_algorithm("ps").build(ranks, bytes, options);
        CHECK(s.participants == ranks);
        CHECK(s.ranks == (colocated ? ranks : ranks + static_cast<int>(servers)));
        const VerifyReport report = verify(s);
        CAPTURE(report.error);
        CHECK(report.ok);
        AnalyticalOptions an;
        an.cost = cost;
        CHECK(rel_diff(run_analytical(s, an).time_s,
                       find_algorithm("ps").closed_form_seconds(ranks, bytes, cost, options)) < 1e-9);
        SimGridOptions sg;
        sg.cost = cost;
        const double shared = parameter_server_shared_link_seconds(ranks, bytes, cost, servers, colocated);
        // co-located, each server link carries P-1 shards each way and a worker link at most S <= P of them
        CHECK(rel_diff(run_simgrid(s, sg).time_s, shared) < 1e-9);
        options.element_bytes = 4;
        sg.real_payload = true;
        const ExecutionResult payload = run_simgrid(find_algorithm("ps").build(ranks, 4000, options), sg);
        CHECK(payload.payload_ok);
      }
    }
  }
  // co-located servers spread out (one per node): verified, each shard reduced on worker shard x stride, and on the
  // star (every host alike) timed as when they sit on the first workers
  for (const std::uint32_t stride : {2U, 3U, 4U}) {
    for (const std::uint32_t servers : {1U, 2U, 3U}) {
      const int ranks = 8;
      if ((servers - 1) * stride >= static_cast<std::uint32_t>(ranks)) continue;
      CAPTURE(stride, servers);
      AlgorithmOptions options;
      options.set("servers", servers);
      options.set("ps-placement", "colocated");
      options.set("server-stride", stride);
      const Schedule s = find_algorithm("ps").build(ranks, bytes, options);
      CHECK(verify(s).ok);
      for (int r = 0; r < ranks; ++r) {
        bool reduces = false;
        for (const Op& op : s.rank_ops(r))
          reduces = reduces || op.kind() == OpKind::recv_reduce;
        const bool server =
            r % static_cast<int>(stride) == 0 && r / static_cast<int>(stride) < static_cast<int>(servers);
        CHECK(reduces == (server && ranks > 1));
      }
      SimGridOptions sg;
      sg.cost = cost;
      CHECK(rel_diff(run_simgrid(s, sg).time_s,
                     parameter_server_shared_link_seconds(ranks, bytes, cost, servers, true)) < 1e-9);
    }
  }
  AlgorithmOptions spread;
  spread.set("servers", 3);
  spread.set("ps-placement", "colocated");
  spread.set("server-stride", 4);
  CHECK_THROWS_WITH(find_algorithm("ps").build(8, 100, spread), Catch::Contains("do not fit in 8 ranks"));
  AlgorithmOptions none;
  none.set("servers", 0);
  CHECK_THROWS_AS(find_algorithm("ps").build(4, 100, none), OptionError);
  AlgorithmOptions five;
  five.set("servers", 5);
  five.set("ps-placement", "colocated");
  CHECK_THROWS_WITH(find_algorithm("ps").build(4, 100, five), Catch::Contains("at most 4 co-located servers"));
}

TEST_CASE("a single parameter server is about P times slower than the ring at 64 ranks and 100 MB") {
  SimGridOptions sg;
  const double ring = run_simgrid(find_algorithm("ring").build(64, 100000000, AlgorithmOptions{}), sg).time_s;
  const double ps = run_simgrid(find_algorithm("ps").build(64, 100000000, AlgorithmOptions{}), sg).time_s;
  // 2 P n/B through the server's link against the ring's 2 (P-1)/P n/B: about P
  CHECK(ps / ring > 0.5 * 64);
  CHECK(ps / ring < 1.5 * 64);
}

TEST_CASE("the other collectives: closed forms on both executors, contention where links are shared, any root") {
  const std::uint64_t bytes = 57600ULL * 20;  // divisible by P^2 for every P below (all-to-all blocks)
  AlphaBetaGamma cost;
  cost.alpha_s = 3e-6;
  cost.reduce_Bps = 4e9;
  for (const AlgorithmInfo& algorithm : algorithms()) {
    if (algorithm.collective == Collective::allreduce) continue;
    for (int ranks : {2, 3, 5, 8, 16}) {
      for (std::uint32_t root : {0U, 1U, static_cast<std::uint32_t>(ranks) - 1}) {
        CAPTURE(to_string(algorithm.collective), algorithm.name, ranks, root);
        AlgorithmOptions options;
        options.root = root;
        const Schedule s = algorithm.build(ranks, bytes, options);
        const VerifyReport report = verify(s);
        CAPTURE(report.error);
        CHECK(report.ok);
        const double formula = algorithm.closed_form_seconds(ranks, bytes, cost);
        REQUIRE(formula > 0);
        AnalyticalOptions an;
        an.cost = cost;
        SimGridOptions sg;
        sg.cost = cost;
        CHECK(rel_diff(run_analytical(s, an).time_s, formula) < 1e-9);
        if (algorithm.name == "direct" && ranks > 2) {
          // the root's link (gather, scatter) or every link (all-to-all) carries P-1 blocks at once
          const double block = static_cast<double>(bytes) / ranks;
          const double moved = algorithm.collective == Collective::alltoall ? block / ranks : block;
          CHECK(rel_diff(run_simgrid(s, sg).time_s, cost.alpha_s + (ranks - 1) * moved / cost.bandwidth_Bps) < 1e-9);
        } else {
          CHECK(rel_diff(run_simgrid(s, sg).time_s, formula) < 1e-9);
        }
        options.element_bytes = 4;
        sg.real_payload = true;
        CHECK(
            run_simgrid(algorithm.build(ranks, 4 * 1000 * static_cast<std::uint64_t>(ranks), options), sg).payload_ok);
      }
    }
  }
}

TEST_CASE("the verifier holds each collective to its own postcondition") {
  AlgorithmOptions options;
  // an allgather schedule proves nothing about an allreduce: relabelled, it fails the allreduce postcondition
  Schedule gather = find_algorithm("ring", Collective::allgather).build(4, 4000, options);
  CHECK(verify(gather).ok);
  gather.collective = Collective::allreduce;
  CHECK_THAT(verify(gather).error, Catch::Contains("allreduce postcondition"));
  // a broadcast from the wrong root leaves the others with data that is not the root's
  options.root = 2;
  Schedule broadcast = find_algorithm("tree", Collective::broadcast).build(5, 1000, options);
  CHECK(verify(broadcast).ok);
  broadcast.root = 1;
  CHECK_THAT(verify(broadcast).error, Catch::Contains("broadcast postcondition"));
  options.root = 5;
  CHECK_THROWS_AS(find_algorithm("tree", Collective::reduce).build(5, 1000, options), OptionError);
}

TEST_CASE("hierarchical: node-local reduce-scatter, any allreduce across nodes, node-local allgather") {
  AlphaBetaGamma cost;
  cost.alpha_s = 2e-6;
  const std::uint64_t bytes = 1680ULL * 600;
  for (const char* inter : {"ring", "tree", "butterfly", "rabenseifner", "direct"}) {
    for (const auto& [ranks, per_node] : std::vector<std::pair<int, std::uint32_t>>{
             {8, 1}, {8, 2}, {8, 4}, {8, 8}, {12, 4}, {12, 3}, {6, 2}, {16, 4}}) {
      CAPTURE(inter, ranks, per_node);
      AlgorithmOptions options;
      options.set("ranks-per-node", per_node);
      options.set("inter", inter);
      for (std::uint64_t small : {0ULL, 1ULL, 999ULL}) {
        CAPTURE(small);
        const VerifyReport tiny = verify(find_algorithm("hierarchical").build(ranks, small, options));
        CAPTURE(tiny.error);
        CHECK(tiny.ok);
      }
      const Schedule s = find_algorithm("hierarchical").build(ranks, bytes, options);
      const VerifyReport report = verify(s);
      CAPTURE(report.error);
      CHECK(report.ok);
      const double formula = find_algorithm("hierarchical").closed_form_seconds(ranks, bytes, cost, options);
      AnalyticalOptions an;
      an.cost = cost;
      CHECK(rel_diff(run_analytical(s, an).time_s, formula) < 1e-9);
      SimGridOptions sg;
      sg.cost = cost;
      if (std::string(inter) != "direct") CHECK(rel_diff(run_simgrid(s, sg).time_s, formula) < 1e-9);
      options.element_bytes = 4;
      sg.real_payload = true;
      CHECK(run_simgrid(find_algorithm("hierarchical").build(ranks, 4000, options), sg).payload_ok);
    }
  }
  AlgorithmOptions bad;
  bad.set("ranks-per-node", 3);
  CHECK_THROWS_WITH(find_algorithm("hierarchical").build(8, 100, bad), Catch::Contains("expected a divisor of the 8"));
  bad.set("ranks-per-node", 2);
  bad.set("inter", "ps");
  CHECK_THROWS_AS(find_algorithm("hierarchical").build(8, 100, bad), OptionError);
}

TEST_CASE("pipelined trees: segments verified, closed form exact without reduction cost, contention bounded") {
  AlphaBetaGamma cost;
  cost.alpha_s = 3e-6;
  for (const char* name : {"pipelined-tree", "dbtree"}) {
    const bool twin = std::string(name) == "dbtree";
    for (int ranks : {2, 3, 4, 5, 7, 8, 16, 33}) {
      for (std::uint64_t segment : {1ULL, 3ULL, 64ULL, 4096ULL}) {
        const std::uint64_t bytes = 6144;  // whole and halved, every part splits into equal segments
        CAPTURE(name, ranks, segment);
        AlgorithmOptions options;
        options.set("segment-size", segment);
        const Schedule s = find_algorithm(name).build(ranks, bytes, options);
        if (segment > 1) {  // 1-byte segments: 4096 chunks, verified by the smaller cases
          const VerifyReport report = verify(s);
          CAPTURE(report.error);
          REQUIRE(report.ok);
        }
        // K segments per tree, each chunk at most one segment
        const std::uint64_t part = twin ? bytes / 2 : bytes;
        CHECK(s.chunks.size() == (twin ? 2 : 1) * ((part + segment - 1) / segment));
        for (const Chunk& c : s.chunks)
          CHECK(c.size_bytes <= segment);
        AnalyticalOptions an;
        an.cost = cost;
        an.cost.reduce_Bps = 1e300;  // reductions free: (K + 2H - 1)(alpha + s beta) is exact
        const double free_reduce = find_algorithm(name).closed_form_seconds(ranks, bytes, an.cost, options);
        CHECK(rel_diff(run_analytical(s, an).time_s, free_reduce) < 1e-8);  // sums over ~6000 steps
        // with reduction cost the formula charges two segments per step: an upper bound within that charge
        an.cost = cost;
        const double formula = find_algorithm(name).closed_form_seconds(ranks, bytes, cost, options);
        const double timed = run_analytical(s, an).time_s;
        CHECK(timed <= formula * (1 + 1e-8));
        CHECK(timed >= free_reduce * (1 - 1e-8));
        if (segment >= 64) {
          // SimGrid shares each host's link among the segments crossing it in one step: slower than the analytical
          // executor, at most 3 segments per link per step for one tree and 4 for two
          SimGridOptions sg;
          sg.cost = cost;
          const double simulated = run_simgrid(s, sg).time_s;
          const double shared = twin ? double_binary_tree_shared_link_seconds(ranks, bytes, cost, segment)
                                     : pipelined_tree_shared_link_seconds(ranks, bytes, cost, segment);
          CHECK(simulated >= timed * (1 - 1e-9));
          CHECK(simulated <= shared * (1 + 1e-9));
        }
      }
    }
  }
  AlgorithmOptions zero;
  zero.set("segment-size", 0);
  CHECK_THROWS_AS(find_algorithm("pipelined-tree").build(4, 100, zero), OptionError);
  CHECK_THROWS_AS(find_algorithm("dbtree").build(4, 100, zero), OptionError);
  AlgorithmOptions tiny;
  tiny.set("segment-size", 1);
  CHECK_THROWS_WITH(find_algorithm("dbtree").build(1024, 1ULL << 30, tiny), Catch::Contains("use larger segments"));
}

TEST_CASE("chain-dbtree: NCCL's tree is a correct allreduce whose height is the chain plus the nodes' tree") {
  for (const auto& [ranks, per_node] : {std::pair{32, 8}, {24, 8}, {8, 8}, {12, 4}, {6, 2}, {7, 1}, {16, 1}}) {
    CAPTURE(ranks, per_node);
    AlgorithmOptions options(4);
    options.set("ranks-per-node", static_cast<std::uint64_t>(per_node));
    options.set("segment-size", 4000);
    const Schedule s = find_algorithm("chain-dbtree").build(ranks, 40000, options);  // 5 segments per tree
    const VerifyReport report = verify(s);
    REQUIRE(report.ok);
    // K + 2H - 1 steps, H = (G - 1) + the in-order tree's height over the nodes (dbtree's, floor(log2(N-1)) + 1)
    const int nodes = ranks / per_node;
    const int height = per_node - 1 + (nodes > 1 ? static_cast<int>(std::floor(std::log2(nodes - 1))) + 1 : 0);
    CHECK(report.max_steps == static_cast<std::uint64_t>(5 + 2 * height - 1));
    // every message between nodes leaves a node's head: rank 0 of its node (first tree) or rank G-1 (second)
    for (int r = 0; r < ranks; ++r) {
      for (const Op& op : s.rank_ops(r)) {
        if (op.kind() != OpKind::send || op.peer() / per_node == r / per_node) continue;
        const int local = r % per_node;
        CHECK((local == 0 || local == per_node - 1));
      }
    }
  }
  // one rank a node is dbtree itself
  AlgorithmOptions one(4);
  CHECK(find_algorithm("chain-dbtree").build(16, 4000, one).ops == find_algorithm("dbtree").build(16, 4000, one).ops);
  AlgorithmOptions uneven(4);
  uneven.set("ranks-per-node", std::uint64_t{3});
  CHECK_THROWS_AS(find_algorithm("chain-dbtree").build(16, 4000, uneven), OptionError);
}

TEST_CASE("the double binary tree: every rank forwards for at most one tree, and it beats one pipelined tree") {
  for (int ranks : {4, 8, 16, 64}) {
    CAPTURE(ranks);
    AlgorithmOptions options;
    options.set("segment-size", 1000);
    const Schedule s = find_algorithm("dbtree").build(ranks, 2000, options);  // one segment per tree
    // per rank, whether it receives reductions in each tree (chunk 0: the first tree's, chunk 1: the second's)
    for (int r = 0; r < ranks; ++r) {
      int inner = 0;
      for (std::uint32_t chunk : {0U, 1U}) {
        bool receives = false;
        for (const Op& op : s.rank_ops(r))
          receives |= op.kind() == OpKind::recv_reduce && op.span() == chunk;
        inner += receives ? 1 : 0;
      }
      CAPTURE(r);
      CHECK(inner <= 1);  // even P: inner nodes of one tree are leaves of the other
    }
  }
  SimGridOptions sg;
  AlgorithmOptions options;
  const auto time = [&](const char* name, std::uint64_t bytes) {
    return run_simgrid(find_algorithm(name).build(64, bytes, options), sg).time_s;
  };
  const double ring = time("ring", 100000000);
  const double dbtree = time("dbtree", 100000000);
  const double pipelined = time("pipelined-tree", 100000000);
  CHECK(dbtree < 0.8 * pipelined);  // about 2 n beta against 3 n beta through an inner node's link
  CHECK(dbtree < 1.25 * ring);
  CHECK(time("dbtree", 1000) < time("ring", 1000));  // 2 log2 P steps against 2 (P-1)
}
