#include "sim/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace dtsim {

const char* to_string(IntraKind kind) {
  switch (kind) {
    case IntraKind::nvswitch: return "nvswitch";
    case IntraKind::nvlink: return "nvlink";
    case IntraKind::pcie: return "pcie";
  }
  return "?";
}

const char* to_string(FabricKind kind) {
  switch (kind) {
    case FabricKind::star: return "star";
    case FabricKind::fat_tree: return "fat-tree";
    case FabricKind::torus: return "torus";
    case FabricKind::dragonfly: return "dragonfly";
    case FabricKind::ring: return "ring";
  }
  return "?";
}

const char* to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::accelerator: return "accelerator";
    case VertexKind::pcie_switch: return "pcie switch";
    case VertexKind::cpu: return "cpu";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::nic: return "nic";
    case VertexKind::fabric_switch: return "fabric switch";
  }
  return "?";
}

const char* to_string(LinkClass kind) {
  switch (kind) {
    case LinkClass::intra: return "intra-node";
    case LinkClass::pcie: return "pcie";
    case LinkClass::cpu: return "cpu";
    case LinkClass::nic: return "nic";
    case LinkClass::fabric: return "fabric";
    case LinkClass::global: return "global";
  }
  return "?";
}

// Undirected graph; each edge carries its index into links_.
struct Topology::Graph {
  using Type = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                     boost::property<boost::edge_index_t, int>>;
  Type g;
};

namespace {

class Builder {
public:
  Builder(std::vector<VertexKind>& kinds, std::vector<TopologyLink>& links) : kinds_(kinds), links_(links) {}
  int vertex(VertexKind kind) {
    kinds_.push_back(kind);
    return static_cast<int>(kinds_.size()) - 1;
  }
  int link(int a, int b, LinkSpec spec, LinkClass link_class) {
    links_.push_back(TopologyLink{a, b, spec, link_class});
    return static_cast<int>(links_.size()) - 1;
  }
  int links() const { return static_cast<int>(links_.size()); }

private:
  std::vector<VertexKind>& kinds_;
  std::vector<TopologyLink>& links_;
};

}  // namespace

// What routing a fat-tree from its structure needs: the XGFT digits, where each level's up-links and the NIC links
// start in the link list, and each accelerator's and NIC port's link to its PCIe switch.
struct FatTreeShape {
  std::vector<long long> m, w, lower;
  std::vector<int> up_link_base;      // [i]: the first link between levels i-1 and i (node x w[i-1] + up after it)
  int nic_link_base = 0;              // NIC port e's link to its leaf is nic_link_base + e
  std::vector<long long> position;    // NIC port e's place among the leaves' ports (rails); empty: e itself
  std::vector<long long> up_divisor;  // by vertex: a level-i switch's lower[i] (D-mod-k's digit); 1 elsewhere
  std::vector<std::uint8_t> level;    // by vertex: a switch's level i (leaves 1); 0 elsewhere
  std::vector<int> accelerator_link;  // accelerator -> its PCIe switch
  std::vector<int> port_link;         // PCIe switch -> NIC, per NIC port
};

