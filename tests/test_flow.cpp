// The flow executor against the SimGrid executor: the same schedules, the same network model (CM02, max-min sharing
// weighted by route latency, latency paid before the bytes move), so the same times.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/step_walker.hpp"
#include "algorithms/verifier.hpp"
#include "cluster_helpers.hpp"
#include "rel_diff.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

const std::vector<std::string> allreduce_algorithms{
    "ring", "tree", "pipelined-tree", "dbtree", "butterfly", "rabenseifner", "ps", "direct", "hierarchical"};

// ps: 2 co-located servers, server_stride ranks apart (the ranks per node puts one on each of the first two nodes).
// The schedule as the algorithm builds it (compact where it has a compact form), or its full form written out.
Schedule build(const std::string& algorithm, int ranks, std::uint64_t bytes, int ranks_per_node = 4,
               bool compact = false, int server_stride = 1, std::uint64_t segment_bytes = 0) {
  AlgorithmOptions options;
  if (segment_bytes > 0) options.set("segment-size", segment_bytes);
  options.set("ps-placement", "colocated");
  options.set("servers", 2);
  options.set("server-stride", static_cast<std::uint32_t>(server_stride));
  options.set("ranks-per-node", static_cast<std::uint32_t>(ranks_per_node));
  const Schedule built = find_algorithm(algorithm).build(ranks, bytes, options);
  return compact ? built : expand(built);
}

// The ring of `collective` over p ranks written out step by step from its definition (algorithms/ring.cpp), without
// repeat_step: what expanding the compact ring must give.
Schedule written_out_ring(Collective collective, std::uint32_t p, std::uint64_t bytes) {
  ScheduleBuilder builder(collective, "ring", static_cast<int>(p), bytes, buffer_chunks(bytes, p, 1));
  if (collective != Collective::allreduce) builder.set_chunk_blocks(identity_blocks(p));
  // (shift, reduce) of each pass: in step s rank r sends chunk (r + shift - s) mod p and receives the one before it
  std::vector<std::pair<std::uint32_t, bool>> passes{{0, true}, {1, false}};
  if (collective == Collective::reduce_scatter) passes = {{p - 1, true}};
  if (collective == Collective::allgather) passes = {{0, false}};
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    for (const auto& [shift, reduce] : passes) {
      for (std::uint32_t s = 0; s + 1 < p; ++s) {
        const std::uint32_t out = (r + shift + p - s) % p;
        const std::uint32_t in = (out + p - 1) % p;
        const int prev = static_cast<int>((r + p - 1) % p);
        builder.begin_step();
        builder.add(Op::send(static_cast<int>((r + 1) % p), out));
        builder.add(reduce ? Op::recv_reduce(prev, in) : Op::recv_copy(prev, in));
      }
    }
  }
  return builder.finish();
}

// The built-in dgx-a100 cluster on `nodes` nodes, ranks placed node by node, and flow options over it.
struct DgxA100 {
  Topology topology;
  FlowOptions options;
  explicit DgxA100(int nodes)
      : topology([nodes] {
          ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-a100.json");
          spec.nodes = nodes;
          return spec;
        }()) {
    options.topology = &topology;
    options.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  }
  DgxA100(const DgxA100&) = delete;
  DgxA100& operator=(const DgxA100&) = delete;
};

}  // namespace

TEST_CASE("flow and SimGrid executors agree on a star for every allreduce algorithm and size") {
  SimGridOptions sg;
  sg.cost.alpha_s = 2e-6;
  FlowOptions fo;
  fo.cost = sg.cost;
  fo.pad_chunks_within = 0;  // every chunk timed at its own size, as SimGrid does
  fo.pad_chunks_bytes = 0;
  for (const std::string& algorithm : allreduce_algorithms) {
    for (int ranks : {2, 7, 16}) {
      for (std::uint64_t bytes : {1000ULL, 1000000ULL, 64000000ULL}) {
        CAPTURE(algorithm, ranks, bytes);
        const int per_node = ranks % 4 == 0 ? 4 : 1;
        const Schedule s = build(algorithm, ranks, bytes, per_node);
        const ExecutionResult a = run_simgrid(s, sg);
        const ExecutionResult b = run_flow(s, fo);
        CHECK(rel_diff(b.time_s, a.time_s) < 1e-6);
        CHECK(b.messages == a.messages);
        CHECK(b.bytes_sent == a.bytes_sent);
        // the compact form of the same schedule (ring steps stored once) runs the same
        const ExecutionResult c = run_flow(build(algorithm, ranks, bytes, per_node, true), fo);
        CHECK(rel_diff(c.time_s, a.time_s) < 1e-6);
        CHECK(c.messages == a.messages);
        CHECK(c.bytes_sent == a.bytes_sent);
      }
    }
  }
}

