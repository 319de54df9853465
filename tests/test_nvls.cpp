// NVLS (algorithms/nvls.hpp): NCCL's allreduce through an NVSwitch that reduces in flight, on a cluster whose file
// says its switch can (node.intra.nvls).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "algorithms/nvls.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "cluster_helpers.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

double rel_diff(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

ClusterSpec h100(int nodes, bool nvls = true) {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-h100.json");
  spec.nodes = nodes;
  spec.node.nvls = nvls;
  return spec;
}

}  // namespace

TEST_CASE("nvls: every rank ends with the sum, through the switch's helper position") {
  AlgorithmOptions options;
  options.set("segment-size", std::uint64_t{100000});
  for (int ranks : {1, 2, 3, 8}) {
    for (std::uint64_t bytes : {0ULL, 4ULL, 1000000ULL}) {
      CAPTURE(ranks, bytes);
      const Schedule s = nvls_allreduce(ranks, bytes, options);
      CHECK(s.participants == ranks);
      CHECK(s.ranks == ranks + 1);
      CHECK(s.switch_helpers);
      const VerifyReport report = verify(s);
      CAPTURE(report.error);
      CHECK(report.ok);
      if (bytes == 1000000) CHECK(s.compact());  // 10 segments: the pipeline's steady state stored once
    }
  }
}

TEST_CASE("nvls on an H100 node: the switch endpoint carries (1 + 1/P) n each way per GPU, and beats the ring") {
  const Topology topology(h100(1));
  REQUIRE(topology.endpoints() == 9);
  REQUIRE(topology.is_switch_endpoint(topology.switch_endpoint(0)));
  const std::uint64_t bytes = 256'000'000;
  const Schedule s = find_algorithm("nvls").build(8, bytes, AlgorithmOptions{});
  const std::vector<int> placed =
      place_switch_helpers(topology, place_positions(topology, Placement::block, RankOrder::topology), s);
  REQUIRE(placed.size() == 9);
  CHECK(placed.back() == topology.switch_endpoint(0));
  // bytes each GPU sends up to the switch: every share of every segment (n) and its reduced share back (n/8)
  std::map<int, double> up;
  const Schedule full = expand(s);
  for (int r = 0; r < 8; ++r) {
    for (const Op& op : full.rank_ops(r)) {
      if (op.kind() == OpKind::send) up[r] += static_cast<double>(full.span_bytes(op.span()));
    }
  }
  for (const auto& [rank, sent] : up)
    CHECK(rel_diff(sent, 1.125 * bytes) < 1e-9);
  // the executors that share links agree; NVLS's time is its links' (1 + 1/P) n against the ring's 2 (P-1)/P n
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = placed;
  const FlowOptions fo(network);
  const SimGridOptions sg(network);
  const double flow = run_flow(s, fo).time_s;
  CHECK(rel_diff(run_simgrid(s, sg).time_s, flow) < 1e-5);  // (SimGrid's max-min precision)
  FlowOptions ring_options = fo;
  ring_options.accelerator_of.pop_back();
  const double ring = run_flow(find_algorithm("ring").build(8, bytes, AlgorithmOptions{}), ring_options).time_s;
  CHECK(flow < ring / 1.3);
  CHECK(flow > 1.125 * bytes / topology.spec().node.intra.bandwidth_Bps);
}

TEST_CASE("nvls is refused where the switch cannot reduce or the ranks span nodes, naming why") {
  const Schedule s = find_algorithm("nvls").build(8, 1 << 20, AlgorithmOptions{});
  const Topology plain(h100(1, false));
  CHECK_THROWS_WITH(place_switch_helpers(plain, place_positions(plain, Placement::block, RankOrder::topology), s),
                    Catch::Contains("node.intra.nvls false"));
  const Topology two(h100(2));
  const Schedule sixteen = find_algorithm("nvls").build(16, 1 << 20, AlgorithmOptions{});
  CHECK_THROWS_WITH(place_switch_helpers(two, place_positions(two, Placement::block, RankOrder::topology), sixteen),
                    Catch::Contains("span nodes 0 and 1"));
  // a cluster file may not claim in-switch reduction without a switch
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-h100.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  REQUIRE(doc["cluster"]["node"]["intra"]["nvls"] == true);
  doc["cluster"]["node"]["intra"]["kind"] = "nvlink";
  CHECK_THROWS_WITH(parse_cluster(doc), Catch::Contains("node.intra.nvls: only for kind \"nvswitch\""));
}

TEST_CASE("NCCL's tuner weighs NVLS inside one H100 node: the ring for small calls, NVLS for large ones") {
  ClusterSpec spec = h100(1);
  spec.library.name = "nccl";
  spec.library.generation = GpuGeneration::hopper;
  spec.library.launch_s = 10e-6;
  const Topology topology(spec);
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  network.library = spec.library;
  auto choose = [&](std::uint64_t bytes, bool in_switch = true) {
    return choose_algorithm(Collective::allreduce, 8, bytes, AlgorithmOptions(4), network, in_switch);
  };
  CHECK(std::string(choose(64 << 10).algorithm->name) == "ring");  // NVLS's 25 us latency
  const AlgorithmChoice large = choose(256 << 20);
  CHECK(std::string(large.algorithm->name) == "nvls");
  CHECK(large.protocol == Protocol::simple);
  CHECK(large.candidates.size() == 3);
  // a training step does not run it yet: predict's choice leaves it out
  CHECK(std::string(choose(256 << 20, false).algorithm->name) != "nvls");
  // Ampere has no NVLS: a file that says so gets no NVLS candidate
  network.library.generation = GpuGeneration::ampere;
  CHECK(choose(256 << 20).candidates.size() == 2);
  // the library runs it in Simple, and refuses another protocol
  network.library.generation = GpuGeneration::hopper;
  const LibraryCallPlan plan =
      plan_library_call(find_algorithm("nvls"), 8, AlgorithmOptions(4), 256 << 20, network, true, Protocol::none, true);
  CHECK(plan.schedule.protocol == Protocol::simple);
  CHECK(plan.accelerator_of.size() == 9);
  // in segments of what NCCL has in flight: 16 channels of 128 KiB chunks (64 KiB below 128 MiB)
  CHECK(nvls_step_bytes(256 << 20) == 16 * 131072);
  CHECK(nvls_step_bytes(16 << 20) == 16 * 65536);
  CHECK(nvls_step_bytes(1 << 20) == 16 * 32768);
  CHECK(nvls_step_bytes(512 << 10) == 16 * 16384);
  CHECK(plan.schedule.chunks.size() == 8 * 128);  // 256 MiB in 2 MiB steps, 8 shares each
  CHECK_THROWS_AS(
      plan_library_call(find_algorithm("nvls"), 8, AlgorithmOptions(4), 1 << 20, network, false, Protocol::ll, true),
      OptionError);
}