namespace {

// A fabric's switches and links are bounded in proportion to the NIC ports it holds (a full-bisection fat-tree of four
// levels has under 6 links and 2 switches a port), and never below 2^22 links and 2^20 switches: a fabric far larger
// than its ports (a 4-level fat-tree of radix 1024 for 32 ports: 1.3e8 switches) is refused before anything is built,
// with its counts and an estimate of its memory (measured: a fabric of 6.3 million links takes 3.3 GB in `dtsim
// cluster`, about 520 bytes a link with its routing graph and the bisection's flow network).
constexpr double bytes_per_fabric_link = 520;

void check_fabric_size(const std::string& fields, const std::string& what, long double switches, long double links,
                       long long ports) {
  const long double most_switches = std::max<long double>(1 << 20, 2.0L * ports);
  const long double most_links = std::max<long double>(1 << 22, 6.0L * ports);
  if (switches <= most_switches && links <= most_links) return;
  auto count = [](long double n) {
    std::ostringstream out;
    if (n < 1e6) {
      out << static_cast<long long>(n);
    } else {
      out.precision(3);
      out << static_cast<double>(n);
    }
    return out.str();
  };
  throw TopologyError("cluster.fabric: " + what + " has " + count(switches) + " switches and " + count(links) +
                      " links (about " + count(links * bytes_per_fabric_link / 1e9) + " GB); for " +
                      std::to_string(ports) + " NIC ports at most " + count(most_switches) + " switches and " +
                      count(most_links) + " links are supported: lower " + fields);
}

// Fabric builders return the switch each NIC port attaches to.
std::vector<int> build_star(Builder& b, int ports) {
  const int hub = b.vertex(VertexKind::fabric_switch);
  return std::vector<int>(static_cast<std::size_t>(ports), hub);
}

// Extended generalised fat tree XGFT(L; m_1..m_L; w_1..w_L): a level-i switch has m_i children and level-(i-1)
// nodes have w_i parents. A level-(i-1) node labelled (upper digits A, lower digits B) links to the level-i switches
// (A / m_i, b, B) for b < w_i.
// Endpoint ports of a fat-tree of radix k: k, k^2/2, k^3/4 for 1, 2, 3 levels.
long long fat_tree_capacity(int k, int levels) {
  long long capacity = k;
  for (int l = 1; l < levels; ++l)
    capacity *= k / 2;
  return capacity;
}

// The levels of a fat-tree of radix k for `ports` endpoint ports: `given`, or (0: auto) the fewest that hold them,
// at most 4.
int fat_tree_levels(int k, long long ports, int given) {
  if (given > 0) return given;
  int levels = 1;
  while (levels < 4 && fat_tree_capacity(k, levels) < ports)
    ++levels;
  return levels;
}

std::vector<int> build_fat_tree(Builder& b, FabricSpec f, int ports, FatTreeShape& shape) {
  const int k = f.radix;
  f.levels = fat_tree_levels(k, ports, f.levels);
  std::vector<long long> m;
  std::vector<long long> w;
  if (f.levels == 1) {
    m = {k};
    w = {1};
  } else {
    const auto up = static_cast<long long>(std::llround(k / 2 / f.oversubscription));
    m.assign(static_cast<std::size_t>(f.levels), k / 2);
    m.back() = k;
    w.assign(static_cast<std::size_t>(f.levels), k / 2);
    w[0] = 1;
    w[1] = up;
  }
  long long capacity = 1;
  for (long long x : m)
    capacity *= x;
  if (ports > capacity) {
    throw TopologyError("cluster.fabric: " + std::to_string(ports) + " NIC ports do not fit a " +
                        std::to_string(f.levels) + "-level fat-tree of radix " + std::to_string(k) + " (at most " +
                        std::to_string(capacity) + "); raise radix or levels (at most 4)");
  }
  // keep only as many top-level subtrees as the ports need
  long long below = capacity / m.back();
  m.back() = (ports + below - 1) / below;
  const std::size_t levels = m.size();
  std::vector<long long> upper(levels + 1, 1);  // upper[i]: nodes' upper-digit count at level i = prod m_{i+1..L}
  for (std::size_t i = levels; i-- > 0;)
    upper[i] = upper[i + 1] * m[i];
  std::vector<long long> lower(levels + 1, 1);  // lower[i] = prod w_1..w_i
  for (std::size_t i = 1; i <= levels; ++i)
    lower[i] = lower[i - 1] * w[i - 1];
  long double switches = 0, fabric_links = 0;
  for (std::size_t i = 1; i <= levels; ++i) {
    switches += static_cast<long double>(upper[i]) * static_cast<long double>(lower[i]);
    if (i >= 2) fabric_links += static_cast<long double>(upper[i - 1]) * lower[i - 1] * w[i - 1];
  }
  check_fabric_size("radix or levels (levels 0: the fewest that hold the NIC ports)",
                    "a " + std::to_string(f.levels) + "-level fat-tree of radix " + std::to_string(k), switches,
                    fabric_links, ports);
  shape.m = m;
  shape.w = w;
  shape.lower = lower;
  shape.up_link_base.assign(levels + 1, 0);
  std::vector<std::vector<int>> level(levels + 1);
  for (std::size_t i = 1; i <= levels; ++i) {
    level[i].resize(static_cast<std::size_t>(upper[i] * lower[i]));
    for (int& v : level[i]) {
      v = b.vertex(VertexKind::fabric_switch);
      shape.up_divisor.resize(static_cast<std::size_t>(v) + 1, 1);
      shape.up_divisor[static_cast<std::size_t>(v)] = lower[i];
      shape.level.resize(static_cast<std::size_t>(v) + 1, 0);
      shape.level[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(i);
    }
  }
  for (std::size_t i = 2; i <= levels; ++i) {  // links between switch levels i-1 and i
    shape.up_link_base[i] = b.links();
    for (long long node = 0; node < upper[i - 1] * lower[i - 1]; ++node) {
      const long long a = node / lower[i - 1];
      const long long low = node % lower[i - 1];
      for (long long up = 0; up < w[i - 1]; ++up) {
        const long long parent = (a / m[i - 1]) * lower[i] + up * lower[i - 1] + low;
        b.link(level[i - 1][static_cast<std::size_t>(node)], level[i][static_cast<std::size_t>(parent)], f.link,
               LinkClass::fabric);
      }
    }
  }
  std::vector<int> attach(static_cast<std::size_t>(ports));
  for (int e = 0; e < ports; ++e)
    attach[static_cast<std::size_t>(e)] = level[1][static_cast<std::size_t>(e / m[0])];
  return attach;
}

std::vector<int> build_torus(Builder& b, const FabricSpec& f, int ports) {
  std::vector<int> dims = f.dimensions;
  const int per = f.endpoints_per_switch;
  if (dims.empty()) dims = {(ports + per - 1) / per};  // a ring sized to the nodes
  long long switches = 1;
  for (int d : dims) {
    switches *= d;
    if (switches > Topology::max_accelerators) {  // (checked as it grows: the product of large dimensions overflows)
      throw TopologyError("cluster.fabric.dimensions: more than " + std::to_string(Topology::max_accelerators) +
                          " switches; at most that many are supported");
    }
  }
  check_fabric_size("dimensions", "a torus of " + std::to_string(switches) + " switches",
                    static_cast<long double>(switches),
                    static_cast<long double>(switches) * static_cast<long double>(dims.size()), ports);
  if (static_cast<long long>(ports) > switches * per) {
    throw TopologyError("cluster.fabric.dimensions: " + std::to_string(ports) + " NIC ports do not fit " +
                        std::to_string(switches) + " switches x " + std::to_string(per) +
                        " endpoints_per_switch; enlarge the dimensions");
  }
  std::vector<int> vertex(static_cast<std::size_t>(switches));
  for (int& v : vertex)
    v = b.vertex(VertexKind::fabric_switch);
  long long stride = 1;
  for (int d : dims) {
    for (long long s = 0; s < switches; ++s) {
      const long long coordinate = (s / stride) % d;
      if (d == 1 || (d == 2 && coordinate == 1)) continue;  // size 2: one link between the pair, not two
      const long long next = s + (((coordinate + 1) % d) - coordinate) * stride;
      b.link(vertex[static_cast<std::size_t>(s)], vertex[static_cast<std::size_t>(next)], f.link, LinkClass::fabric);
    }
    stride *= d;
  }
  std::vector<int> attach(static_cast<std::size_t>(ports));
  for (int e = 0; e < ports; ++e)
    attach[static_cast<std::size_t>(e)] = vertex[static_cast<std::size_t>(e / per)];
  return attach;
}

std::vector<int> build_dragonfly(Builder& b, const FabricSpec& f, int ports) {
  const int g = f.groups;
  const int a = f.routers_per_group;
  const int h = f.global_links_per_router;
  const long long capacity = static_cast<long long>(g) * a * f.endpoints_per_switch;
  if (ports > capacity) {
    throw TopologyError("cluster.fabric: " + std::to_string(ports) + " NIC ports do not fit a dragonfly of " +
                        std::to_string(capacity) +
                        " endpoints; raise groups, routers_per_group or "
                        "endpoints_per_switch");
  }
  check_fabric_size("groups or routers_per_group",
                    "a dragonfly of " + std::to_string(g) + " groups of " + std::to_string(a) + " routers",
                    static_cast<long double>(g) * a,
                    static_cast<long double>(g) * a * (a - 1) / 2 + static_cast<long double>(g) * (g - 1) / 2, ports);
  std::vector<int> router(static_cast<std::size_t>(g * a));
  for (int& v : router)
    v = b.vertex(VertexKind::fabric_switch);
  auto at = [&](int group, int r) { return router[static_cast<std::size_t>(group * a + r)]; };
  for (int group = 0; group < g; ++group) {
    for (int r = 0; r < a; ++r) {
      for (int s = r + 1; s < a; ++s)
        b.link(at(group, r), at(group, s), f.link, LinkClass::fabric);
    }
  }
  // group G's global port q (0..g-2) leads to group G + q + 1; port q sits on router q / h
  for (int g1 = 0; g1 < g; ++g1) {
    for (int g2 = g1 + 1; g2 < g; ++g2) {
      const int q1 = g2 - g1 - 1;
      const int q2 = g - 1 - (g2 - g1);
      b.link(at(g1, q1 / h), at(g2, q2 / h), f.global_link, LinkClass::global);
    }
  }
  std::vector<int> attach(static_cast<std::size_t>(ports));
  for (int e = 0; e < ports; ++e) {
    attach[static_cast<std::size_t>(e)] = router[static_cast<std::size_t>(e / f.endpoints_per_switch)];
  }
  return attach;
}

}  // namespace

// Refuses a cluster of more than max_cluster_accelerators before its graph is built (a graph takes about
// bytes_per_accelerator each: measured, 1,048,576 accelerators on a star of DGX A100 nodes in 226 MB).
static void check_cluster_size(std::int64_t nodes, std::int64_t accelerators_per_node) {
  constexpr double bytes_per_accelerator = 220;
  const std::int64_t total = nodes * accelerators_per_node;
  if (total <= Topology::max_accelerators) return;
  throw TopologyError("cluster: " + std::to_string(nodes) + " nodes x " + std::to_string(accelerators_per_node) +
                      " accelerators = " + std::to_string(total) + "; at most " +
                      std::to_string(Topology::max_accelerators) + " are supported (its graph alone would need about " +
                      std::to_string(static_cast<long long>(static_cast<double>(total) * bytes_per_accelerator / 1e9)) +
                      " GB)");
}

struct Topology::RouteScratch {
  std::vector<RouteHop> hops;
  std::vector<int> inside;             // sources in the destination's node
  std::vector<std::int32_t> distance;  // -1: not reached
  std::vector<std::uint8_t> wanted;    // a source of the current call
  std::vector<std::size_t> visited;    // BFS order, also the vertices to reset
};

Topology::Topology(const ClusterSpec& spec) : spec_(spec), scratch_(std::make_unique<RouteScratch>()) {
  const NodeSpec& node = spec.node;
  if (spec.nodes < 1 || node.accelerators < 1 || node.nics < 1 || node.nics > node.accelerators) {
    throw TopologyError("cluster: needs >= 1 node, >= 1 accelerator per node and 1 to A NICs per node");
  }
  check_cluster_size(spec.nodes, node.accelerators);
  if (node.intra_kind == IntraKind::nvlink) {  // a link between every pair: A (A - 1) / 2 a node
    const long double per_node = 0.5L * node.accelerators * (node.accelerators - 1);
    const long double links = per_node * spec.nodes;
    const long double most = std::max<long double>(1 << 22, 6.0L * spec.nodes * node.accelerators);
    if (links > most) {
      throw TopologyError("cluster.node.intra: kind nvlink links every pair of a node's " +
                          std::to_string(node.accelerators) + " accelerators, " + std::to_string(spec.nodes) +
                          " nodes x " + std::to_string(static_cast<long long>(per_node)) + " = " +
                          std::to_string(static_cast<long long>(links)) + " links (about " +
                          std::to_string(static_cast<long long>(links * bytes_per_fabric_link / 1e9)) +
                          " GB); at most " + std::to_string(static_cast<long long>(most)) +
                          " are supported: fewer accelerators a node or nodes, or kind nvswitch");
    }
  }
  Builder b(kinds_, links_);
  std::vector<int> nic_vertex;
  std::vector<int> port_link;
  std::vector<int> accelerator_link;
  accelerator_vertex_.reserve(static_cast<std::size_t>(spec.accelerators()));
  for (int n = 0; n < spec.nodes; ++n) {
    std::vector<int> pcie(static_cast<std::size_t>(node.nics));
    for (int i = 0; i < node.accelerators; ++i)
      accelerator_vertex_.push_back(b.vertex(VertexKind::accelerator));
    const int first = n * node.accelerators;
    for (int j = 0; j < node.nics; ++j) {
      pcie[static_cast<std::size_t>(j)] = b.vertex(VertexKind::pcie_switch);
      nic_vertex.push_back(b.vertex(VertexKind::nic));
      port_link.push_back(b.link(pcie[static_cast<std::size_t>(j)], nic_vertex.back(), node.pcie, LinkClass::pcie));
    }
    for (int i = 0; i < node.accelerators; ++i) {
      const int j = i * node.nics / node.accelerators;
      accelerator_link.push_back(b.link(accelerator_vertex_[static_cast<std::size_t>(first + i)],
                                        pcie[static_cast<std::size_t>(j)], node.pcie, LinkClass::pcie));
      pcie_link_.push_back(accelerator_link.back());
      pcie_index_.push_back(j);
    }
    if (node.nics > 1) {
      const int cpu = b.vertex(VertexKind::cpu);
      for (int j = 0; j < node.nics; ++j)
        b.link(pcie[static_cast<std::size_t>(j)], cpu, node.cpu_link, LinkClass::cpu);
    }
    if (node.intra_kind == IntraKind::nvswitch && node.accelerators > 1) {
      const int hub = b.vertex(VertexKind::nvswitch);
      if (node.nvls) switch_vertex_.push_back(hub);
      for (int i = 0; i < node.accelerators; ++i) {
        const int l =
            b.link(accelerator_vertex_[static_cast<std::size_t>(first + i)], hub, node.intra, LinkClass::intra);
        links_[static_cast<std::size_t>(l)].to_reducing_switch = node.nvls;
        nvswitch_link_.push_back(l);
      }
    } else if (node.intra_kind == IntraKind::nvlink) {
      mesh_first_link_.push_back(b.links());
      for (int i = 0; i < node.accelerators; ++i) {
        for (int k = i + 1; k < node.accelerators; ++k) {
          b.link(accelerator_vertex_[static_cast<std::size_t>(first + i)],
                 accelerator_vertex_[static_cast<std::size_t>(first + k)], node.intra, LinkClass::intra);
        }
      }
    }
  }
  const int ports = spec.nic_ports();
  std::vector<int> attach;
  switch (spec.fabric.kind) {
    case FabricKind::star: attach = build_star(b, ports); break;
    case FabricKind::fat_tree: {
      fat_tree_ = std::make_unique<FatTreeShape>();
      if (!spec.fabric.rails) {
        attach = build_fat_tree(b, spec.fabric, ports, *fat_tree_);
      } else {  // rail i: NIC i of every node, on whole leaves of its own (k/2 ports each)
        const int leaf = std::max(1, spec.fabric.radix / 2);
        long long per_rail = (static_cast<long long>(spec.nodes) + leaf - 1) / leaf * leaf;
        // where the fabric needs a third level, each rail is cabled as whole pods (k/2 leaves under one set of
        // level-2 switches: a rail group), as NVIDIA's rail-optimised SuperPODs are, so that traffic between the
        // nodes of one rail never leaves its pod and no pod mixes rails (and, where the switches reduce, a rail's
        // aggregation tree follows the fabric instead of reducing through one level-2 switch's uplink)
        // (Without SHARP, only where the pods fit the levels the packed rails need: a rail count that does not
        // divide the radix would otherwise need a level more, or overflow given levels.)
        const long long pod = static_cast<long long>(leaf) * std::max(1, spec.fabric.radix / 2);
        const int levels = fat_tree_levels(spec.fabric.radix, per_rail * node.nics, spec.fabric.levels);
        const long long padded = (per_rail + pod - 1) / pod * pod;
        if (levels >= 3 && per_rail > leaf &&
            (spec.fabric.sharp || padded * node.nics <= fat_tree_capacity(spec.fabric.radix, levels))) {
          per_rail = padded;
        }
        if (per_rail * node.nics > std::numeric_limits<int>::max()) {
          throw TopologyError("cluster.fabric.rails: " + std::to_string(node.nics) + " rails of " +
                              std::to_string(per_rail) + " ports are too many for one fabric");
        }
        const std::vector<int> at = build_fat_tree(b, spec.fabric, static_cast<int>(per_rail * node.nics), *fat_tree_);
        fat_tree_->position.resize(static_cast<std::size_t>(ports));
        attach.resize(static_cast<std::size_t>(ports));
        for (int e = 0; e < ports; ++e) {
          const long long place = (e % node.nics) * per_rail + e / node.nics;
          fat_tree_->position[static_cast<std::size_t>(e)] = place;
          attach[static_cast<std::size_t>(e)] = at[static_cast<std::size_t>(place)];
        }
      }
      fat_tree_->nic_link_base = b.links();
      fat_tree_->accelerator_link = std::move(accelerator_link);
      fat_tree_->port_link = std::move(port_link);
      break;
    }
    case FabricKind::torus:
    case FabricKind::ring: attach = build_torus(b, spec.fabric, ports); break;
    case FabricKind::dragonfly: attach = build_dragonfly(b, spec.fabric, ports); break;
  }
  for (int e = 0; e < ports; ++e) {
    b.link(nic_vertex[static_cast<std::size_t>(e)], attach[static_cast<std::size_t>(e)], node.nic, LinkClass::nic);
  }
  if (spec.fabric.sharp) {  // every fabric switch reduces: an endpoint of its own, with its level in the tree
    port_switch_ = attach;
    fabric_level_.assign(kinds_.size(), 0);
    fabric_endpoint_of_.assign(kinds_.size(), -1);
    for (int v = 0; v < static_cast<int>(kinds_.size()); ++v) {
      if (kinds_[static_cast<std::size_t>(v)] != VertexKind::fabric_switch) continue;
      fabric_endpoint_of_[static_cast<std::size_t>(v)] =
          accelerators() + static_cast<int>(switch_vertex_.size() + fabric_endpoint_vertex_.size());
      fabric_endpoint_vertex_.push_back(v);
      const bool tree = fat_tree_ != nullptr && static_cast<std::size_t>(v) < fat_tree_->level.size();
      fabric_level_[static_cast<std::size_t>(v)] = tree ? fat_tree_->level[static_cast<std::size_t>(v)] : 1;
    }
  }

  // every accelerator reaches accelerator 0: one union-find over the links (no graph needed)
  std::vector<int> parent(kinds_.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&parent](int v) {
    while (parent[static_cast<std::size_t>(v)] != v) {
      parent[static_cast<std::size_t>(v)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(v)])];
      v = parent[static_cast<std::size_t>(v)];
    }
    return v;
  };
  for (const TopologyLink& link : links_)
    parent[static_cast<std::size_t>(root(link.a))] = root(link.b);
  const int first_root = root(accelerator_vertex_[0]);
  for (int acc = 1; acc < accelerators(); ++acc) {
    if (root(accelerator_vertex_[static_cast<std::size_t>(acc)]) != first_root) {
      throw TopologyError("cluster: accelerator " + std::to_string(acc) + " (node " + std::to_string(node_of(acc)) +
                          ") cannot be reached from accelerator 0 (node 0)");
    }
  }
}