TEST_CASE("a compact ring costs the flow executor the same few instants at any rank count") {
  FlowOptions fo;
  std::vector<std::uint64_t> batches;
  for (int ranks : {16, 128, 1024}) {
    CAPTURE(ranks);
    const std::uint64_t bytes = 1024ULL * static_cast<std::uint64_t>(ranks);  // chunks of 1 KiB: all alike
    const Schedule s = build("ring", ranks, bytes, 1, true);
    CHECK(s.ops.size() == 4ULL * static_cast<std::uint64_t>(ranks));  // two stored steps per pass, not 2(P-1)
    const ExecutionResult r = run_flow(s, fo);
    // the closed form: 2(P-1) steps of alpha + chunk / bandwidth, P-1 reductions of a chunk
    const double chunk = 1024;
    const double expected = 2.0 * (ranks - 1) * (fo.cost.alpha_s + chunk / fo.cost.bandwidth_Bps) +
                            (ranks - 1) * chunk / fo.cost.reduce_Bps;
    CHECK(r.time_s == Approx(expected).epsilon(1e-9));
    // simulated: the first two reduce-scatter steps (the second measures the repeating step) and the first
    // allgather step (a new shape, measured once); every other step is skipped
    CHECK(r.skipped_steps == 2ULL * static_cast<std::uint64_t>(ranks) - 2 - 3);
    batches.push_back(r.event_batches);
  }
  CHECK(batches[0] == batches[1]);
  CHECK(batches[1] == batches[2]);
}

TEST_CASE("a long flow run reports the fraction of its messages posted, rising to the end") {
  // a pipelined tree of 32 ranks in 4000 segments: every message simulated, thousands of instants
  const Schedule s = build("pipelined-tree", 32, 4000000, 1, true, 1, 1000);
  FlowOptions fo;
  fo.lump_ranks = false;
  fo.skip_repeats = false;  // (its periodic regime would be skipped on the star)
  std::vector<double> reported;
  fo.progress = [&](double fraction) { reported.push_back(fraction); };
  const ExecutionResult r = run_flow(s, fo);
  REQUIRE(r.event_batches >= 2 * 4096);
  CHECK(reported.size() == r.event_batches / 4096);
  CHECK(reported.front() > 0);
  CHECK(reported.back() <= 1);
  CHECK(std::is_sorted(reported.begin(), reported.end()));
  // the last report, at most 4095 instants before the end, has most of the messages posted
  CHECK(reported.back() > 0.5);
  CHECK(r.messages == expanded_send_count(s));
}

TEST_CASE("padding uneven chunks to the largest errs upwards by at most the padding fraction") {
  // 1000003 bytes over 64 ranks: chunks of 15625 and 15626 bytes, 6.4e-5 apart
  const Schedule s = build("ring", 64, 1000003, 1, true);
  FlowOptions exact;
  exact.pad_chunks_within = 0;
  exact.pad_chunks_bytes = 0;
  FlowOptions padded;
  padded.pad_chunks_bytes = 0;  // the fraction alone
  const ExecutionResult a = run_flow(s, exact);
  const ExecutionResult b = run_flow(s, padded);
  CHECK(b.time_s >= a.time_s * (1 - 1e-12));
  CHECK(b.time_s <= a.time_s * (1 + padded.pad_chunks_within));
  CHECK(b.skipped_steps > 100);         // padded, the ring's steps repeat
  CHECK(a.skipped_steps == 0);          // exact, ranks drift apart by a byte's time and never end a step together
  CHECK(b.bytes_sent == a.bytes_sent);  // padding changes the timing, not what is sent
  CHECK(rel_diff(a.time_s, run_simgrid(expand(s), SimGridOptions{}).time_s) < 1e-6);
}

TEST_CASE("chunks one element apart are padded whatever their fraction, within a few bytes' time a step") {
  // 1000 ranks and 4-byte elements: chunks of 100 and 101 elements, 1% apart (above pad_chunks_within), 4 bytes apart
  AlgorithmOptions options;
  options.element_bytes = 4;
  const std::uint64_t bytes = 4ULL * (100 * 1000 + 7);
  const Schedule s = find_algorithm("ring").build(1000, bytes, options);
  FlowOptions exact;
  exact.pad_chunks_within = 0;
  exact.pad_chunks_bytes = 0;
  FlowOptions padded;  // the defaults
  const ExecutionResult a = run_flow(s, exact);
  const ExecutionResult b = run_flow(s, padded);
  CHECK(a.skipped_steps == 0);
  CHECK(b.skipped_steps > 1900);  // of 1998 steps
  CHECK(b.bytes_sent == a.bytes_sent);
  CHECK(b.time_s >= a.time_s * (1 - 1e-12));
  // at most 4 bytes more a step, each at the link's bandwidth, and their reduction
  const double bound = 1998 * 4 / padded.cost.bandwidth_Bps + 999 * 4 / padded.cost.reduce_Bps;
  CHECK(b.time_s - a.time_s <= bound * (1 + 1e-9));
  // without the byte rule the fraction alone does not pad them
  FlowOptions fraction_only;
  fraction_only.pad_chunks_bytes = 0;
  CHECK(run_flow(s, fraction_only).skipped_steps == 0);
}

