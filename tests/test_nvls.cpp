// NVLS (algorithms/nvls.hpp): NCCL's allreduce through an NVSwitch that reduces in flight, on a cluster whose file
// says its switch can (node.intra.nvls).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "algorithms/nvls.hpp"
#include "algorithms/nvls_tree.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "cluster_helpers.hpp"
#include "rel_diff.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

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
  FlowOptions ring_flow = fo;
  ring_flow.accelerator_of.pop_back();
  const double ring = run_flow(find_algorithm("ring").build(8, bytes, AlgorithmOptions{}), ring_flow).time_s;
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
  test::use_nccl(spec, GpuGeneration::hopper);
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

TEST_CASE("nvls-tree: every rank ends with the sum through its node's switch and the trees between nodes") {
  for (int nodes : {1, 2, 3, 5}) {
    for (std::uint64_t per_node : {1ULL, 2ULL, 4ULL}) {
      for (std::uint64_t bytes : {0ULL, 4ULL, 1000000ULL}) {
        CAPTURE(nodes, per_node, bytes);
        AlgorithmOptions options;
        options.set("segment-size", std::uint64_t{100000});
        options.set("ranks-per-node", per_node);
        const int ranks = nodes * static_cast<int>(per_node);
        const Schedule s = nvls_tree_allreduce(ranks, bytes, options);
        CHECK(s.participants == ranks);
        CHECK(s.ranks == ranks + nodes);
        const VerifyReport report = verify(s);
        CAPTURE(report.error);
        CHECK(report.ok);
        // its closed form bounds the time of each message alone (the switches reducing in flight)
        AnalyticalOptions alone;
        alone.cost.alpha_s = 5e-6;
        alone.cost.bandwidth_Bps = 10e9;
        alone.cost.reduce_Bps = Topology::switch_reduce_Bps;
        const double closed = nvls_tree_closed_form(ranks, bytes, alone.cost, options);
        if (ranks > 1 && bytes > 0) {
          CHECK(closed > 0);
          CHECK(run_analytical(s, alone).time_s <= closed * (1 + 1e-9));
        }
      }
    }
  }
}

TEST_CASE("nvls-tree on two H100 nodes: a switch helper a node, n/G through each NIC, beyond the ring's limit") {
  const Topology topology(h100(2));
  const std::uint64_t bytes = 1'000'000'000;
  AlgorithmOptions options;
  options.set("ranks-per-node", std::uint64_t{8});
  options.set("segment-size", std::uint64_t{2} << 20);
  const Schedule s = nvls_tree_allreduce(16, bytes, options);
  const std::vector<int> placed =
      place_switch_helpers(topology, place_positions(topology, Placement::block, RankOrder::topology), s);
  REQUIRE(placed.size() == 18);
  CHECK(placed[16] == topology.switch_endpoint(0));
  CHECK(placed[17] == topology.switch_endpoint(1));
  // the bytes GPU r sends to the other node: its share's halves, once up a tree and once down the other
  const Schedule full = expand(s);
  for (int r = 0; r < 16; ++r) {
    double across = 0;
    for (const Op& op : full.rank_ops(r)) {
      if (op.kind() == OpKind::send && op.peer() < 16 && op.peer() / 8 != r / 8) {
        across += static_cast<double>(full.span_bytes(op.span()));
      }
    }
    CHECK(rel_diff(across, bytes / 8.0) < 1e-6);
  }
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = placed;
  const double flow = run_flow(s, FlowOptions(network)).time_s;
  CHECK(rel_diff(run_simgrid(s, SimGridOptions(network)).time_s, flow) < 1e-5);
  // the ring on all eight NICs moves 2 (P-1)/P n/8 through each: the NVLS tree's n/8 is under it
  const double nic_Bps = topology.spec().node.nic.bandwidth_Bps;
  CHECK(flow < 2.0 * 15 / 16 * bytes / 8 / nic_Bps);
  CHECK(flow > bytes / 8.0 / nic_Bps);
}

TEST_CASE("NCCL's tuner weighs the NVLS tree across H100 nodes: large calls take it, small ones do not") {
  ClusterSpec spec = h100(2);
  spec.library.name = "nccl";
  spec.library.generation = GpuGeneration::hopper;
  const Topology topology(spec);
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  network.library = spec.library;
  AlgorithmOptions options(4);
  options.set("ranks-per-node", std::uint64_t{8});
  auto choose = [&](std::uint64_t bytes, bool in_switch = true) {
    return choose_algorithm(Collective::allreduce, 16, bytes, options, network, in_switch);
  };
  const AlgorithmChoice large = choose(1ULL << 30);
  CHECK(std::string(large.algorithm->name) == "nvls-tree");
  CHECK(large.protocol == Protocol::simple);
  CHECK(std::string(choose(64 << 10).algorithm->name) != "nvls-tree");  // 25 + 2 x 20.9 us of latency
  CHECK(std::string(choose(1ULL << 30, false).algorithm->name) != "nvls-tree");
  // its latency: 25 us in the nodes and 20.9 us a tree level each way between them (tuning.cc)
  NvlsTreeCall c;
  c.ranks = 16;
  c.nodes = 2;
  c.link_Bps = 450e9;
  c.nics_Bps = 400e9;
  CHECK(rel_diff(estimate_nvls_tree_allreduce_seconds(spec.library, c), 25e-6 + 2 * 20.9e-6) < 1e-9);
  // a slower transport (library.net_latency_factor) stretches the network's levels only: 8 nodes, 3 levels each way
  c.ranks = 64;
  c.nodes = 8;
  CollectiveLibrary slow = spec.library;
  slow.net_latency_factor = 3;
  CHECK(rel_diff(estimate_nvls_tree_allreduce_seconds(spec.library, c), 25e-6 + 6 * 20.9e-6) < 1e-9);
  CHECK(rel_diff(estimate_nvls_tree_allreduce_seconds(slow, c), 25e-6 + 6 * 3 * 20.9e-6) < 1e-9);
  CHECK(slow.cost(Protocol::simple, LibraryAlgorithm::ring, 8).hop_latency_s[2] ==
        Approx(3 * spec.library.cost(Protocol::simple, LibraryAlgorithm::ring, 8).hop_latency_s[2]));
  CHECK(slow.cost(Protocol::simple, LibraryAlgorithm::ring, 8).hop_latency_s[0] ==
        spec.library.cost(Protocol::simple, LibraryAlgorithm::ring, 8).hop_latency_s[0]);  // NVLink's unchanged
  // Ampere has no NVLS, and the library runs it in Simple only
  network.library.generation = GpuGeneration::ampere;
  for (const AlgorithmCandidate& candidate : choose(1ULL << 30).candidates)
    CHECK(std::string(candidate.algorithm->name) != "nvls-tree");
  network.library.generation = GpuGeneration::hopper;
  CHECK_THROWS_AS(
      plan_library_call(find_algorithm("nvls-tree"), 16, options, 1 << 20, network, false, Protocol::ll, true),
      OptionError);
}