Topology::~Topology() = default;

const Topology::Graph& Topology::graph() const {
  if (graph_ == nullptr) {  // (built on first use: the star routes without it)
    graph_ = std::make_unique<Graph>();
    graph_->g = Graph::Type(kinds_.size());
    for (std::size_t id = 0; id < links_.size(); ++id) {
      boost::add_edge(static_cast<std::size_t>(links_[id].a), static_cast<std::size_t>(links_[id].b),
                      static_cast<int>(id), graph_->g);
    }
  }
  return *graph_;
}

Topology::Topology(const ClusterSpec& spec, StarTag)
    : spec_(spec), star_(true), scratch_(std::make_unique<RouteScratch>()) {
  check_cluster_size(spec.nodes, 1);
  Builder b(kinds_, links_);
  accelerator_vertex_.resize(static_cast<std::size_t>(spec.nodes));
  for (int h = 0; h < spec.nodes; ++h)
    accelerator_vertex_[static_cast<std::size_t>(h)] = b.vertex(VertexKind::accelerator);
  const int hub = b.vertex(VertexKind::fabric_switch);
  for (int h = 0; h < spec.nodes; ++h)
    b.link(h, hub, spec.node.nic, LinkClass::nic);
}

std::unique_ptr<Topology> Topology::star(int hosts, const LinkSpec& link, double reduce_Bps) {
  if (hosts < 1) throw TopologyError("star: needs >= 1 host, got " + std::to_string(hosts));
  ClusterSpec spec;
  spec.name = "star";
  spec.nodes = hosts;
  spec.node.accelerators = 1;
  spec.node.nics = 1;
  spec.node.nic = link;
  spec.node.reduce_Bps = reduce_Bps;
  spec.fabric.kind = FabricKind::star;
  return std::make_unique<Topology>(spec, StarTag{});
}