TEST_CASE("builders give one schedule whatever the executor: the compact ring expands to the ring written out") {
  for (Collective c : {Collective::allreduce, Collective::reduce_scatter, Collective::allgather}) {
    for (std::uint32_t ranks : {2U, 3U, 8U, 12U}) {
      CAPTURE(to_string(c), ranks);
      const Schedule compact = find_algorithm("ring", c).build(static_cast<int>(ranks), 9000, AlgorithmOptions{});
      CHECK(compact.compact() == (ranks > 2));  // two ranks: a pass is one step, nothing repeats
      CHECK(compact.ops.size() == (c == Collective::allreduce ? 4ULL : 2ULL) * ranks);
      const Schedule expanded = expand(compact);
      const Schedule reference = written_out_ring(c, ranks, 9000);
      CHECK_FALSE(expanded.compact());
      CHECK(expanded.ops == reference.ops);
      CHECK(expanded.rank_begin == reference.rank_begin);
      CHECK(expanded.spans == reference.spans);
      CHECK(expanded_op_count(compact) == reference.ops.size());
    }
  }
}

TEST_CASE("executors that run every step expand a compact schedule themselves, with the same results") {
  AlphaBetaGamma cost;
  cost.alpha_s = 3e-6;
  for (const std::string algorithm : {"ring", "hierarchical", "pipelined-tree", "dbtree", "chain-dbtree"}) {
    for (int ranks : {1, 2, 3, 8, 12}) {
      for (std::uint64_t bytes : {0ULL, 5ULL, 1000ULL, 1000000ULL}) {
        const int per_node = algorithm != "ring" && ranks % 4 == 0 ? 4 : 1;
        CAPTURE(algorithm, ranks, bytes);
        const bool tree = algorithm.find("tree") != std::string::npos;  // (in segments of 20 kB: a pipeline)
        const Schedule compact = build(algorithm, ranks, bytes, per_node, true, 1, tree ? 20000 : 0);
        const Schedule full = expand(compact);
        CHECK_FALSE(full.compact());
        if (tree && bytes == 1000000 && ranks > 2) CHECK(compact.compact());
        CHECK(full.ops.size() == expanded_op_count(compact));
        CHECK(expanded_send_count(compact) ==
              static_cast<std::uint64_t>(std::count_if(full.ops.begin(), full.ops.end(),
                                                       [](const Op& op) { return op.kind() == OpKind::send; })));
        if (!compact.compact()) continue;
        CHECK(compact.ops.size() < full.ops.size());
        // SimGrid's training actors (run_simgrid_training) still take only the full form: the check says so
        CHECK_FALSE(check_well_formed(compact).empty());
        CHECK(check_well_formed(compact, true).empty());
        SimGridOptions sg;
        sg.cost = cost;
        AnalyticalOptions an;
        an.cost = cost;
        const ExecutionResult a = run_simgrid(compact, sg), b = run_simgrid(full, sg);
        CHECK(a.time_s == b.time_s);
        CHECK(a.messages == b.messages);
        CHECK(run_analytical(compact, an).time_s == run_analytical(full, an).time_s);
        const VerifyReport v = verify(compact), w = verify(full);
        CHECK(v.ok);
        CHECK(v.messages == w.messages);
        CHECK(v.bytes_sent == w.bytes_sent);
        CHECK(v.max_steps == w.max_steps);
      }
    }
  }
}

TEST_CASE("flow and SimGrid executors agree on routed clusters: fat-trees, a torus, multi-GPU nodes") {
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/";
  struct Case {
    std::string file;
    int nodes;
    std::string fabric_change;  // applied to the cluster for the case
  };
  for (const Case& c : std::vector<Case>{{"cpu-10gbe.json", 16, ""},
                                         {"cpu-10gbe.json", 16, "oversubscribed"},
                                         {"dgx-a100.json", 4, ""},
                                         {"v100-nvlink-edr.json", 4, ""},
                                         {"cpu-25gbe.json", 16, "torus"}}) {
    ClusterSpec spec = load_cluster_file(dir + c.file);
    spec.nodes = c.nodes;
    if (c.fabric_change == "oversubscribed") {
      spec.fabric.kind = FabricKind::fat_tree;
      spec.fabric.radix = 8;
      spec.fabric.oversubscription = 4;
      spec.fabric.levels = 0;
      spec.fabric.link = spec.node.nic;
    } else if (c.fabric_change == "torus") {
      spec.fabric.kind = FabricKind::torus;
      spec.fabric.dimensions = {4, 4};
      spec.fabric.endpoints_per_switch = 1;
      spec.fabric.link = spec.node.nic;
    }
    const Topology topology(spec);
    const std::vector<int> placement = place_positions(topology, Placement::block, RankOrder::topology);
    for (const std::string& algorithm : allreduce_algorithms) {
      for (std::uint64_t bytes : {4096ULL, 16000000ULL}) {
        CAPTURE(c.file, c.fabric_change, algorithm, bytes);
        // ps as predict runs it: a server on the first accelerator of a node
        const Schedule s =
            build(algorithm, topology.accelerators(), bytes, spec.node.accelerators, false, spec.node.accelerators);
        SimGridOptions sg;
        sg.topology = &topology;
        sg.accelerator_of = placement;
        FlowOptions fo;
        fo.topology = &topology;
        fo.accelerator_of = placement;
        const double simgrid = run_simgrid(s, sg).time_s;
        const double flow = run_flow(s, fo).time_s;
        CHECK(rel_diff(flow, simgrid) < 0.01);
        if (algorithm == "ring" || algorithm == "hierarchical") {  // compact: rotations in rounds
          const Schedule compact = build(algorithm, topology.accelerators(), bytes, spec.node.accelerators, true);
          CHECK(rel_diff(run_flow(compact, fo).time_s, simgrid) < 0.01);
        }
      }
    }
  }
}

