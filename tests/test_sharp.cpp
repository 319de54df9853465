// SHARP (algorithms/sharp.hpp): NCCL's CollNet, the fabric's switches reducing in the network, on a cluster whose
// file says they can (fabric.sharp).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "algorithms/registry.hpp"
#include "algorithms/sharp.hpp"
#include "algorithms/verifier.hpp"
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

// `nodes` nodes of `per_node` GPUs (NVSwitch when several) and as many 200 Gbit/s NICs, on a fat-tree of radix 8
// (4 ports a leaf, 3 levels for 64 ports) whose switches reduce unless told otherwise
nlohmann::json cluster_doc(int nodes, int per_node = 1, bool sharp = true, bool rails = false) {
  nlohmann::json intra =
      per_node > 1 ? nlohmann::json{{"kind", "nvswitch"}, {"bandwidth", "300GBps"}} : nlohmann::json{{"kind", "pcie"}};
  return {{"cluster",
           {{"name", "sharp-test"},
            {"source", "test"},
            {"nodes", nodes},
            {"node",
             {{"accelerator", "A100"},
              {"accelerators", per_node},
              {"reduce_rate", "600GBps"},
              {"intra", intra},
              {"pcie", {{"bandwidth", "25GBps"}, {"latency", "0.3us"}}},
              {"nics", {{"count", per_node}, {"bandwidth", "200Gbps"}, {"latency", "0.6us"}}}}},
            {"fabric",
             {{"kind", "fat-tree"},
              {"radix", 8},
              {"rails", rails},
              {"sharp", sharp},
              {"link", {{"bandwidth", "200Gbps"}, {"latency", "0.2us"}}}}}}}};
}

struct Laid {
  std::unique_ptr<Topology> topology;
  NetworkCost network;
};

Laid lay(const nlohmann::json& doc, const Schedule& s) {
  Laid out;
  out.topology = std::make_unique<Topology>(parse_cluster(doc));
  out.network.topology = out.topology.get();
  out.network.accelerator_of =
      place_switch_helpers(*out.topology, place_positions(*out.topology, Placement::block, RankOrder::topology), s);
  return out;
}

AlgorithmOptions tree_options(std::uint64_t leaf, std::uint64_t fanin, std::uint64_t per_node = 1) {
  AlgorithmOptions options;
  options.set(leaf_ranks_option.name, leaf);
  options.set(fanin_option.name, fanin);
  options.set(ranks_per_node_option.name, per_node);
  options.set(segment_size_option.name, std::uint64_t{100000});
  return options;
}

}  // namespace

TEST_CASE("sharp: every rank ends with the sum through trees of switches, any depth and ranks a node") {
  for (int ranks : {1, 2, 3, 5, 8, 12, 13}) {
    for (std::uint64_t per_node : {1ULL, 2ULL, 3ULL, 4ULL}) {
      if (ranks % static_cast<int>(per_node) != 0) continue;
      for (std::uint64_t bytes : {0ULL, 4ULL, 1000000ULL}) {
        for (const char* in_node : {"scatter", "nvls"}) {
          CAPTURE(ranks, per_node, bytes, in_node);
          AlgorithmOptions options = tree_options(2, 2, per_node);
          options.set(in_node_option.name, std::string(in_node));
          const Schedule s = sharp_allreduce(ranks, bytes, options);
          CHECK(s.participants == ranks);
          CHECK(s.switch_helpers);
          const VerifyReport report = verify(s);
          CAPTURE(report.error);
          CHECK(report.ok);
        }
      }
    }
  }
  // the closed form is the analytical executor's time where the helpers reduce in flight (no link sharing there)
  AnalyticalOptions in_flight;
  in_flight.cost.alpha_s = 5e-6;
  in_flight.cost.bandwidth_Bps = 10e9 / 8;
  in_flight.cost.reduce_Bps = Topology::switch_reduce_Bps;
  for (std::uint64_t per_node : {1ULL, 4ULL}) {
    const AlgorithmOptions options = tree_options(2, 2, per_node);
    const Schedule s = sharp_allreduce(16, 1 << 22, options);
    CAPTURE(per_node);
    if (per_node == 1) {
      CHECK(rel_diff(run_analytical(s, in_flight).time_s, sharp_closed_form(16, 1 << 22, in_flight.cost, options)) <
            1e-6);  // (1e18 B/s)
    } else {        // (the closed form serialises a step's G-1 shares on the rank's link: an upper bound here)
      CHECK(run_analytical(s, in_flight).time_s <= sharp_closed_form(16, 1 << 22, in_flight.cost, options));
    }
  }
  // 13 nodes under leaves of 2 and switches of 2 above: 7 + 4 + 2 + 1 helpers, one tree a local rank
  CHECK(sharp_allreduce(13, 1 << 20, tree_options(2, 2)).ranks == 13 + 14);
  CHECK(sharp_allreduce(26, 1 << 20, tree_options(2, 2, 2)).ranks == 26 + 2 * 14);
  CHECK(sharp_allreduce(8, 1 << 20, tree_options(32, 32)).ranks == 8 + 1);  // one leaf: the root
}

