// All-pairs algorithms (direct allreduce, direct all-to-all) described without their P x P operations, and run in
// classes of ranks found from the cluster's symmetry: the same Schedule written out, and the same times as the full
// flow engine where the cluster is symmetric.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/direct.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "cluster_helpers.hpp"
#include "rel_diff.hpp"
#include "run_dtsim.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

AllPairs pairs_of(Collective collective, int ranks, std::uint64_t bytes) {
  return collective == Collective::alltoall ? direct_alltoall_pairs(ranks, bytes)
                                            : direct_allreduce_pairs(ranks, bytes);
}

// The full flow engine on the written-out schedule (every rank, no classes) against the all-pairs classes.
std::pair<ExecutionResult, ExecutionResult> both(const AllPairs& pairs, FlowOptions fo) {
  fo.lump_ranks = false;
  const ExecutionResult full = run_flow(build_all_pairs(pairs), fo);
  fo.lump_ranks = true;
  const ExecutionResult classes = run_flow_all_pairs(pairs, fo);
  return {full, classes};
}

// Both ways on `spec`, ranks placed block by block in topology order.
std::pair<ExecutionResult, ExecutionResult> both_on(const ClusterSpec& spec, Collective collective,
                                                    std::uint64_t bytes) {
  const Topology topology(spec);
  FlowOptions fo;
  fo.topology = &topology;
  fo.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  return both(pairs_of(collective, topology.accelerators(), bytes), fo);
}

double largest_rank_difference(const ExecutionResult& a, const ExecutionResult& b) {
  double worst = 0;
  for (std::size_t r = 0; r < a.rank_finish_s.size(); ++r)
    worst = std::max(worst, rel_diff(a.rank_finish_s[r], b.rank_finish_s[r]));
  return worst;
}

}  // namespace

TEST_CASE("an all-pairs description counts what its written-out schedule holds, and the schedule is valid") {
  for (const Collective collective : {Collective::allreduce, Collective::alltoall}) {
    for (const int ranks : {1, 2, 5, 16}) {
      for (const std::uint64_t bytes : {0ULL, 4ULL, 400ULL, 4004ULL, 1000000ULL}) {
        CAPTURE(to_string(collective), ranks, bytes);
        const AllPairs pairs = pairs_of(collective, ranks, bytes);
        const Schedule s = build_all_pairs(pairs);
        CHECK(verify(s).ok);
        CHECK(pairs.op_count() == s.op_count());
        CHECK(pairs.messages() == expanded_send_count(s));
        std::uint64_t sent = 0;
        for (int r = 0; r < ranks; ++r)
          sent += rank_traffic(s, r).sent_bytes;
        CHECK(pairs.bytes_sent() == sent);
        if (!s.chunks.empty()) {
          CHECK(pairs.chunk_count() == s.chunks.size());
          std::uint64_t smallest = s.chunks.front().size_bytes, largest = smallest;
          for (const Chunk& c : s.chunks) {
            smallest = std::min(smallest, c.size_bytes);
            largest = std::max(largest, c.size_bytes);
          }
          CHECK(pairs.smallest_chunk_bytes() == smallest);
          CHECK(pairs.largest_chunk_bytes() == largest);
        }
      }
    }
  }
}

TEST_CASE("an all-pairs algorithm in classes gives every rank the full flow engine's time on symmetric networks") {
  SECTION("the star, with and without per-message gaps") {
    for (const double gap_s : {0.0, 2e-6}) {
      for (const Collective collective : {Collective::allreduce, Collective::alltoall}) {
        for (const std::uint64_t bytes : {4096ULL, 64000000ULL}) {
          CAPTURE(gap_s, to_string(collective), bytes);
          FlowOptions fo;
          fo.cost.gap_s = gap_s;
          const auto [full, classes] = both(pairs_of(collective, 64, bytes), fo);
          CHECK(classes.rank_classes == 1);
          CHECK(rel_diff(full.time_s, classes.time_s) < 1e-9);
          CHECK(largest_rank_difference(full, classes) < 1e-9);
          CHECK(full.messages == classes.messages);
          CHECK(full.bytes_sent == classes.bytes_sent);
        }
      }
    }
  }
  SECTION("fat-trees whose leaves are all full") {
    // (radix 8: 4 ports a leaf; dgx-a100's 8 NICs a node fill 2 leaves a node; the EDR cluster's 1 NIC, 4 nodes a leaf)
    for (const auto& [file, nodes, oversubscription] : std::vector<std::tuple<std::string, int, double>>{
             {"dgx-a100.json", 4, 1}, {"v100-nvlink-edr.json", 16, 1}, {"cpu-10gbe.json", 16, 2}}) {
      const ClusterSpec spec = test::fat_tree_cluster(file, nodes, 8, oversubscription);
      for (const Collective collective : {Collective::allreduce, Collective::alltoall}) {
        CAPTURE(file, to_string(collective));
        const auto [full, classes] = both_on(spec, collective, 256000000);
        CHECK(classes.rank_classes < static_cast<std::uint64_t>(spec.accelerators()));
        CHECK(rel_diff(full.time_s, classes.time_s) < 1e-9);
        CHECK(largest_rank_difference(full, classes) < 1e-9);
      }
    }
  }
}