int Topology::switch_endpoint(int node) const {
  if (switch_vertex_.empty()) {
    throw TopologyError("cluster '" + spec_.name +
                        "': its nodes' switches do not reduce in the network (node.intra.nvls is false)");
  }
  if (node < 0 || node >= spec_.nodes) throw TopologyError("cluster: no node " + std::to_string(node));
  return accelerators() + node;
}

long long Topology::fabric_place(int accelerator) const {
  const int port = port_of(accelerator);
  if (fat_tree_ == nullptr || fat_tree_->position.empty()) return port;
  return fat_tree_->position[static_cast<std::size_t>(port)];
}

int Topology::fabric_switches() const {
  return static_cast<int>(std::count(kinds_.begin(), kinds_.end(), VertexKind::fabric_switch));
}

void Topology::bfs_from(int vertex, std::vector<std::int32_t>& distance) const {
  distance.assign(kinds_.size(), -1);
  distance[static_cast<std::size_t>(vertex)] = 0;
  boost::breadth_first_search(
      graph().g, static_cast<std::size_t>(vertex),
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(distance.data(), boost::on_tree_edge()))));
}

void Topology::routes_to(int destination, const std::vector<int>& sources,
                         const std::function<void(int, const std::vector<RouteHop>&)>& visit) const {
  if (star_) {  // up the source's link, down the destination's
    std::vector<RouteHop>& hops = scratch_->hops;
    for (int source : sources) {
      hops.clear();
      if (source != destination) hops = {{source, true}, {destination, false}};
      visit(source, hops);
    }
    return;
  }
  if (fat_tree_ == nullptr) {
    search_routes(destination, sources, visit);
    return;
  }
  // a fat-tree: routes between nodes from its structure; within a node, and to or from a fabric switch endpoint
  // (SHARP), by search
  std::vector<int>& inside = scratch_->inside;
  inside.clear();
  std::vector<RouteHop>& hops = scratch_->hops;
  const bool to_fabric = is_fabric_endpoint(destination);
  const bool to_accelerator = destination < accelerators();
  for (int source : sources) {
    if (to_fabric || is_fabric_endpoint(source) || node_of(source) == node_of(destination)) {
      if (to_accelerator && source < accelerators() && node_route(source, destination, hops)) {
        visit(source, hops);
        continue;
      }
      inside.push_back(source);
    } else if (is_switch_endpoint(source) || is_switch_endpoint(destination)) {
      throw TopologyError("cluster: a switch endpoint (NVLS) routes only inside its node, not from endpoint " +
                          std::to_string(source) + " to " + std::to_string(destination));
    } else {
      fat_tree_route(source, destination, hops);
      visit(source, hops);
    }
  }
  if (!inside.empty()) search_routes(destination, inside, visit);  // (it does not touch scratch_->inside)
}