TEST_CASE("sharp on a fat-tree: helpers on the leaves above their ranks and a common switch above, half the ring") {
  const int nodes = 16;
  const nlohmann::json doc = cluster_doc(nodes);
  const Topology probe(parse_cluster(doc));
  // the fabric's shape: 4 ports a leaf, 4 leaves under each level-2 switch
  const Topology::AggregationShape shape =
      probe.aggregation_shape(place_positions(probe, Placement::block, RankOrder::topology));
  CHECK(shape.leaf_ranks == 4);
  CHECK(shape.fanin == 4);
  const std::uint64_t bytes = 256'000'000;
  AlgorithmOptions options = tree_options(shape.leaf_ranks, shape.fanin);
  options.set(segment_size_option.name, std::uint64_t{1} << 20);
  const Schedule s = sharp_allreduce(nodes, bytes, options);
  REQUIRE(s.ranks == nodes + 4 + 1);
  const Laid laid = lay(doc, s);
  const std::vector<int>& at = laid.network.accelerator_of;
  REQUIRE(at.size() == static_cast<std::size_t>(s.ranks));
  std::set<int> switches;
  for (int h = nodes; h < s.ranks; ++h) {
    CHECK(laid.topology->is_fabric_endpoint(at[static_cast<std::size_t>(h)]));
    switches.insert(at[static_cast<std::size_t>(h)]);
  }
  CHECK(switches.size() == 5);  // each helper a switch of its own
  // a leaf helper is one link from each of its ranks' NICs: its ranks' routes to it are GPU-PCIe-NIC-leaf
  for (int r = 0; r < nodes; ++r) {
    const int leaf = at[static_cast<std::size_t>(nodes + r / 4)];
    CHECK(laid.topology->route(at[static_cast<std::size_t>(r)], leaf).size() == 3);
    CHECK(laid.topology->route(leaf, at[static_cast<std::size_t>(r)]).size() == 3);
    // and the root one link above every leaf helper
    CHECK(laid.topology->route(leaf, at.back()).size() == 1);
  }
  // the executors agree, and every NIC carries n each way: half the ring's 2 (P-1)/P n
  const FlowOptions fo(laid.network);
  const double flow = run_flow(s, fo).time_s;
  CHECK(rel_diff(run_simgrid(s, SimGridOptions(laid.network)).time_s, flow) < 1e-5);
  CHECK(rel_diff(run_analytical(s, AnalyticalOptions(laid.network)).time_s, flow) < 1e-6);
  FlowOptions ring_flow = fo;
  ring_flow.accelerator_of.resize(nodes);
  const double ring = run_flow(find_algorithm("ring").build(nodes, bytes, AlgorithmOptions{}), ring_flow).time_s;
  const double nic_s = static_cast<double>(bytes) / laid.topology->spec().node.nic.bandwidth_Bps;
  CHECK(flow > nic_s);
  CHECK(flow < 1.1 * nic_s);
  CHECK(ring > 1.8 * nic_s);
}