TEST_CASE("the flow executor applies calibrated factors as SimGrid's callbacks do") {
  SimGridOptions sg;
  sg.cost.alpha_s = 5e-6;
  sg.factors = {{0, 3.0, 0.5}, {65536, 1.5, 0.8}, {4194304, 1.0, 0.95}};
  FlowOptions fo;
  fo.cost = sg.cost;
  fo.factors = sg.factors;
  for (const std::string& algorithm : {std::string("ring"), std::string("butterfly"), std::string("ps")}) {
    for (std::uint64_t bytes : {1000ULL, 1000000ULL, 64000000ULL}) {
      CAPTURE(algorithm, bytes);
      const Schedule s = build(algorithm, 8, bytes);
      CHECK(rel_diff(run_flow(s, fo).time_s, run_simgrid(s, sg).time_s) < 1e-6);
    }
  }
}

TEST_CASE("messages of one route moving at once share its links as SimGrid shares them, one by one") {
  // rank 0 sends three messages of different sizes to rank 1 at once (one route, filled as one group while their
  // bandwidth factors are alike), rank 2 and rank 3 one each into rank 1 as well; then rank 0 two more to rank 2
  const std::vector<std::uint64_t> sizes{1'000'000, 2'000'000, 3'000'000, 1'500'000, 500'000, 40'000, 2'500'000};
  std::vector<Chunk> chunks;
  std::uint64_t offset = 0;
  for (const std::uint64_t size : sizes) {
    chunks.push_back(Chunk{offset, size});
    offset += size;
  }
  ScheduleBuilder b(Collective::broadcast, "one route at once", 4, offset, chunks);
  b.begin_rank(0);
  b.begin_step();
  for (std::uint32_t c : {0U, 1U, 2U})
    b.add(Op::send(1, c));
  b.begin_step();
  b.add(Op::send(2, 5));
  b.add(Op::send(2, 6));
  b.begin_rank(1);
  b.begin_step();
  for (std::uint32_t c : {0U, 1U, 2U})
    b.add(Op::recv_copy(0, c));
  b.add(Op::recv_copy(2, 3));
  b.add(Op::recv_copy(3, 4));
  b.begin_rank(2);
  b.begin_step();
  b.add(Op::send(1, 3));
  b.begin_step();
  b.add(Op::recv_copy(0, 5));
  b.add(Op::recv_copy(0, 6));
  b.begin_rank(3);
  b.begin_step();
  b.add(Op::send(1, 4));
  const Schedule s = b.finish();
  for (const bool factors : {false, true}) {  // (with factors: the first three differ in bandwidth factor)
    CAPTURE(factors);
    SimGridOptions sg;
    sg.cost.alpha_s = 3e-6;
    if (factors) sg.factors = {{0, 2.0, 0.6}, {1'200'000, 1.0, 0.9}};
    FlowOptions fo;
    fo.cost = sg.cost;
    fo.factors = sg.factors;
    fo.pad_chunks_within = 0;  // every message timed at its own size, as SimGrid does
    fo.pad_chunks_bytes = 0;
    const ExecutionResult a = run_simgrid(s, sg);
    const ExecutionResult f = run_flow(s, fo);
    REQUIRE(f.rank_finish_s.size() == 4);
    for (std::size_t r = 0; r < 4; ++r) {
      CAPTURE(r, f.rank_finish_s[r], a.rank_finish_s[r]);
      CHECK(rel_diff(f.rank_finish_s[r], a.rank_finish_s[r]) < 1e-6);
    }
  }
  // without latency or factors, by hand: rank 1's downlink carries five messages at once (B/5 each) until rank 3's
  // 0.5 MB has arrived, then four (B/4), ...: it is never idle, and rank 0's 3 MB message is the last of the 8 MB to
  // arrive; then rank 0's 40 kB and 2.5 MB share its uplink into rank 2
  FlowOptions plain;
  plain.cost.alpha_s = 0;
  plain.pad_chunks_within = 0;
  plain.pad_chunks_bytes = 0;
  const ExecutionResult p = run_flow(s, plain);
  const double into_1 = (1'000'000 + 2'000'000 + 3'000'000 + 1'500'000 + 500'000) / plain.cost.bandwidth_Bps;
  CHECK(p.rank_finish_s[1] == Approx(into_1).epsilon(1e-9));
  CHECK(p.rank_finish_s[0] == Approx(into_1 + (40'000 + 2'500'000) / plain.cost.bandwidth_Bps).epsilon(1e-9));
  CHECK(p.rank_finish_s[2] == Approx(into_1 + (40'000 + 2'500'000) / plain.cost.bandwidth_Bps).epsilon(1e-9));
}

TEST_CASE("the flow executor shares a link max-min: two transfers into one receiver take twice as long") {
  FlowOptions fo;
  fo.cost.alpha_s = 0;
  const Schedule direct = build("direct", 3, 3000000);  // every rank sends two messages and receives two at once
  const ExecutionResult r = run_flow(direct, fo);
  // each rank's uplink and downlink carry two 1 MB messages at once: 2 MB / bandwidth per phase, two phases
  CHECK(r.time_s == Approx(2 * 2e6 / fo.cost.bandwidth_Bps + 2 * 1e6 / fo.cost.reduce_Bps).epsilon(1e-9));
}

TEST_CASE("auto picks SimGrid up to the documented rank count and flow above, and run memory is estimated up front") {
  CHECK(auto_backend(auto_flow_above_ranks) == Backend::simgrid);
  CHECK(auto_backend(auto_flow_above_ranks + 1) == Backend::flow);
  const Schedule full = build("ring", 1024, 100000000);
  const Schedule compact = build("ring", 1024, 100000000, 1, true);
  // the full ring holds 4P(P-1) ops of 8 bytes: 33.5 MB at 1024 ranks
  CHECK(estimated_run_bytes(full, RunMemory::simgrid) > full.op_count() * sizeof(Op));
  CHECK(estimated_run_bytes(full, RunMemory::simgrid) > estimated_run_bytes(full, RunMemory::flow));
  CHECK(estimated_run_bytes(compact, RunMemory::flow) < estimated_run_bytes(full, RunMemory::flow));
  // SimGrid and the analytical executor expand the compact schedule: they hold as much as for the full one
  CHECK(estimated_run_bytes(compact, RunMemory::simgrid) == estimated_run_bytes(full, RunMemory::simgrid));
  CHECK(estimated_run_bytes(compact, RunMemory::analytical) == estimated_run_bytes(full, RunMemory::analytical));
  CHECK(executed_op_count(compact, RunMemory::simgrid) == full.op_count());
  CHECK(executed_op_count(compact, RunMemory::flow) == compact.op_count());
  // direct keeps a channel per pair of ranks: more than the ring for the same op count
  const Schedule direct = build("direct", 256, 1000000);
  const Schedule ring = build("ring", 256, 1000000);
  CHECK(direct.op_count() == ring.op_count());
  CHECK(estimated_run_bytes(direct, RunMemory::simgrid) > estimated_run_bytes(ring, RunMemory::simgrid));
  CHECK(available_memory_bytes() > 0);
}

TEST_CASE("a real payload's memory is every rank's buffer, its largest step's copies and the check's sums") {
  // the ring of 8 ranks over 1 MB: 8 buffers of 1 MB, each rank sends one chunk of 125 KB a step, and the check sums
  // a chunk in doubles (twice its bytes)
  const Schedule ring = build("ring", 8, 1000000);
  CHECK(estimated_payload_bytes(ring) == 8 * 1000000 + 8 * 125000 + 2 * 125000);
  CHECK(estimated_run_bytes(ring, RunMemory::simgrid, true) ==
        estimated_run_bytes(ring, RunMemory::simgrid) + estimated_payload_bytes(ring));
  // direct sends every other rank its chunk in one step: 7 chunks in flight per rank
  const Schedule direct = build("direct", 8, 1000000);
  CHECK(estimated_payload_bytes(direct) == 8 * 1000000 + 8 * 7 * 125000 + 2 * 125000);
  // 64 ranks x 1 TB: far beyond any machine, and no overflow
  const Schedule huge = build("ring", 64, 1000000000000ULL);
  CHECK(estimated_payload_bytes(huge) > 64 * 1000000000000ULL);
}

TEST_CASE("SimGrid's actor limit comes from the kernel's memory mappings, two an actor") {
  const int limit = simgrid_actor_limit();
  CHECK(limit > 1000);  // 65530 mappings by default: about 32,000 actors
  CHECK_NOTHROW(check_simgrid_actors(limit));
  CHECK_THROWS_WITH(check_simgrid_actors(limit + 1),
                    Catch::Contains("actors are above this machine's limit") && Catch::Contains("vm.max_map_count"));
  // run_simgrid refuses such a schedule before it forks
  const Schedule tree = build("tree", limit + 1, 1000);
  CHECK_THROWS_AS(run_simgrid(tree, SimGridOptions{}), std::invalid_argument);
}

TEST_CASE("skipping the periods of a pipeline that is not in lockstep gives the times of simulating every step") {
  // DGX A100 nodes: NVLink inside, one NIC per GPU between nodes; a ring's ranks end their steps at different times,
  // but after a transient the state repeats every step shifted in time
  const DgxA100 cluster(64);
  const Topology& topology = cluster.topology;
  FlowOptions fo = cluster.options;
  fo.rounds = false;  // the drifting pipeline that rounds would avoid
  const Schedule s = build("ring", topology.accelerators(), 100000000, 8, true);
  const ExecutionResult skipped = run_flow(s, fo);
  fo.skip_repeats = false;
  const ExecutionResult every = run_flow(s, fo);
  CHECK(skipped.skipped_steps > 500);  // of 1022 steps
  CHECK(every.skipped_steps == 0);
  CHECK(rel_diff(skipped.time_s, every.time_s) < 1e-9);
  CHECK(skipped.messages == every.messages);
  CHECK(skipped.bytes_sent == every.bytes_sent);
  for (std::size_t r = 0; r < every.rank_finish_s.size(); r += 37)
    CHECK(rel_diff(skipped.rank_finish_s[r], every.rank_finish_s[r]) < 1e-9);
}

TEST_CASE("a tree's pipeline is stored once per rank and runs as its written-out steps: no rounds") {
  // the steady state of a pipelined tree (every op of a rank's step active) is one stored step repeated; its ranks
  // work on different segments at once, so the flow engine must not run the repetitions in rounds (that made a
  // 4096-rank pipelined tree 45% slower than its written-out form)
  const DgxA100 cluster(8);
  const Topology& topology = cluster.topology;
  FlowOptions fo = cluster.options;
  for (const std::string algorithm : {"pipelined-tree", "dbtree", "chain-dbtree"}) {
    CAPTURE(algorithm);
    const Schedule compact = build(algorithm, topology.accelerators(), 64000000, 8, true);
    const Schedule full = expand(compact);
    REQUIRE(compact.compact());
    CHECK(compact.ops.size() < full.ops.size());
    CHECK(std::none_of(compact.repeats.begin(), compact.repeats.end(), [](const StepRepeat& r) { return r.lockstep; }));
    const ExecutionResult a = run_flow(compact, fo), b = run_flow(full, fo);
    CHECK(rel_diff(a.time_s, b.time_s) < 1e-9);
    CHECK(a.messages == b.messages);
    CHECK(a.bytes_sent == b.bytes_sent);
  }
}

TEST_CASE("rotations in rounds give the times of free-running ranks at a fraction of the events") {
  // ring steps take unequal times (NVLink inside a node, a NIC or PCIe between nodes, longer routes between leaves):
  // free-running ranks drift apart; in rounds they wait for the slowest, as they would a step later anyway
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/";
  for (const auto& [file, nodes] :
       std::vector<std::pair<std::string, int>>{{"v100-nvlink-edr.json", 64}, {"dgx-a100.json", 16}}) {
    ClusterSpec spec = load_cluster_file(dir + file);
    spec.nodes = nodes;
    const Topology topology(spec);
    FlowOptions fo;
    fo.topology = &topology;
    fo.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
    for (const std::string algorithm : {"ring", "hierarchical"}) {
      for (std::uint64_t bytes : {1000000ULL, 25000000ULL}) {
        CAPTURE(file, algorithm, bytes);
        const Schedule s = build(algorithm, topology.accelerators(), bytes, spec.node.accelerators, true);
        const ExecutionResult rounds = run_flow(s, fo);
        fo.rounds = false;
        const ExecutionResult free = run_flow(s, fo);
        fo.rounds = true;
        CHECK(rel_diff(rounds.time_s, free.time_s) < (algorithm == "ring" ? 1e-9 : 0.02));
        CHECK(rounds.bytes_sent == free.bytes_sent);
        CHECK(rounds.event_batches * 4 < free.event_batches);
      }
    }
  }
}

TEST_CASE("links left out of the routes because they constrain nothing leave every time unchanged") {
  for (const auto& [file, nodes, oversubscription] : std::vector<std::tuple<std::string, int, double>>{
           {"v100-nvlink-edr.json", 24, 1}, {"dgx-a100.json", 6, 1}, {"cpu-10gbe.json", 24, 3}}) {
    const ClusterSpec spec = test::fat_tree_cluster(file, nodes, 8, oversubscription);
    const Topology topology(spec);
    FlowOptions fo;
    fo.topology = &topology;
    fo.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
    fo.lump_ranks = false;  // (classes of ranks do not prune: compare the full executor with itself)
    for (const std::string algorithm : {"ring", "butterfly", "ps", "rabenseifner", "hierarchical"}) {
      CAPTURE(file, algorithm);
      const Schedule s = build(algorithm, topology.accelerators(), 8000000, spec.node.accelerators);
      fo.prune_links = true;
      const ExecutionResult pruned = run_flow(s, fo);
      fo.prune_links = false;
      const ExecutionResult all = run_flow(s, fo);
      CHECK(rel_diff(pruned.time_s, all.time_s) < 1e-9);
      for (std::size_t r = 0; r < all.rank_finish_s.size(); r += 5)
        CHECK(rel_diff(pruned.rank_finish_s[r], all.rank_finish_s[r]) < 1e-9);
    }
  }
}

TEST_CASE("simulating one rank per class of ranks that run alike gives every rank the time of simulating them all") {
  // Fat-trees with partly filled leaves and three levels (radix 8), oversubscribed, a torus, DGX nodes, the star with
  // calibrated factors: every algorithm whose schedule is not compact, with and without lumping, every rank compared.
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/";
  struct Case {
    std::string file;
    int nodes;
    int radix;  // 0: the file's fabric; -1: a 4x4 torus
    double oversubscription;
  };
  int lumped_cases = 0, cases = 0;
  for (const Case& c : std::vector<Case>{{"v100-nvlink-edr.json", 40, 8, 1},
                                         {"v100-nvlink-edr.json", 9, 0, 1},
                                         {"dgx-a100.json", 6, 8, 1},
                                         {"cpu-10gbe.json", 26, 8, 3},
                                         {"cpu-25gbe.json", 16, -1, 1},
                                         {"", 24, 0, 1}}) {
    std::unique_ptr<Topology> topology;
    FlowOptions fo;
    int ranks = c.nodes, per_node = 1;
    if (!c.file.empty()) {
      ClusterSpec spec = load_cluster_file(dir + c.file);
      spec.nodes = c.nodes;
      if (c.radix > 0) {
        spec.fabric.kind = FabricKind::fat_tree;
        spec.fabric.radix = c.radix;
        spec.fabric.levels = 0;
        spec.fabric.oversubscription = c.oversubscription;
      } else if (c.radix < 0) {
        spec.fabric.kind = FabricKind::torus;
        spec.fabric.dimensions = {4, 4};
        spec.fabric.endpoints_per_switch = 1;
        spec.fabric.link = spec.node.nic;
      }
      topology = std::make_unique<Topology>(spec);
      fo.topology = topology.get();
      fo.accelerator_of = place_positions(*topology, Placement::block, RankOrder::topology);
      ranks = topology->accelerators();
      per_node = spec.node.accelerators;
    } else {
      fo.cost.alpha_s = 3e-6;
      fo.factors = {{0, 3.0, 0.5}, {65536, 1.5, 0.8}, {4194304, 1.0, 0.95}};
    }
    for (const std::string& algorithm : allreduce_algorithms) {
      for (std::uint64_t bytes : {4096ULL, 8000000ULL}) {
        CAPTURE(c.file, c.nodes, algorithm, bytes);
        const Schedule s = build(algorithm, ranks, bytes, per_node, false, per_node);
        fo.lump_ranks = true;
        const ExecutionResult lumped = run_flow(s, fo);
        fo.lump_ranks = false;
        const ExecutionResult every = run_flow(s, fo);
        CHECK(every.rank_classes == 0);
        CHECK(rel_diff(lumped.time_s, every.time_s) < 1e-9);
        CHECK(lumped.messages == every.messages);
        CHECK(lumped.bytes_sent == every.bytes_sent);
        REQUIRE(lumped.rank_finish_s.size() == every.rank_finish_s.size());
        for (std::size_t r = 0; r < every.rank_finish_s.size(); ++r)
          CHECK(rel_diff(lumped.rank_finish_s[r], every.rank_finish_s[r]) < 1e-9);
        ++cases;
        if (lumped.rank_classes > 0) ++lumped_cases;
        // ps with a server per node, and direct, are symmetric enough on the fat-trees and the star (the torus'
        // dimension-order routes tie-break by destination, so its ranks mostly differ)
        if ((algorithm == "ps" || algorithm == "direct") && c.radix >= 0) CHECK(lumped.rank_classes > 0);
        if (lumped.rank_classes > 0) CHECK(lumped.rank_classes <= std::max<std::uint64_t>(16, ranks / 16));
      }
    }
  }
  CHECK(lumped_cases * 3 >= cases);  // (at least a third of them lumped: the check above is not vacuous)
}

TEST_CASE("training steps on classes of ranks take the times of training steps on every rank") {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/v100-nvlink-edr.json");
  spec.nodes = 24;
  spec.fabric.radix = 8;  // partly filled leaves
  const Topology topology(spec);
  FlowOptions fo;
  fo.topology = &topology;
  fo.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  const int ranks = topology.accelerators();
  for (const std::string algorithm : {"ps", "butterfly", "direct"}) {
    CAPTURE(algorithm);
    TrainingProgram program;
    program.forward_s = {1e-3, 2e-3, 1e-3};
    program.backward_s = {2e-3, 4e-3, 2e-3};
    program.optimizer_s = 5e-4;
    program.bucket_ready_after = {2, 0};
    program.buckets.push_back(build(algorithm, ranks, 6000000, 4, false, 4));
    program.buckets.push_back(build(algorithm, ranks, 2000000, 4, false, 4));
    program.batch_s = 3e-3;
    fo.lump_ranks = true;
    const TrainingResult lumped = run_flow_training(program, ranks, fo);
    fo.lump_ranks = false;
    const TrainingResult every = run_flow_training(program, ranks, fo);
    CHECK(lumped.rank_classes > 0);
    CHECK(every.rank_classes == 0);
    CHECK(rel_diff(lumped.step_s, every.step_s) < 1e-9);
    CHECK(rel_diff(lumped.exposed_comm_s, every.exposed_comm_s) < 1e-9);
    CHECK(rel_diff(lumped.comm_s, every.comm_s) < 1e-9);
    CHECK(std::fabs(lumped.input_stall_s - every.input_stall_s) < 1e-12);
  }
  // a cluster without a placement is refused, not read out of range
  TrainingProgram program;
  program.forward_s = program.backward_s = {1e-3};
  program.bucket_ready_after = {0};
  program.buckets.push_back(build("ps", ranks, 1000000, 4, false, 4));
  fo.accelerator_of.clear();
  CHECK_THROWS_AS(run_flow_training(program, ranks, fo), std::invalid_argument);
}

TEST_CASE("classes of ranks run steps with nothing to wait for, and compute steps, as every rank does") {
  // direct on 8 ranks with two steps added to every rank after its first: one computing nothing (the rank is ready
  // again at once, in the same instant) and one computing 5e8 flops
  Schedule s = build("direct", 8, 8000000);
  s.compute_flops = {0.0, 5e8};
  std::vector<Op> ops;
  std::vector<std::uint64_t> begin;
  for (int r = 0; r < s.ranks; ++r) {
    begin.push_back(ops.size());
    const auto rank_ops = s.rank_ops(r);
    for (std::size_t i = 0; i < rank_ops.size(); ++i) {
      if (i > 0 && rank_ops[i].starts_step() && ops.size() - begin.back() == i) {
        Op nothing = Op::compute(0), work = Op::compute(1);
        nothing.mark_step_start();
        work.mark_step_start();
        ops.push_back(nothing);
        ops.push_back(work);
      }
      ops.push_back(rank_ops[i]);
    }
  }
  begin.push_back(ops.size());
  s.ops = ops;
  s.rank_begin = begin;
  FlowOptions fo;
  fo.compute_flops_per_s = 1e12;
  const ExecutionResult lumped = run_flow(s, fo);
  fo.lump_ranks = false;
  const ExecutionResult every = run_flow(s, fo);
  CHECK(lumped.rank_classes == 1);
  CHECK(rel_diff(lumped.time_s, every.time_s) < 1e-9);
  CHECK(every.time_s > 5e8 / 1e12);  // the compute step counts
  for (std::size_t r = 0; r < every.rank_finish_s.size(); ++r)
    CHECK(rel_diff(lumped.rank_finish_s[r], every.rank_finish_s[r]) < 1e-9);
}

TEST_CASE("SimGrid's time is estimated from the messages before a run, compact repetitions counted") {
  // a ring sends 2(P-1) messages a rank; the compact form stores its rotating steps once
  for (int ranks : {64, 8192}) {
    CAPTURE(ranks);
    const Schedule compact = build("ring", ranks, 100000000, 1, true);
    REQUIRE(compact.compact());
    const double messages = 2.0 * ranks * (ranks - 1);
    const double each = 2.5e-6 + 0.6e-9 * ranks;  // a ring step: one send a rank, P in flight
    CHECK(estimated_simgrid_seconds(compact) == Approx(messages * each));
    if (ranks == 64) CHECK(estimated_simgrid_seconds(build("ring", ranks, 100000000)) == Approx(messages * each));
  }
  // direct sends P-1 messages a rank at once: P(P-1) in flight, so SimGrid slows with them (measured at 512 ranks: 88
  // s)
  const double direct = 2.0 * 512 * 511;
  CHECK(estimated_simgrid_seconds(build("direct", 512, 64000000)) == Approx(direct * (2.5e-6 + 0.6e-9 * 512 * 511)));
  // a parameter server of 64 ranks and 20,000 shards (ran over 10 minutes) is refused; one of 250 shards (0.4 s) not
  AlgorithmOptions servers;
  servers.set("servers", std::uint64_t{20000});
  CHECK(estimated_simgrid_seconds(find_algorithm("ps").build(64, 64000000, servers)) > simgrid_time_limit_s);
  servers.set("servers", std::uint64_t{250});
  CHECK(estimated_simgrid_seconds(find_algorithm("ps").build(64, 64000000, servers)) < 1);
  // 8192 ranks: 134 million messages, above the limit that collective and compare refuse without --force
  CHECK(estimated_simgrid_seconds(build("ring", 8192, 100000000, 1, true)) > simgrid_time_limit_s);
}

TEST_CASE("on the star, positions placed on one host share its link, on every engine") {
  // positions 0 and 1 each send to a host of their own at once
  ScheduleBuilder b(Collective::broadcast, "two messages", 4, 4'000'000, buffer_chunks(4'000'000, 1, 4));
  for (int r = 0; r < 4; ++r) {
    b.begin_rank(r);
    b.begin_step();
    if (r < 2) b.add(Op::send(r + 2, 0));
    if (r >= 2) b.add(Op::recv_copy(r - 2, 0));
  }
  const Schedule s = b.finish();
  NetworkCost apart;
  apart.cost.alpha_s = 0;
  apart.cost.bandwidth_Bps = 1e9;
  NetworkCost together = apart;
  together.accelerator_of = {0, 0, 1, 2};
  const double alone_s = 4'000'000 / 1e9;
  CHECK(run_flow(s, FlowOptions(apart)).time_s == Approx(alone_s).epsilon(1e-9));
  CHECK(run_flow(s, FlowOptions(together)).time_s == Approx(2 * alone_s).epsilon(1e-9));
  CHECK(run_simgrid(s, SimGridOptions(apart)).time_s == Approx(alone_s).epsilon(0.01));
  CHECK(run_simgrid(s, SimGridOptions(together)).time_s == Approx(2 * alone_s).epsilon(0.01));
  NetworkCost wrong = together;
  wrong.accelerator_of = {0, 0, 1};
  CHECK_THROWS_WITH(run_flow(s, FlowOptions(wrong)), Catch::Contains("has 4 ranks but 3 are placed"));
  CHECK_THROWS_WITH(run_simgrid(s, SimGridOptions(wrong)), Catch::Contains("4 ranks but 3 are placed on the star"));
}