bool Topology::node_route(int source, int destination, std::vector<RouteHop>& hops) const {
  hops.clear();
  if (source == destination) return true;
  const auto s = static_cast<std::size_t>(source);
  const auto d = static_cast<std::size_t>(destination);
  if (!nvswitch_link_.empty()) {
    // the shortest routes have two links: through the node's NVSwitch, or through a PCIe switch the two share; the
    // search takes the wider first link (links are built from the accelerator: a to b leaves it)
    const int nvswitch = nvswitch_link_[s];
    const int pcie = pcie_link_[s];
    const double nvswitch_Bps = links_[static_cast<std::size_t>(nvswitch)].spec.bandwidth_Bps;
    const double pcie_Bps = links_[static_cast<std::size_t>(pcie)].spec.bandwidth_Bps;
    if (pcie_index_[s] != pcie_index_[d] || nvswitch_Bps > pcie_Bps) {
      hops = {{nvswitch, true}, {nvswitch_link_[d], false}};
      return true;
    }
    if (pcie_Bps > nvswitch_Bps) {
      hops = {{pcie, true}, {pcie_link_[d], false}};
      return true;
    }
    return false;  // (as wide: the search's D-mod-k rule chooses)
  }
  if (!mesh_first_link_.empty()) {  // one link between every pair, the only shortest route
    const int g = spec_.node.accelerators;
    const int lo = std::min(source, destination) % g;
    const int hi = std::max(source, destination) % g;
    const int link =
        mesh_first_link_[static_cast<std::size_t>(source / g)] + lo * (g - 1) - lo * (lo - 1) / 2 + (hi - lo - 1);
    hops = {{link, source < destination}};
    return true;
  }
  return false;
}

// Up from the source's NIC port to the lowest level whose subtree holds both ports, taking at a level-(i-1) switch
// the up-link (destination port / (w_1 ... w_{i-1}) mod w_i: D-mod-k, one digit of the destination a level) as the
// search does among them (they are in that order in the graph), then down the only way to the destination's port.
void Topology::fat_tree_route(int source, int destination, std::vector<RouteHop>& hops) const {
  const FatTreeShape& t = *fat_tree_;
  const int from_port = port_of(source);
  const int to_port = port_of(destination);
  // the leaves' port numbers (rails: NIC i of every node on rail i's leaves)
  const long long from = t.position.empty() ? from_port : t.position[static_cast<std::size_t>(from_port)];
  const long long to = t.position.empty() ? to_port : t.position[static_cast<std::size_t>(to_port)];
  hops.clear();
  hops.push_back({t.accelerator_link[static_cast<std::size_t>(source)], true});
  hops.push_back({t.port_link[static_cast<std::size_t>(from_port)], true});
  hops.push_back({t.nic_link_base + from_port, true});
  // level-i nodes: upper digits port / M_i (M_i = m_1 ... m_i), lower digits below lower[i]
  const std::size_t levels = t.m.size();
  std::size_t top = 1;
  long long span = t.m[0];
  while (from / span != to / span) {
    if (top == levels) throw std::logic_error("fat-tree route: ports share no subtree");
    span *= t.m[top];
    ++top;
  }
  long long node = from / t.m[0];  // level-1 index: upper digits, no lower digits
  long long digits_span = t.m[0];
  for (std::size_t i = 2; i <= top; ++i) {
    // D-mod-k: at each level the next digit of the destination's port (Zahavi et al. 2010), so that flows to
    // consecutive ports spread over the up-links of every level, not only the first
    const long long up = (to / t.lower[i - 1]) % t.w[i - 1];
    hops.push_back({t.up_link_base[i] + static_cast<int>(node * t.w[i - 1] + up), true});
    const long long low = node % t.lower[i - 1];
    node = (node / t.lower[i - 1] / t.m[i - 1]) * t.lower[i] + up * t.lower[i - 1] + low;
    digits_span *= t.m[i - 1];
  }
  // down: the level-(i-1) child towards the destination keeps the lower digits below lower[i-1]
  for (std::size_t i = top; i >= 2; --i) {
    digits_span /= t.m[i - 1];
    const long long low = node % t.lower[i - 1];
    const long long child = (to / digits_span) * t.lower[i - 1] + low;
    const long long up = (node / t.lower[i - 1]) % t.w[i - 1];
    hops.push_back({t.up_link_base[i] + static_cast<int>(child * t.w[i - 1] + up), false});
    node = child;
  }
  hops.push_back({t.nic_link_base + to_port, false});
  hops.push_back({t.port_link[static_cast<std::size_t>(to_port)], false});
  hops.push_back({t.accelerator_link[static_cast<std::size_t>(destination)], false});
}