TEST_CASE("sharp on 8-GPU nodes with rails: a tree a local rank on its rail, pipelined with the node's scatter") {
  const int nodes = 8, per_node = 8;
  const nlohmann::json doc = cluster_doc(nodes, per_node, true, true);
  const std::uint64_t bytes = 1'000'000'000;
  const Topology probe(parse_cluster(doc));
  std::vector<int> firsts;  // local rank 0 of every node
  for (int n = 0; n < nodes; ++n)
    firsts.push_back(n * per_node);
  const Topology::AggregationShape shape = probe.aggregation_shape(firsts);
  CHECK(shape.leaf_ranks == 4);  // a rail's leaf holds NIC l of 4 nodes
  AlgorithmOptions options = tree_options(shape.leaf_ranks, shape.fanin, per_node);
  options.set(segment_size_option.name, std::uint64_t{8} << 20);
  const Schedule s = sharp_allreduce(nodes * per_node, bytes, options);
  REQUIRE(s.ranks == nodes * per_node + per_node * 3);  // 2 leaves and a root a tree
  const Laid laid = lay(doc, s);
  // tree l's leaves are the leaves of rail l: one link from NIC l of its nodes
  for (int l = 0; l < per_node; ++l) {
    const int leaf = laid.network.accelerator_of[static_cast<std::size_t>(nodes * per_node + l * 3)];
    CHECK(laid.topology->route(l, leaf).size() == 3);
  }
  const FlowOptions fo(laid.network);
  const double sharp = run_flow(s, fo).time_s;
  // against the hierarchical ring (the best plain schedule here): each NIC carries n/G each way, not 2 (N-1)/N n/G
  AlgorithmOptions h;
  h.set(ranks_per_node_option.name, std::uint64_t{per_node});
  FlowOptions plain = fo;
  plain.accelerator_of.resize(nodes * per_node);
  const double hierarchical = run_flow(find_algorithm("hierarchical").build(nodes * per_node, bytes, h), plain).time_s;
  CHECK(sharp < hierarchical / 1.3);
  CHECK(sharp > static_cast<double>(bytes) / per_node / probe.spec().node.nic.bandwidth_Bps);
  // hierarchical nests it too (CollNet Direct's phases one after another): correct, and slower than the pipeline
  h.set(inter_option.name, std::string("sharp"));
  h.set(leaf_ranks_option.name, std::uint64_t{shape.leaf_ranks});
  h.set(fanin_option.name, std::uint64_t{shape.fanin});
  const Schedule nested = find_algorithm("hierarchical").build(nodes * per_node, bytes, h);
  CHECK(nested.switch_helpers);
  CHECK(nested.ranks == nodes * per_node + per_node * 3);
  AlgorithmOptions small = h;
  small.set(ranks_per_node_option.name, std::uint64_t{2});
  small.set(leaf_ranks_option.name, std::uint64_t{2});
  small.set(fanin_option.name, std::uint64_t{2});
  const VerifyReport nested_report = verify(find_algorithm("hierarchical").build(10, 4000, small));
  CAPTURE(nested_report.error);
  CHECK(nested_report.ok);
  const Laid nested_laid = lay(doc, nested);
  const double nested_s = run_flow(nested, FlowOptions(nested_laid.network)).time_s;
  CHECK(nested_s < hierarchical);
  CHECK(sharp < nested_s);
}

TEST_CASE("sharp on a 3-level rail fabric: each rail cabled as whole pods, so its tree costs what one leaf's does") {
  // radix 8: leaves of 4 ports, pods of 4 leaves; 2 GPUs and rails a node. 20 nodes need 5 leaves a rail and a third
  // level: each rail then fills 2 whole pods instead of straddling them
  auto seconds = [](int nodes) {
    const nlohmann::json doc = cluster_doc(nodes, 2, true, true);
    const Topology probe(parse_cluster(doc));
    std::vector<int> firsts;
    for (int n = 0; n < nodes; ++n)
      firsts.push_back(2 * n);
    const Topology::AggregationShape shape = probe.aggregation_shape(firsts);
    AlgorithmOptions options = tree_options(shape.leaf_ranks, shape.fanin, 2);
    options.set(segment_size_option.name, std::uint64_t{1} << 20);
    const Schedule s = sharp_allreduce(2 * nodes, 64'000'000, options);
    const Laid laid = lay(doc, s);
    return run_flow(s, FlowOptions(laid.network)).time_s;
  };
  const double one_leaf = seconds(4);
  const double two_pods = seconds(20);
  CHECK(two_pods > one_leaf);  // a deeper tree: more latency
  CHECK(two_pods < 1.1 * one_leaf);
  // without SHARP the same cluster is cabled alike (rail groups, as NVIDIA's SuperPODs), and a 2-level one is not
  const Topology plain(parse_cluster(cluster_doc(20, 2, false, true)));
  const Topology padded(parse_cluster(cluster_doc(20, 2, true, true)));
  CHECK(plain.fabric_switches() == padded.fabric_switches());
  const Topology small(parse_cluster(cluster_doc(6, 2, false, true)));  // 2 leaves a rail: two levels, no padding
  CHECK(small.fabric_switches() == 8);  // 4 leaves and 4 spines (in pods: 4 leaves a rail)
}