TEST_CASE("an all-pairs algorithm in classes on fat-trees with partly filled leaves stays near the full engine") {
  // A partly filled leaf makes D-mod-k routing load some uplinks of a class more than others (13 ports, uplink = port
  // mod 4: uplink 0 takes 4 destinations, the others 3), which the classes average: measured up to 5.5% fast where
  // the fabric is the bottleneck (the EDR cluster on 21 nodes, 2:1 oversubscribed), exact where the NICs are.
  for (const auto& [file, nodes, radix, oversubscription] :
       std::vector<std::tuple<std::string, int, int, double>>{{"v100-nvlink-edr.json", 13, 8, 1},
                                                              {"v100-nvlink-edr.json", 21, 8, 2},
                                                              {"cpu-10gbe.json", 29, 8, 4},
                                                              {"dgx-a100.json", 6, 40, 1},
                                                              {"dgx-a100.json", 5, 8, 1},
                                                              {"cpu-10gbe.json", 37, 12, 3}}) {
    const ClusterSpec spec = test::fat_tree_cluster(file, nodes, radix, oversubscription);
    for (const Collective collective : {Collective::allreduce, Collective::alltoall}) {
      for (const std::uint64_t bytes : {4096000ULL, 256000000ULL}) {
        CAPTURE(file, nodes, radix, oversubscription, to_string(collective), bytes);
        const auto [full, classes] = both_on(spec, collective, bytes);
        CHECK(classes.rank_classes < static_cast<std::uint64_t>(spec.accelerators()));
        CHECK(rel_diff(classes.time_s, full.time_s) < 0.06);
        CHECK(largest_rank_difference(classes, full) < 0.06);
        CHECK(classes.time_s <= full.time_s * (1 + 1e-9));  // (the busiest uplink's load averaged down, never up)
      }
    }
  }
  // and the built-in dgx-a100 on 11 nodes (88 NICs on its radix-40 fabric's leaves of 20)
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-a100.json");
  spec.nodes = 11;
  for (const Collective collective : {Collective::allreduce, Collective::alltoall}) {
    CAPTURE(to_string(collective));
    const auto [full, classes] = both_on(spec, collective, 256000000);
    CHECK(rel_diff(classes.time_s, full.time_s) < 0.06);
    CHECK(classes.time_s <= full.time_s * (1 + 1e-9));
  }
}

TEST_CASE("dtsim collective runs an all-to-all and a direct allreduce of 16384 GPUs in classes") {
  for (const std::string collective : {"all-to-all", "allreduce"}) {
    CAPTURE(collective);
    const test::Run run = test::run_dtsim("collective --cluster dgx-a100 --nodes 2048 --collective " + collective +
                                          " --algorithm direct --bytes 1TB --json");
    REQUIRE(run.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(run.output);
    CHECK(j["ranks"] == 16384);
    CHECK(j["messages"].get<double>() == (collective == "allreduce" ? 2.0 : 1.0) * 16384.0 * 16383.0);
    CHECK(j["sim_rank_classes"].get<int>() <= 16);
    CHECK(j["time_s"].get<double>() > 16383 * 0.3e-6);  // (at least every message's gap, one after another)
  }
}

TEST_CASE("an all-pairs algorithm in classes runs in the collective library's protocol as its schedule would") {
  ClusterSpec spec = test::fat_tree_cluster("dgx-a100.json", 4, 8);
  spec.library.name = "nccl";
  spec.library.generation = GpuGeneration::ampere;
  spec.library.launch_s = 10e-6;
  const Topology topology(spec);
  FlowOptions fo;
  fo.topology = &topology;
  fo.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  fo.library = spec.library;
  const int ranks = topology.accelerators();
  for (const Collective collective : {Collective::allreduce, Collective::alltoall}) {
    for (const std::uint64_t bytes : {4096ULL, 1000004ULL, 64000000ULL, 4000000000ULL}) {
      CAPTURE(to_string(collective), bytes);
      const AllPairs pairs = pairs_of(collective, ranks, bytes);
      // the tuner sees the same call without the messages
      const LibraryCall symbolic = library_call(fo, pairs);
      const LibraryCall written = library_call(fo, build_all_pairs(pairs));
      CHECK(symbolic.nodes == written.nodes);
      CHECK(symbolic.steps == written.steps);
      CHECK(symbolic.wire_bytes == written.wire_bytes);
      CHECK(symbolic.hop == written.hop);
      CHECK(symbolic.bandwidth_Bps == written.bandwidth_Bps);
      for (std::size_t h = 0; h < 3; ++h)
        CHECK(symbolic.hop_share[h] == Approx(written.hop_share[h]).epsilon(1e-12));
      // and the call, as the library lays it, runs as in full
      const LibraryCallPlan plan =
          plan_library_call(find_algorithm("direct", collective), ranks, {}, bytes, fo, true, Protocol::none, true);
      const Protocol protocol = choose_protocol(fo.library, symbolic);
      CHECK(plan.schedule.protocol == protocol);
      CHECK(plan.channels == 1);
      FlowOptions full = fo;
      full.accelerator_of = plan.accelerator_of;
      full.lump_ranks = false;
      const ExecutionResult all = run_flow(plan.schedule, full);
      const ExecutionResult classes = run_flow_all_pairs(pairs, fo, protocol);
      CHECK(rel_diff(classes.time_s, all.time_s) < 1e-9);
      CHECK(largest_rank_difference(classes, all) < 1e-9);
    }
  }
}