void Topology::search_routes(int destination, const std::vector<int>& sources,
                             const std::function<void(int, const std::vector<RouteHop>&)>& visit) const {
  // BFS from the destination, stopped once every source is found: by then every vertex nearer than the farthest
  // source has its distance, which is all the walks back below read. Scratch arrays are reset vertex by vertex, so a
  // call costs what its BFS visits, not the whole graph.
  const Graph::Type& g = graph().g;
  std::vector<std::int32_t>& distance = scratch_->distance;
  std::vector<std::uint8_t>& wanted = scratch_->wanted;
  std::vector<std::size_t>& visited = scratch_->visited;
  if (distance.size() != kinds_.size()) {
    distance.assign(kinds_.size(), -1);
    wanted.assign(kinds_.size(), 0);
  }
  std::size_t missing = 0;
  for (int source : sources) {
    std::uint8_t& w = wanted[static_cast<std::size_t>(accelerator_vertex(source))];
    missing += w == 0 ? 1 : 0;
    w = 1;
  }
  visited.clear();
  const auto root = static_cast<std::size_t>(accelerator_vertex(destination));
  distance[root] = 0;
  visited.push_back(root);
  if (wanted[root] != 0) --missing;
  for (std::size_t head = 0; head < visited.size() && missing > 0; ++head) {
    const std::size_t v = visited[head];
    for (auto [e, end] = boost::out_edges(v, g); e != end && missing > 0; ++e) {
      const std::size_t w = boost::target(*e, g);
      if (distance[w] >= 0) continue;
      distance[w] = distance[v] + 1;
      visited.push_back(w);
      if (wanted[w] != 0) --missing;
    }
  }
  if (missing > 0) {
    for (const std::size_t v : visited)
      distance[v] = -1;
    for (int source : sources)
      wanted[static_cast<std::size_t>(accelerator_vertex(source))] = 0;
    throw TopologyError("cluster: accelerator " + std::to_string(destination) + " cannot be reached from every source");
  }
  const auto edge_index = boost::get(boost::edge_index, g);
  std::vector<RouteHop>& hops = scratch_->hops;
  std::vector<std::pair<std::size_t, int>> candidates;  // (next vertex, link)
  for (int source : sources) {
    hops.clear();
    auto v = static_cast<std::size_t>(accelerator_vertex(source));
    while (distance[v] > 0) {
      // among the next hops that stay on a shortest route, the widest links (NVSwitch before PCIe), then D-mod-k
      candidates.clear();
      double widest = 0.0;
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        const std::size_t w = boost::target(*e, g);
        if (distance[w] != distance[v] - 1) continue;
        const int link = edge_index[*e];
        const double bandwidth = links_[static_cast<std::size_t>(link)].spec.bandwidth_Bps;
        if (bandwidth < widest) continue;
        if (bandwidth > widest) candidates.clear();
        widest = bandwidth;
        candidates.emplace_back(w, link);
      }
      // (a fat-tree's level-i switch takes the destination's i-th digit: Topology::fat_tree_route)
      const long long digit = fat_tree_ != nullptr && v < fat_tree_->up_divisor.size() ? fat_tree_->up_divisor[v] : 1;
      const auto& [next, link] =
          candidates[static_cast<std::size_t>(fabric_place(destination) / digit) % candidates.size()];
      hops.push_back(RouteHop{link, links_[static_cast<std::size_t>(link)].a == static_cast<int>(v)});
      v = next;
    }
    visit(source, hops);
  }
  for (const std::size_t v : visited)
    distance[v] = -1;
  for (int source : sources)
    wanted[static_cast<std::size_t>(accelerator_vertex(source))] = 0;
}

std::vector<RouteHop> Topology::route(int source, int destination) const {
  std::vector<RouteHop> out;
  routes_to(destination, {source}, [&out](int, const std::vector<RouteHop>& hops) { out = hops; });
  return out;
}

int Topology::fabric_level(int vertex) const {
  const auto v = static_cast<std::size_t>(vertex);
  if (kinds_[v] != VertexKind::fabric_switch) return 0;
  return fat_tree_ != nullptr && v < fat_tree_->level.size() ? fat_tree_->level[v] : 0;
}

LinkSpec Topology::searched_path(int source, int destination) const {
  return route_path(*this, route(source, destination));
}

std::vector<RouteHop> Topology::route_by_search(int source, int destination) const {
  std::vector<RouteHop> out;
  search_routes(destination, {source}, [&out](int, const std::vector<RouteHop>& hops) { out = hops; });
  return out;
}

int Topology::diameter_hops(const std::function<void(int)>& progress) const {
  int worst = 0;
  std::vector<std::int32_t> distance;
  for (int acc = 0; acc < accelerators(); ++acc) {
    if (progress && acc % diameter_progress_block == 0) progress(acc);
    bfs_from(accelerator_vertex(acc), distance);
    for (int other : accelerator_vertex_)
      worst = std::max(worst, distance[static_cast<std::size_t>(other)]);
  }
  return worst;
}