TEST_CASE("sharp is refused where no switch reduces, and the cluster file says where sharp may be") {
  const Schedule s = sharp_allreduce(16, 1 << 20, tree_options(4, 4));
  const nlohmann::json plain = cluster_doc(16, 1, false);
  const Topology topology(parse_cluster(plain));
  CHECK_THROWS_WITH(place_switch_helpers(topology, place_positions(topology, Placement::block, RankOrder::topology), s),
                    Catch::Contains("cluster.fabric.sharp false"));
  nlohmann::json torus = cluster_doc(16);
  torus["cluster"]["fabric"] = {{"kind", "torus"}, {"dimensions", {4, 4}}, {"sharp", true}};
  CHECK_THROWS_WITH(parse_cluster(torus), Catch::Contains("cluster.fabric.sharp: only for star and fat-tree"));
  // nvls stays inside a node even where the fabric reduces
  nlohmann::json h100 = cluster_doc(2, 8);
  h100["cluster"]["node"]["intra"]["nvls"] = true;
  const Topology both(parse_cluster(h100));
  const Schedule nvls = find_algorithm("nvls").build(16, 1 << 20, AlgorithmOptions{});
  CHECK_THROWS_WITH(place_switch_helpers(both, place_positions(both, Placement::block, RankOrder::topology), nvls),
                    Catch::Contains("across nodes the fabric's switches reduce with --algorithm sharp"));
}

TEST_CASE("NCCL's tuner weighs CollNet across nodes of a fabric that reduces: trees for small calls, sharp above") {
  nlohmann::json doc = cluster_doc(16);
  doc["cluster"]["library"] = {{"name", "nccl"}, {"generation", "ampere"}};
  const ClusterSpec spec = parse_cluster(doc);
  const Topology topology(spec);
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  network.library = spec.library;
  auto choose = [&](std::uint64_t bytes, bool in_switch = true) {
    return choose_algorithm(Collective::allreduce, 16, bytes, AlgorithmOptions(4), network, in_switch);
  };
  const AlgorithmChoice large = choose(256 << 20);
  CHECK(std::string(large.algorithm->name) == "sharp");
  CHECK(large.protocol == Protocol::simple);
  CHECK(large.candidates.size() == 3);
  // its latency: 31 us of network hardware at one GPU a node (tuning.cc), so a larger call costs more
  CollnetCall c;
  c.nodes = 16;
  c.nics = 1;
  c.intra_Bps = 25e9;
  c.bytes = 0;
  CHECK(rel_diff(estimate_collnet_allreduce_seconds(network.library, c), 31e-6) < 1e-9);
  // not in training steps yet, nor where the fabric does not reduce
  CHECK(std::string(choose(256 << 20, false).algorithm->name) != "sharp");
  nlohmann::json plain = doc;
  plain["cluster"]["fabric"]["sharp"] = false;
  const Topology no_sharp(parse_cluster(plain));
  network.topology = &no_sharp;
  CHECK(choose(256 << 20).candidates.size() == 2);
  // the library runs it in Simple, in steps of what it has in flight, and refuses another protocol
  network.topology = &topology;
  const LibraryCallPlan plan = plan_library_call(find_algorithm("sharp"), 16, AlgorithmOptions(4), 256 << 20, network,
                                                 true, Protocol::none, true);
  CHECK(plan.schedule.protocol == Protocol::simple);
  CHECK(plan.accelerator_of.size() == 16 + 4 + 1);  // the fabric's shape: leaves of 4 nodes
  CHECK(plan.schedule.chunks.size() == 256);        // 1 MiB steps: 2 channels of 512 KiB
  CHECK_THROWS_AS(
      plan_library_call(find_algorithm("sharp"), 16, AlgorithmOptions(4), 1 << 20, network, false, Protocol::ll, true),
      OptionError);
}

