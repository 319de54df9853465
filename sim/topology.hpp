// A cluster as a Boost.Graph graph of accelerators, PCIe switches, CPUs, NVSwitches, NICs and fabric switches joined
// by full-duplex links, with routes between accelerators.
//
// Inside a node: accelerator i hangs off PCIe switch j = i * nics / A together with NIC j; PCIe switches meet at the
// CPU (cpu_link) when there are several; NVSwitch adds one switch linked to every accelerator, NVLink a link between
// every pair. NIC port e = node * nics + j attaches to the fabric: a star (one switch), a fat-tree (an extended
// generalised fat tree, Ohring et al. 1995, from radix-k switches: k/2 endpoint ports per leaf, k/(2r) uplinks for an
// oversubscription r, k/2 up and down above, the top level all k down), a torus or ring (one switch per coordinate,
// wrap-around links), or a dragonfly (Kim et al. 2008: all-to-all routers in a group, one global link per pair of
// groups, consecutive arrangement).
//
// Routes are shortest in hops. Where several next hops are equally short, the widest links win (NVSwitch over the
// PCIe switch between two GPUs of a node), and among equally wide ones (a fat-tree's uplinks, a torus' dimensions)
// the choice is deterministic: the candidate numbered (destination NIC port mod count), D-mod-k routing (Zahavi
// 2010), which spreads distinct destinations evenly over a leaf's uplinks. InfiniBand routes by the destination
// port's address, so the accelerators behind one NIC share its routes (numbering by accelerator instead would send
// every route into a node's first GPU, on 4-GPU nodes, over a quarter of the uplinks). In a fat-tree shortest routes
// are up/down routes: up to a common ancestor, then down; those between nodes are computed from the tree's structure
// (the same links the search would choose, tests/test_topology.cpp), so that 100,000-accelerator clusters route in
// moments.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/schedule.hpp"
#include "models/cluster.hpp"