double Topology::bisection_Bps() const {
  if (accelerators() < 2) return 0.0;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Flow = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, long long,
                      boost::property<boost::edge_residual_capacity_t, long long,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const std::size_t source = kinds_.size();
  const std::size_t sink = source + 1;
  Flow flow(kinds_.size() + 2);
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  auto arc = [&](std::size_t u, std::size_t v, long long c) {
    const auto there = boost::add_edge(u, v, flow).first;
    const auto back = boost::add_edge(v, u, flow).first;
    capacity[there] = c;
    capacity[back] = 0;
    reverse[there] = back;
    reverse[back] = there;
  };
  long long total = 1;
  for (const TopologyLink& l : links_) {
    const auto c = static_cast<long long>(std::llround(l.spec.bandwidth_Bps));
    arc(static_cast<std::size_t>(l.a), static_cast<std::size_t>(l.b), c);
    arc(static_cast<std::size_t>(l.b), static_cast<std::size_t>(l.a), c);
    total += c;
  }
  const int half = accelerators() / 2;
  for (int acc = 0; acc < accelerators(); ++acc) {
    const auto v = static_cast<std::size_t>(accelerator_vertex(acc));
    if (acc < half) {
      arc(source, v, total);
    } else if (acc >= accelerators() - half) {
      arc(v, sink, total);
    }
  }
  return static_cast<double>(boost::push_relabel_max_flow(flow, source, sink));
}

int Topology::reducing_switch_above(const std::vector<int>& children, const std::vector<int>& taken,
                                    std::size_t spread) const {
  if (children.empty()) throw std::logic_error("reducing_switch_above: a helper with no children");
  const int first_node = node_of(children.front());
  const bool one_node = std::all_of(children.begin(), children.end(),
                                    [&](int c) { return !is_switch_endpoint(c) && node_of(c) == first_node; });
  if (one_node && !switch_vertex_.empty()) return switch_endpoint(first_node);  // NVLS
  if (!spec_.fabric.sharp) {
    if (one_node) {
      throw TopologyError(
          "cluster '" + spec_.name +
          "': no switch above the helper's ranks reduces in the network (cluster.node.intra.nvls false, "
          "cluster.fabric.sharp false)");
    }
    const auto other = std::find_if(children.begin(), children.end(), [&](int c) { return node_of(c) != first_node; });
    throw TopologyError("cluster '" + spec_.name + "': the helper's ranks span nodes " + std::to_string(first_node) +
                        " and " + std::to_string(node_of(*other)) +
                        ", and the fabric's switches do not reduce (cluster.fabric.sharp false; NVLS alone reduces "
                        "inside one node)");
  }
  // each child's place in the fabric: an accelerator's (or node switch's) leaf, a fabric helper's own switch
  std::vector<int> base;
  for (int c : children) {
    base.push_back(is_fabric_endpoint(c) ? accelerator_vertex(c) : port_switch_[static_cast<std::size_t>(port_of(c))]);
  }
  std::sort(base.begin(), base.end());
  base.erase(std::unique(base.begin(), base.end()), base.end());
  std::vector<int> held;  // the switches a child helper already runs on
  for (int t : taken)
    if (is_fabric_endpoint(t)) held.push_back(accelerator_vertex(t));
  int level = 0;
  for (int v : base)
    level = std::max<int>(level, fabric_level_[static_cast<std::size_t>(v)]);
  const int top = *std::max_element(fabric_level_.begin(), fabric_level_.end());
  // the switches at `level` above v (v itself at its own level), up-links only
  auto above = [&](int v, int want) {
    std::vector<int> at{v};
    for (int l = fabric_level_[static_cast<std::size_t>(v)]; l < want; ++l) {
      std::vector<int> next;
      for (int u : at) {
        for (auto [e, end] = boost::out_edges(static_cast<std::size_t>(u), graph().g); e != end; ++e) {
          const auto w = static_cast<int>(boost::target(*e, graph().g));
          if (fabric_level_[static_cast<std::size_t>(w)] == l + 1) next.push_back(w);
        }
      }
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      at = std::move(next);
    }
    return at;
  };
  std::vector<int> lowest;  // the lowest switches above them all, free or not
  for (; level <= top; ++level) {
    std::vector<int> common = above(base.front(), level);
    for (std::size_t i = 1; i < base.size() && !common.empty(); ++i) {
      const std::vector<int> other = above(base[i], level);
      std::vector<int> both;
      std::set_intersection(common.begin(), common.end(), other.begin(), other.end(), std::back_inserter(both));
      common = std::move(both);
    }
    if (lowest.empty()) lowest = common;
    std::erase_if(common, [&](int v) { return std::find(held.begin(), held.end(), v) != held.end(); });
    if (!common.empty()) return fabric_endpoint_of_[static_cast<std::size_t>(common[spread % common.size()])];
  }
  // every switch above them already runs a child: the lowest common one aggregates twice (no link in between)
  if (lowest.empty())
    throw TopologyError("cluster '" + spec_.name + "': no fabric switch is above all of a helper's children");
  return fabric_endpoint_of_[static_cast<std::size_t>(lowest[spread % lowest.size()])];
}

Topology::AggregationShape Topology::aggregation_shape(const std::vector<int>& accelerators) const {
  AggregationShape shape;
  if (!spec_.fabric.sharp || accelerators.empty()) return shape;
  // runs of consecutive accelerators on one leaf: groups of their greatest common divisor each share a leaf; then
  // runs of those groups under one level-2 switch (a fat-tree's pod of k/2 leaves), alike. Where nodes straddle
  // leaves unevenly (8 NICs a node on 20-port leaves) that divisor is small and several leaf helpers share a leaf.
  // (the last run may be shorter: a partly filled leaf or pod ends the last group early)
  auto gcd_of_runs = [](std::size_t n, const std::function<long long(std::size_t)>& key) {
    std::uint32_t divisor = 0;
    std::uint32_t run = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ++run;
      if (i + 1 == n) {
        if (divisor == 0 || run > divisor) divisor = std::gcd(divisor, run);
      } else if (key(i + 1) != key(i)) {
        divisor = std::gcd(divisor, run);
        run = 0;
      }
    }
    return std::max<std::uint32_t>(1, divisor);
  };
  auto leaf = [&](std::size_t i) {
    return static_cast<long long>(port_switch_[static_cast<std::size_t>(port_of(accelerators[i]))]);
  };
  shape.leaf_ranks = gcd_of_runs(accelerators.size(), leaf);
  if (fat_tree_ == nullptr || fat_tree_->m.size() < 2) {
    shape.fanin = 1U << 28;  // one switch above the leaves, or none: every leaf under the root
    return shape;
  }
  const long long first_leaf = *std::min_element(port_switch_.begin(), port_switch_.end());
  const std::size_t groups = (accelerators.size() + shape.leaf_ranks - 1) / shape.leaf_ranks;
  shape.fanin = std::max<std::uint32_t>(2, gcd_of_runs(groups, [&](std::size_t q) {
                                          return (leaf(q * shape.leaf_ranks) - first_leaf) / fat_tree_->m[1];
                                        }));
  return shape;
}

