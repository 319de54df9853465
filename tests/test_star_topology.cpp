// The star is a Topology (Topology::star, place_on_star): its routes, and every engine running it as it runs any
// cluster, so that a cluster of one-accelerator nodes on one switch with the star's links gives the star's times.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/step_walker.hpp"
#include "rel_diff.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/network.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

TEST_CASE("the star is a Topology: a route is the sender's link up and the receiver's link down") {
  const LinkSpec link{1e9, 3e-6, 2e-7};
  const auto star = Topology::star(5, link, 4e9);
  REQUIRE(star->is_star());
  CHECK(star->endpoints() == 5);
  CHECK(star->links().size() == 5);
  CHECK(star->fabric_switches() == 1);
  CHECK(star->reduce_Bps(3) == 4e9);
  CHECK(star->node_of(4) == 4);
  const std::vector<RouteHop> hops = star->route(1, 3);
  REQUIRE(hops.size() == 2);
  CHECK((hops[0].link == 1 && hops[0].a_to_b));
  CHECK((hops[1].link == 3 && !hops[1].a_to_b));
  // the structural route is the one a search of the graph finds
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      CAPTURE(a, b);
      const std::vector<RouteHop> searched = star->route_by_search(a, b);
      const std::vector<RouteHop> structural = star->route(a, b);
      REQUIRE(searched.size() == structural.size());
      for (std::size_t i = 0; i < searched.size(); ++i) {
        CHECK(searched[i].link == structural[i].link);
        CHECK(searched[i].a_to_b == structural[i].a_to_b);
      }
    }
  }
  const LinkSpec path = star->path(1, 3);
  CHECK(path.latency_s == 6e-6);
  CHECK(path.bandwidth_Bps == 1e9);
  CHECK(path.message_gap_s == 2e-7);
  CHECK(route_gap_s(*star, hops) == path.message_gap_s);
  const LinkSpec local = star->path(2, 2);  // two positions on one host: no link
  CHECK(local.latency_s == 0);
  CHECK(std::isinf(local.bandwidth_Bps));
  CHECK(star->route(2, 2).empty());
  CHECK(star->diameter_hops() == 2);
  CHECK(star->bisection_Bps() == Approx(2e9));  // two hosts' links each way against the other three
  CHECK_THROWS_AS(Topology::star(0, link, 4e9), TopologyError);
}

TEST_CASE("place_on_star: a host per position, or as accelerator_of says, and a named cluster is left as it is") {
  NetworkCost network;
  network.cost = {4e-6, 2e9, 8e9, 1e-7};
  std::unique_ptr<Topology> star = place_on_star(network, 4);
  REQUIRE(star != nullptr);
  CHECK(network.topology == star.get());
  CHECK(network.accelerator_of == std::vector<int>{0, 1, 2, 3});
  CHECK(star->endpoints() == 4);
  CHECK(star->links()[2].spec.latency_s == 2e-6);  // alpha split over a route's two links
  CHECK(star->links()[2].spec.bandwidth_Bps == 2e9);
  CHECK(star->links()[2].spec.message_gap_s == 1e-7);
  CHECK(position_reduce_Bps(network, 1) == 8e9);

  NetworkCost shared;  // a parameter server's three units on host 2
  shared.accelerator_of = {0, 1, 2, 2, 2};
  const std::unique_ptr<Topology> hosts = place_on_star(shared, 5);
  CHECK(hosts->endpoints() == 3);
  CHECK(shared.accelerator_of == std::vector<int>{0, 1, 2, 2, 2});

  const std::unique_ptr<Topology> again = place_on_star(network, 4);  // a topology is named: nothing changes
  CHECK(again == nullptr);
  CHECK(network.topology == star.get());
  NetworkCost negative;
  negative.accelerator_of = {0, -1};
  CHECK_THROWS_AS(place_on_star(negative, 2), std::invalid_argument);
}

