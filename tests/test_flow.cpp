// The flow executor against the SimGrid executor: the same schedules, the same network model (CM02, max-min sharing
// weighted by route latency, latency paid before the bytes move), so the same times.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/flow_executor.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

double rel_diff(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

const std::vector<std::string> allreduce_algorithms{
    "ring", "tree", "pipelined-tree", "dbtree", "butterfly", "rabenseifner", "ps", "direct", "hierarchical"};

Schedule build(const std::string& algorithm, int ranks, std::uint64_t bytes, int ranks_per_node = 4) {
  AlgorithmOptions options;
  options.colocated_servers = true;
  options.servers = 2;
  options.ranks_per_node = static_cast<std::uint32_t>(ranks_per_node);
  return find_algorithm(algorithm).build(ranks, bytes, options);
}

}  // namespace

TEST_CASE("flow and SimGrid executors agree on a star for every allreduce algorithm and size") {
  SimGridOptions sg;
  sg.cost.alpha_s = 2e-6;
  FlowOptions fo;
  fo.cost = sg.cost;
  for (const std::string& algorithm : allreduce_algorithms) {
    for (int ranks : {2, 7, 16}) {
      for (std::uint64_t bytes : {1000ULL, 1000000ULL, 64000000ULL}) {
        CAPTURE(algorithm, ranks, bytes);
        const Schedule s = build(algorithm, ranks, bytes, ranks % 4 == 0 ? 4 : 1);
        const ExecutionResult a = run_simgrid(s, sg);
        const ExecutionResult b = run_flow(s, fo);
        CHECK(rel_diff(b.time_s, a.time_s) < 1e-6);
        CHECK(b.messages == a.messages);
        CHECK(b.bytes_sent == a.bytes_sent);
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
        const Schedule s = build(algorithm, topology.accelerators(), bytes, spec.node.accelerators);
        SimGridOptions sg;
        sg.topology = &topology;
        sg.accelerator_of = placement;
        FlowOptions fo;
        fo.topology = &topology;
        fo.accelerator_of = placement;
        const double simgrid = run_simgrid(s, sg).time_s;
        const double flow = run_flow(s, fo).time_s;
        CHECK(rel_diff(flow, simgrid) < 0.01);
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

TEST_CASE("the flow executor shares a link max-min: two transfers into one receiver take twice as long") {
  FlowOptions fo;
  fo.cost.alpha_s = 0;
  const Schedule direct = build("direct", 3, 3000000);  // every rank sends two messages and receives two at once
  const ExecutionResult r = run_flow(direct, fo);
  // each rank's uplink and downlink carry two 1 MB messages at once: 2 MB / bandwidth per phase, two phases
  CHECK(r.time_s == Approx(2 * 2e6 / fo.cost.bandwidth_Bps + 2 * 1e6 / fo.cost.reduce_Bps).epsilon(1e-9));
}