namespace dtsim {

struct FatTreeShape;

// A cluster the graph cannot be built from (too many nodes for the fabric, an unreachable pair). The message starts
// with the JSON path of the offending part, e.g. "cluster.fabric: ...".
struct TopologyError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

enum class VertexKind : std::uint8_t { accelerator, pcie_switch, cpu, nvswitch, nic, fabric_switch };
enum class LinkClass : std::uint8_t { intra, pcie, cpu, nic, fabric, global };

const char* to_string(VertexKind kind);
const char* to_string(LinkClass kind);

struct TopologyLink {
  int a = 0;  // vertex ids; the link's "up" direction goes from a to b
  int b = 0;
  LinkSpec spec;
  LinkClass link_class = LinkClass::fabric;
  bool to_reducing_switch = false;  // an accelerator's link to its node's NVSwitch where that switch reduces (NVLS)
};

// One link of a route and the direction it is crossed in.
struct RouteHop {
  int link = 0;
  bool a_to_b = true;
};

class Topology {
  struct StarTag {};

public:
  // The most accelerators a cluster may have (4,194,304): more are refused before anything is built.
  static constexpr std::int64_t max_accelerators = std::int64_t{1} << 22;
  explicit Topology(const ClusterSpec& spec);
  // The plain star of the alpha-beta models (Topology::star).
  Topology(const ClusterSpec& spec, StarTag);
  ~Topology();
  // The star that every executor runs when no cluster is given: `hosts` endpoints (accelerators, one per node), each
  // with one full-duplex link (class nic) to one switch; a route is the sender's link up and the receiver's link down
  // (no search), so a route's latency is twice a link's and its gap the link's; endpoints reduce at reduce_Bps.
  static std::unique_ptr<Topology> star(int hosts, const LinkSpec& link, double reduce_Bps);
  bool is_star() const { return star_; }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const ClusterSpec& spec() const { return spec_; }
  int accelerators() const { return spec_.accelerators(); }
  // Endpoints a schedule position can run on: the accelerators 0..A-1; then, on nodes whose NVSwitch reduces in the
  // network (node.intra.nvls), each node's switch (endpoint A + node: NVLS's reduction engine), routed only inside its
  // node; then, on fabrics whose switches reduce (fabric.sharp), every fabric switch (SHARP's aggregation nodes).
  int endpoints() const {
    return accelerators() + static_cast<int>(switch_vertex_.size() + fabric_endpoint_vertex_.size());
  }
  bool is_switch_endpoint(int endpoint) const { return endpoint >= accelerators(); }
  bool is_fabric_endpoint(int endpoint) const {
    return endpoint >= accelerators() + static_cast<int>(switch_vertex_.size());
  }
  // Node `node`'s switch endpoint; throws TopologyError when the nodes' switches do not reduce (no node.intra.nvls).
  int switch_endpoint(int node) const;
  // How fast an endpoint adds up data: an accelerator at node.reduce_rate; a switch endpoint as the data passes
  // through it (NVLink SHARP and SHARP reduce in flight: no time of their own, switch_reduce_Bps).
  static constexpr double switch_reduce_Bps = 1e18;
  double reduce_Bps(int endpoint) const {
    return is_switch_endpoint(endpoint) ? switch_reduce_Bps : spec_.node.reduce_Bps;
  }
  // The node an endpoint is in; -1 for a fabric switch.
  int node_of(int endpoint) const {
    if (is_fabric_endpoint(endpoint)) return -1;
    return is_switch_endpoint(endpoint) ? endpoint - accelerators() : endpoint / spec_.node.accelerators;
  }
  // The switch endpoint a helper that adds up the data of `children` (endpoints) runs on: the node's NVSwitch where
  // they are all accelerators of one node whose switch reduces (NVLS); otherwise, on a fabric whose switches reduce,
  // the lowest fabric switch above all of them that none of `taken` (endpoints already running a child helper) holds,
  // the `spread`-th (mod their count) where several are equally low (a fat-tree's switches of one subtree). Throws
  // TopologyError naming the cluster field when neither can reduce.
  int reducing_switch_above(const std::vector<int>& children, const std::vector<int>& taken, std::size_t spread) const;
  // Where fabric.sharp is set, the aggregation tree an allreduce over these accelerators (in this order) gets from the
  // fabric: how many consecutive ones share a leaf switch (the greatest common divisor of the runs on one leaf, so
  // that every group does), and the switches under each switch above the leaves (a fat-tree's k/2; the star's one
  // switch: all). {1, 2} without fabric.sharp.
  struct AggregationShape {
    std::uint32_t leaf_ranks = 1;
    std::uint32_t fanin = 2;
  };
  AggregationShape aggregation_shape(const std::vector<int>& accelerators) const;
  // The NIC port an accelerator reaches the fabric through: accelerator i of a node uses NIC i * nics / A (a switch
  // endpoint: its node's first).
  int port_of(int accelerator) const {
    const int per_node = spec_.node.accelerators;
    if (is_fabric_endpoint(accelerator)) return 0;  // (no port of its own; routes from it are searched)
    if (is_switch_endpoint(accelerator)) return node_of(accelerator) * spec_.node.nics;
    return node_of(accelerator) * spec_.node.nics + (accelerator % per_node) * spec_.node.nics / per_node;
  }
  // Where that NIC port sits among the fabric's ports (a rail-optimised fat-tree numbers its leaves' ports rail by
  // rail; otherwise port_of): what D-mod-k routing divides.
  long long fabric_place(int accelerator) const;
  int vertex_count() const { return static_cast<int>(kinds_.size()); }
  VertexKind vertex_kind(int vertex) const { return kinds_[static_cast<std::size_t>(vertex)]; }
  int accelerator_vertex(int endpoint) const {
    if (is_fabric_endpoint(endpoint)) {
      return fabric_endpoint_vertex_[static_cast<std::size_t>(endpoint - accelerators()) - switch_vertex_.size()];
    }
    return is_switch_endpoint(endpoint) ? switch_vertex_[static_cast<std::size_t>(endpoint - accelerators())]
                                        : accelerator_vertex_[static_cast<std::size_t>(endpoint)];
  }
  const std::vector<TopologyLink>& links() const { return links_; }
  // A fabric switch's level in a fat-tree (leaves 1); 0 for every other vertex.
  int fabric_level(int vertex) const;
  int fabric_switches() const;