std::vector<int> place_switch_helpers(const Topology& topology, std::vector<int> accelerator_of,
                                      const Schedule& schedule) {
  if (!schedule.switch_helpers || accelerator_of.size() != static_cast<std::size_t>(schedule.participants)) {
    return accelerator_of;
  }
  // each helper's tree: its root, the helper it sends up to and so on (the positions above it it sends to), so that
  // the helpers of one tree pick alike among equally low switches and meet at a common root
  const int first_helper = schedule.participants;
  std::vector<int> parent(static_cast<std::size_t>(schedule.ranks - first_helper), -1);
  for (int h = first_helper; h < schedule.ranks; ++h) {
    for (const Op& op : schedule.rank_ops(h))
      if (op.kind() == OpKind::send && op.peer() > h) parent[static_cast<std::size_t>(h - first_helper)] = op.peer();
  }
  auto tree_of = [&](int h) {
    while (parent[static_cast<std::size_t>(h - first_helper)] >= 0)
      h = parent[static_cast<std::size_t>(h - first_helper)];
    return static_cast<std::size_t>(h - first_helper);
  };
  std::vector<int> children;
  std::vector<int> taken;
  for (int h = first_helper; h < schedule.ranks; ++h) {
    children.clear();
    taken.clear();
    for (const Op& op : schedule.rank_ops(h)) {
      if (!op.is_recv() || op.peer() >= h) continue;
      children.push_back(accelerator_of[static_cast<std::size_t>(op.peer())]);
      if (op.peer() >= schedule.participants) taken.push_back(children.back());
    }
    if (children.empty()) {  // (nothing to move, e.g. 0 bytes: the switch above every participant)
      children.assign(accelerator_of.begin(), accelerator_of.begin() + schedule.participants);
    }
    int at = 0;
    try {
      at = topology.reducing_switch_above(children, taken, tree_of(h));
    } catch (const TopologyError& e) {
      throw TopologyError(schedule.algorithm + " needs switches that reduce in the network: " + e.what());
    }
    if (schedule.algorithm == "nvls" && topology.is_fabric_endpoint(at)) {  // (NCCL's NVLS is a node's NVSwitch)
      throw TopologyError(
          "nvls runs inside one node's NVSwitch, and its ranks span nodes; across nodes the fabric's "
          "switches reduce with --algorithm sharp");
    }
    accelerator_of.push_back(at);
  }
  return accelerator_of;
}

std::vector<int> place_positions(const Topology& topology, Placement placement, RankOrder order) {
  const int p = topology.accelerators();
  std::vector<int> accelerator_of(static_cast<std::size_t>(p));
  std::iota(accelerator_of.begin(), accelerator_of.end(), 0);
  if (order == RankOrder::topology || placement == Placement::block) return accelerator_of;
  const int nodes = topology.spec().nodes;
  const int per_node = topology.spec().node.accelerators;
  for (int rank = 0; rank < p; ++rank) {
    accelerator_of[static_cast<std::size_t>(rank)] = (rank % nodes) * per_node + rank / nodes;
  }
  return accelerator_of;
}

void route_schedule_pairs(const Topology& topology, const std::vector<int>& accelerator_of, const Schedule& schedule,
                          const std::function<void(int, int, const std::vector<RouteHop>&)>& visit) {
  const auto p = static_cast<std::size_t>(schedule.ranks);
  std::vector<std::vector<int>> senders(p);
  for (int r = 0; r < schedule.ranks; ++r) {
    for (const Op& op : schedule.rank_ops(r)) {
      if (op.kind() == OpKind::send) senders[static_cast<std::size_t>(op.peer())].push_back(r);
    }
  }
  auto accelerator = [&](int position) { return accelerator_of[static_cast<std::size_t>(position)]; };
  std::vector<int> sources;
  for (std::size_t dst = 0; dst < p; ++dst) {
    auto& from = senders[dst];  // sorted by accelerator: several positions may share one (a training step's streams)
    std::sort(from.begin(), from.end(),
              [&](int a, int b) { return accelerator(a) != accelerator(b) ? accelerator(a) < accelerator(b) : a < b; });
    from.erase(std::unique(from.begin(), from.end()), from.end());
    sources.clear();
    for (int src : from) {
      if (sources.empty() || sources.back() != accelerator(src)) sources.push_back(accelerator(src));
    }
    topology.routes_to(accelerator_of[dst], sources, [&](int source, const std::vector<RouteHop>& hops) {
      const auto first = std::lower_bound(from.begin(), from.end(), source,
                                          [&](int position, int acc) { return accelerator(position) < acc; });
      for (auto it = first; it != from.end() && accelerator(*it) == source; ++it)
        visit(*it, static_cast<int>(dst), hops);
    });
  }
}

double route_gap_s(const Topology& topology, const std::vector<RouteHop>& hops) {
  RouteGap gap;
  for (const RouteHop& hop : hops)
    gap.add(topology.links()[static_cast<std::size_t>(hop.link)]);
  return gap.value();
}

LinkSpec route_path(const Topology& topology, const std::vector<RouteHop>& hops) {
  LinkSpec out{std::numeric_limits<double>::infinity(), 0.0, 0.0};
  RouteGap gap;
  for (const RouteHop& hop : hops) {
    const TopologyLink& link = topology.links()[static_cast<std::size_t>(hop.link)];
    out.latency_s += link.spec.latency_s;
    out.bandwidth_Bps = std::min(out.bandwidth_Bps, link.spec.bandwidth_Bps);
    gap.add(link);
  }
  out.message_gap_s = gap.value();
  return out;
}

bool has_message_gaps(const Topology& topology) {
  return std::any_of(topology.links().begin(), topology.links().end(),
                     [](const TopologyLink& l) { return l.spec.message_gap_s > 0; });
}

}  // namespace dtsim