TEST_CASE("a cluster of one-accelerator nodes on one switch with the star's links runs as the star on every engine") {
  // The star's cost, and the same network as a cluster file would describe it: each node's accelerator reaches its
  // NIC through PCIe links too wide and too near to matter, and the NIC link carries alpha/2 and the bandwidth.
  const AlphaBetaGamma cost{3e-6, 1.25e9, 1e10, 2e-7};
  ClusterSpec spec;
  spec.name = "star-as-cluster";
  spec.nodes = 17;  // 16 ranks and the parameter server's helper
  spec.node.accelerators = 1;
  spec.node.nics = 1;
  spec.node.pcie = {1e18, 0.0, 0.0};
  spec.node.nic = {cost.bandwidth_Bps, cost.alpha_s / 2, cost.gap_s};
  spec.node.reduce_Bps = cost.reduce_Bps;
  spec.fabric.kind = FabricKind::star;
  const Topology cluster(spec);
  for (const std::string algorithm : {"ring", "tree", "butterfly", "ps", "direct"}) {
    for (const std::uint64_t bytes : {4096ULL, 8000000ULL}) {
      CAPTURE(algorithm, bytes);
      AlgorithmOptions options;
      options.set("servers", 1);
      const Schedule s = expand(find_algorithm(algorithm).build(16, bytes, options));
      std::vector<int> placed(static_cast<std::size_t>(s.ranks));
      for (int r = 0; r < s.ranks; ++r)
        placed[static_cast<std::size_t>(r)] = r;

      // one network description each, run by every engine
      NetworkCost star;
      star.cost = cost;
      NetworkCost on_cluster = star;
      on_cluster.topology = &cluster;
      on_cluster.accelerator_of = placed;

      FlowOptions star_flow(star);
      star_flow.pad_chunks_within = 0;
      star_flow.pad_chunks_bytes = 0;
      FlowOptions cluster_flow(on_cluster);
      cluster_flow.pad_chunks_within = 0;
      cluster_flow.pad_chunks_bytes = 0;
      const ExecutionResult flow_star = run_flow(s, star_flow);
      const ExecutionResult flow_cluster = run_flow(s, cluster_flow);
      CHECK(rel_diff(flow_cluster.time_s, flow_star.time_s) < 1e-9);
      CHECK(flow_cluster.bytes_sent == flow_star.bytes_sent);
      if (algorithm == "ring") CHECK((flow_star.rank_classes > 0 && flow_cluster.rank_classes > 0));  // lumped

      star_flow.lump_ranks = cluster_flow.lump_ranks = false;  // every rank simulated
      CHECK(rel_diff(run_flow(s, cluster_flow).time_s, run_flow(s, star_flow).time_s) < 1e-9);

      CHECK(rel_diff(run_analytical(s, AnalyticalOptions(on_cluster)).time_s,
                     run_analytical(s, AnalyticalOptions(star)).time_s) < 1e-9);

      const SimGridOptions star_sg(star);
      const SimGridOptions cluster_sg(on_cluster);
      const ExecutionResult sg_star = run_simgrid(s, star_sg);
      CHECK(rel_diff(run_simgrid(s, cluster_sg).time_s, sg_star.time_s) < 1e-6);
      CHECK(rel_diff(flow_star.time_s, sg_star.time_s) < 1e-6);
    }
  }
}

TEST_CASE("positions sharing a star host share its link and exchange over no link, on every engine") {
  // a parameter server's two servers on one host of their own (host 8), and a message between the two servers
  AlgorithmOptions options;
  options.set("servers", 2);
  const Schedule ps = expand(find_algorithm("ps").build(8, 4000000, options));
  REQUIRE(ps.ranks == 10);
  NetworkCost shared;
  shared.cost = {2e-6, 1.25e9, 1e10, 1e-7};
  shared.accelerator_of = {0, 1, 2, 3, 4, 5, 6, 7, 8, 8};
  FlowOptions flow(shared);
  flow.lump_ranks = false;
  FlowOptions lumped(shared);
  const double every_rank = run_flow(ps, flow).time_s;
  CHECK(rel_diff(run_flow(ps, lumped).time_s, every_rank) < 1e-9);
  // SimGrid also shares the host's processor between the two servers' reductions (the flow engine gives each
  // position its own): close, not equal
  SimGridOptions sg(shared);
  CHECK(rel_diff(run_simgrid(ps, sg).time_s, every_rank) < 0.05);
  // the servers' host link carries both servers' traffic: slower than with a host each
  FlowOptions apart(shared);
  apart.accelerator_of = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK(run_flow(ps, apart).time_s < every_rank * 0.9);

  // two positions on one host: a ring between them moves nothing over the star, only its reduction takes time
  const Schedule local = find_algorithm("ring").build(2, 4000000, AlgorithmOptions{});
  NetworkCost one_host;
  one_host.cost = shared.cost;
  one_host.accelerator_of = {0, 0};
  const double reduction_s = 2000000 / one_host.cost.reduce_Bps;
  CHECK(rel_diff(run_flow(local, FlowOptions(one_host)).time_s, reduction_s) < 1e-9);
  CHECK(rel_diff(run_analytical(local, AnalyticalOptions(one_host)).time_s, reduction_s) < 1e-9);
  // (SimGrid runs the two reductions side by side on the host's one processor: twice as long, and no link crossed,
  // which would add 1.6 ms)
  CHECK(rel_diff(run_simgrid(local, SimGridOptions(one_host)).time_s, 2 * reduction_s) < 1e-6);
  NetworkCost wrong = one_host;  // a placement of another size is refused by every engine
  wrong.accelerator_of = {0, 1, 1};
  CHECK_THROWS_AS(run_flow(local, FlowOptions(wrong)), std::invalid_argument);
  CHECK_THROWS_AS(run_analytical(local, AnalyticalOptions(wrong)), std::invalid_argument);
  CHECK_THROWS_AS(run_simgrid(local, SimGridOptions(wrong)), std::invalid_argument);
}