  // Routes from each of `sources` to `destination` (accelerator numbers), one BFS for all of them; calls
  // visit(source, hops) for each.
  void routes_to(int destination, const std::vector<int>& sources,
                 const std::function<void(int, const std::vector<RouteHop>&)>& visit) const;
  std::vector<RouteHop> route(int source, int destination) const;
  // A route's figures as one LinkSpec: its links' latencies summed, its narrowest bandwidth (infinite for a route of
  // no link: two positions on one endpoint) and its per-message gap (route_gap_s).
  LinkSpec path(int source, int destination) const {
    if (!star_) return searched_path(source, destination);
    if (source == destination) return {std::numeric_limits<double>::infinity(), 0.0, 0.0};
    const LinkSpec& up = links_[static_cast<std::size_t>(source)].spec;  // (class nic: the gap is the larger)
    const LinkSpec& down = links_[static_cast<std::size_t>(destination)].spec;
    return {std::min(up.bandwidth_Bps, down.bandwidth_Bps), up.latency_s + down.latency_s,
            std::max(up.message_gap_s, down.message_gap_s)};
  }
  // Whether path() costs a few operations and no allocation (the star), so that callers need not cache it.
  bool paths_are_cheap() const { return star_; }
  // The same route found by a shortest-path search of the graph, as every fabric but the fat-tree is routed (a
  // fat-tree's routes between nodes are computed from its structure: tests/test_topology.cpp checks they agree).
  std::vector<RouteHop> route_by_search(int source, int destination) const;

  // Longest shortest route between two accelerators, in links: a search from every accelerator (quadratic in the
  // size: about 3 s for 8,000 GPUs on a fat-tree here). `progress`, when given, is called with the accelerators
  // searched so far before every block of diameter_progress_block of them.
  static constexpr int diameter_progress_block = 1024;
  int diameter_hops(const std::function<void(int)>& progress = {}) const;
  // Max-flow between the first and the second half of the accelerators (node-major order), bytes per second one
  // way: the bisection bandwidth of the cluster as cut between its two halves of nodes.
  double bisection_Bps() const;

private:
  struct Graph;
  struct RouteScratch;  // routes_to's BFS arrays, kept between calls (so a Topology is not for concurrent use)
  const Graph& graph() const;
  LinkSpec searched_path(int source, int destination) const;
  void bfs_from(int vertex, std::vector<std::int32_t>& distance) const;
  void search_routes(int destination, const std::vector<int>& sources,
                     const std::function<void(int, const std::vector<RouteHop>&)>& visit) const;
  void fat_tree_route(int source, int destination, std::vector<RouteHop>& hops) const;
  // The route between two accelerators of one node from the node's structure (its NVSwitch, or the direct link of a
  // mesh), the one search_routes would take; false where the structure does not settle it (then search).
  bool node_route(int source, int destination, std::vector<RouteHop>& hops) const;