TEST_CASE("sharp with NVLS inside the nodes (NCCL's NVLS with CollNet): each node's switch reduces before the fabric") {
  nlohmann::json doc = cluster_doc(8, 8, true, true);
  doc["cluster"]["node"]["intra"]["nvls"] = true;
  const Topology topology(parse_cluster(doc));
  const std::uint64_t bytes = 1'000'000'000;
  AlgorithmOptions options = tree_options(4, 2, 8);
  options.set(segment_size_option.name, std::uint64_t{8} << 20);
  auto time_of = [&](const char* in_node, const char* algorithm = "sharp") {
    AlgorithmOptions o = options;
    o.set(in_node_option.name, std::string(in_node));
    const Schedule s = find_algorithm(algorithm).build(64, bytes, o);
    NetworkCost network;
    network.topology = &topology;
    network.accelerator_of =
        place_switch_helpers(topology, place_positions(topology, Placement::block, RankOrder::topology), s);
    if (std::string(in_node) == "nvls" && std::string(algorithm) == "sharp") {
      // the trees' helpers on the rails' switches, then a helper a node on its NVSwitch
      REQUIRE(network.accelerator_of.size() == 64 + 8 * 3 + 8);
      for (int n = 0; n < 8; ++n)
        CHECK(network.accelerator_of[static_cast<std::size_t>(64 + 24 + n)] == topology.switch_endpoint(n));
    }
    return run_flow(s, FlowOptions(network)).time_s;
  };
  const double through_switch = time_of("nvls");
  CHECK(through_switch < time_of("scatter") / 1.3);               // a GPU's NVLink carries (1 + 1/G) n, not 2 (G-1)/G n
  CHECK(through_switch < time_of("scatter", "nvls-tree") / 1.3);  // the fabric's switches, not two GPU trees
  // where the node's switch cannot reduce, the library refuses it naming the option
  const nlohmann::json plain = cluster_doc(8, 8, true, true);
  const Topology no_nvls(parse_cluster(plain));
  NetworkCost network;
  network.topology = &no_nvls;
  network.accelerator_of = place_positions(no_nvls, Placement::block, RankOrder::topology);
  AlgorithmOptions forced = options;
  forced.set(in_node_option.name, std::string("nvls"));
  CHECK_THROWS_WITH(
      plan_library_call(find_algorithm("sharp"), 64, forced, 1 << 20, network, false, Protocol::none, true),
      Catch::Contains("nvls needs nodes whose NVSwitch reduces"));
}

TEST_CASE("NCCL's tuner estimates NVLS with CollNet where both the nodes' and the fabric's switches reduce") {
  nlohmann::json doc = cluster_doc(8, 8, true, true);
  doc["cluster"]["node"]["intra"]["nvls"] = true;
  doc["cluster"]["library"] = {{"name", "nccl"}, {"generation", "hopper"}};
  const ClusterSpec spec = parse_cluster(doc);
  const Topology topology(spec);
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  network.library = spec.library;
  AlgorithmOptions options(4);
  options.set(ranks_per_node_option.name, std::uint64_t{8});
  const AlgorithmChoice choice = choose_algorithm(Collective::allreduce, 64, 1ULL << 30, options, network);
  CHECK(std::string(choice.algorithm->name) == "sharp");
  // its latency: NVLS's 25 us and 18 us of network (tuning.cc's NVLS branch across nodes)
  NvlsTreeCall call;
  call.ranks = 64;
  call.nodes = 8;
  call.link_Bps = 300e9;
  call.nics_Bps = 200e9;
  CHECK(estimate_nvls_collnet_allreduce_seconds(spec.library, call) == Approx(43e-6).epsilon(1e-9));
  // run through the nodes' switches: a helper a node on its NVSwitch
  const LibraryCallPlan plan =
      plan_library_call(find_algorithm("sharp"), 64, options, 1ULL << 30, network, true, Protocol::none, true);
  CHECK(plan.accelerator_of.back() == topology.switch_endpoint(7));
}