  ClusterSpec spec_;
  bool star_ = false;  // built by star(): endpoint h's link is link h, the switch is the last vertex
  std::vector<VertexKind> kinds_;
  std::vector<int> accelerator_vertex_;
  std::vector<int> switch_vertex_;           // by node, where its NVSwitch reduces (node.intra.nvls); empty otherwise
  std::vector<int> fabric_endpoint_vertex_;  // every fabric switch where they reduce (fabric.sharp); empty otherwise
  std::vector<int> fabric_endpoint_of_;      // by vertex: its fabric endpoint, -1 if none
  std::vector<std::uint8_t> fabric_level_;   // by vertex: a fabric switch's level (leaves 1), 0 elsewhere
  std::vector<int> port_switch_;             // by NIC port: the fabric switch it attaches to
  std::vector<TopologyLink> links_;
  // node_route's structure: by accelerator its link to its PCIe switch, the switch's index in the node, and its link
  // to the node's NVSwitch (-1: none); by node its first mesh link (-1: no mesh), pairs (i < k) in order
  std::vector<int> pcie_link_;
  std::vector<int> pcie_index_;
  std::vector<int> nvswitch_link_;
  std::vector<int> mesh_first_link_;
  mutable std::unique_ptr<Graph> graph_;  // (graph(): built on first use)
  std::unique_ptr<RouteScratch> scratch_;
  std::unique_ptr<FatTreeShape> fat_tree_;  // set for a fat-tree fabric
};

// The per-message gap of a route: a sender pays the gap of the transport its message leaves by. A route that leaves
// the node takes its NICs' gap (the PCIe hops to the NIC are DMA, not copies of their own); one inside a node the
// largest of its links' (NVLink, NVSwitch, PCIe). A route of one link to a reducing switch joins an accelerator and
// the switch endpoint (NVLS: the switch's own loads and multicast stores, no messages to post): no gap. Feed it the
// route's links with add(), read it with value().
class RouteGap {
public:
  void add(const TopologyLink& link) {
    ++links_;
    to_switch_ = to_switch_ || link.to_reducing_switch;
    if (link.link_class == LinkClass::nic) {
      leaves_node_ = true;
      nic_s_ = std::max(nic_s_, link.spec.message_gap_s);
    } else {
      inside_s_ = std::max(inside_s_, link.spec.message_gap_s);
    }
  }
  double value() const {
    if (links_ == 1 && to_switch_) return 0;
    return leaves_node_ ? nic_s_ : inside_s_;
  }

private:
  int links_ = 0;
  bool to_switch_ = false;
  bool leaves_node_ = false;
  double nic_s_ = 0;
  double inside_s_ = 0;
};
// The gap of a route given as hops.
double route_gap_s(const Topology& topology, const std::vector<RouteHop>& hops);
// A route given as hops as one LinkSpec: its links' latencies summed, its narrowest bandwidth (infinite for no link)
// and its gap (Topology::path of the route's ends).
LinkSpec route_path(const Topology& topology, const std::vector<RouteHop>& hops);
// Whether some link of the topology has a per-message gap.
bool has_message_gaps(const Topology& topology);

// Routes every (sender, receiver) pair of positions that the schedule's sends use, one BFS per receiver: calls
// visit(sender, receiver, hops) once per pair, position p running on accelerator_of[p] (several positions may share
// an accelerator).
void route_schedule_pairs(const Topology& topology, const std::vector<int>& accelerator_of, const Schedule& schedule,
                          const std::function<void(int, int, const std::vector<RouteHop>&)>& visit);

// Which accelerator runs each schedule position.
//   placement: ranks fill accelerators node by node ("block") or one per node in turn ("round-robin").
//   order: the algorithm's positions follow the topology (position p on accelerator p: ring and tree neighbours
//   share a node first, as NCCL builds its rings), or the rank numbers (position p is rank p wherever it was placed).
enum class Placement : std::uint8_t { block, round_robin };
enum class RankOrder : std::uint8_t { topology, rank };
std::vector<int> place_positions(const Topology& topology, Placement placement, RankOrder order);
// The positions of a schedule whose helpers run inside switches (Schedule::switch_helpers: NVLS, SHARP):
// `accelerator_of` (one entry per participant) with each helper, in order, on Topology::reducing_switch_above its
// children (the positions numbered below it that it receives from: participants, or helpers placed before it).
// Anything else is returned unchanged. Throws TopologyError when no switch above them can reduce.
std::vector<int> place_switch_helpers(const Topology& topology, std::vector<int> accelerator_of,
                                      const Schedule& schedule);

}  // namespace dtsim
