#include "sim/library_cost.hpp"

#include "algorithms/hierarchical.hpp"
#include "algorithms/pipelined_tree.hpp"
#include "algorithms/sharp.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>

namespace dtsim {
namespace {

int accelerator_at(const NetworkCost& cost, int position) {
  return cost.accelerator_of.empty() ? position : cost.accelerator_of[static_cast<std::size_t>(position)];
}

// The nodes one call spans: the most of any group of positions that exchange messages (a Schedule laid over several
// groups, e.g. every stage's tensor-parallel ring at once, is several calls).
int nodes_spanned(const NetworkCost& cost, const Schedule& s) {
  std::vector<int> group(static_cast<std::size_t>(s.ranks));
  std::iota(group.begin(), group.end(), 0);
  auto root = [&](int r) {
    while (group[static_cast<std::size_t>(r)] != r) {
      group[static_cast<std::size_t>(r)] = group[static_cast<std::size_t>(group[static_cast<std::size_t>(r)])];
      r = group[static_cast<std::size_t>(r)];
    }
    return r;
  };
  for (int r = 0; r < s.ranks; ++r) {
    for (const Op& op : s.rank_ops(r))
      if (op.kind() == OpKind::send) group[static_cast<std::size_t>(root(r))] = root(op.peer());
  }
  std::unordered_map<int, std::unordered_set<int>> nodes;  // by group
  for (int r = 0; r < s.ranks; ++r)
    if (!s.rank_ops(r).empty()) nodes[root(r)].insert(cost.topology->node_of(accelerator_at(cost, r)));
  std::size_t most = 1;
  for (const auto& [g, in] : nodes)
    most = std::max(most, in.size());
  return static_cast<int>(most);
}

// The hardware a message between two positions of one node crosses.
HopClass node_hop(const NodeSpec& node) {
  return node.intra_kind == IntraKind::pcie ? HopClass::pci : HopClass::nvlink;
}

// A call's share of its messages on each kind of hop (by `messages`, its sends on each), and the bandwidth of its
// slowest hop (call.hop) for one rank.
void set_hop_figures(LibraryCall& call, const std::array<double, 3>& messages, const NodeSpec& node) {
  const double total = messages[0] + messages[1] + messages[2];
  if (total > 0) {
    for (std::size_t h = 0; h < 3; ++h)
      call.hop_share[h] = messages[h] / total;
  }
  call.bandwidth_Bps = call.hop == HopClass::net   ? node.nic.bandwidth_Bps
                       : call.hop == HopClass::pci ? node.pcie.bandwidth_Bps
                                                   : node.intra.bandwidth_Bps;
}

}  // namespace

HopClass hop_class(const NetworkCost& cost, int src, int dst) {
  const Topology& t = *cost.topology;
  if (t.node_of(accelerator_at(cost, src)) != t.node_of(accelerator_at(cost, dst))) return HopClass::net;
  return node_hop(t.spec().node);
}

LibraryAlgorithm library_algorithm(const Schedule& s) {
  const std::string& a = s.algorithm;
  if (a == "nvls") return LibraryAlgorithm::nvls;
  if (a == "nvls-tree") return LibraryAlgorithm::nvls_tree;
  if (a == "bruck") return LibraryAlgorithm::pat;  // (NCCL's logarithmic allgather and reduce-scatter)
  if (s.switch_helpers)
    return LibraryAlgorithm::collnet;  // the fabric's switches reduce (sharp, or nested in hierarchical)
  return a == "tree" || a == "pipelined-tree" || a == "dbtree" || a == "chain-dbtree" ? LibraryAlgorithm::tree
                                                                                      : LibraryAlgorithm::ring;
}

SegmentLibraryCost segment_library_cost(const NetworkCost& cost, const Schedule& s) {
  if (s.protocol == Protocol::none || !cost.library.enabled()) return {};
  return segment_library_cost(cost, s.protocol, library_algorithm(s), nodes_spanned(cost, s), s.channels);
}

SegmentLibraryCost segment_library_cost(const NetworkCost& cost, Protocol protocol, LibraryAlgorithm family, int nodes,
                                        std::uint32_t channels) {
  SegmentLibraryCost out;
  if (protocol == Protocol::none || !cost.library.enabled()) return out;
  const ProtocolCost c = cost.library.cost(protocol, family, nodes);
  out.active = true;
  out.start_s = cost.library.launch_s + c.base_latency_s;
  for (std::size_t h = 0; h < 3; ++h)
    out.wire_factor[h] = 1.0 / c.wire_fraction[h];
  out.rate_cap_Bps = c.rate_cap_Bps / std::max<std::uint32_t>(1, channels);  // (a cap of the whole call)
  out.hop_latency_s = c.hop_latency_s;
  return out;
}

LibraryCall library_call(const NetworkCost& cost, const Schedule& s) {
  LibraryCall call;
  call.algorithm = library_algorithm(s);
  call.nodes = nodes_spanned(cost, s);
  call.hop = HopClass::nvlink;       // (HopClass runs from the fastest hardware to the slowest)
  std::array<double, 3> messages{};  // by HopClass
  std::size_t repeat = 0;
  for (int r = 0; r < s.ranks; ++r) {
    const std::uint64_t begin = s.rank_begin[static_cast<std::size_t>(r)];
    const std::uint64_t end = s.rank_begin[static_cast<std::size_t>(r) + 1];
    double steps = 0;
    double sent = 0;
    double step_sent = 0;  // the current step's bytes, for its repetitions
    std::uint32_t step_repeats = 0;
    auto close_step = [&] { sent += step_sent * step_repeats; };
    for (std::uint64_t i = begin; i < end; ++i) {
      const Op& op = s.ops[i];
      if (op.starts_step()) {
        close_step();
        step_sent = 0;
        step_repeats = 0;
        while (repeat < s.repeats.size() && s.repeats[repeat].op < i)
          ++repeat;
        if (repeat < s.repeats.size() && s.repeats[repeat].op == i) step_repeats = s.repeats[repeat].count;
        steps += 1 + step_repeats;
      }
      if (op.kind() == OpKind::compute) continue;
      if (op.kind() == OpKind::send) {
        const auto b = static_cast<double>(s.span_bytes(op.span()));
        sent += b;
        step_sent += b;
      }
      const HopClass h = op.kind() == OpKind::send ? hop_class(cost, r, op.peer()) : hop_class(cost, op.peer(), r);
      call.hop = std::max(call.hop, h);
      if (op.kind() == OpKind::send) messages[static_cast<std::size_t>(h)] += 1 + step_repeats;
    }
    close_step();
    call.steps = std::max(call.steps, steps);
    call.wire_bytes = std::max(call.wire_bytes, sent);
  }
  set_hop_figures(call, messages, cost.topology->spec().node);
  return call;
}

LibraryCall library_call(const NetworkCost& cost, const AllPairs& pairs) {
  LibraryCall call;
  call.algorithm = LibraryAlgorithm::ring;  // (library_algorithm of direct)
  call.hop = HopClass::nvlink;
  const auto p = static_cast<std::uint64_t>(pairs.ranks);
  if (pairs.steps.empty() || p < 2) return call;
  // the positions on each node: the pairs inside nodes cross the node's interconnect, the others the network
  std::unordered_map<int, std::uint64_t> on_node;
  for (int r = 0; r < pairs.ranks; ++r)
    ++on_node[cost.topology->node_of(accelerator_at(cost, r))];
  call.nodes = static_cast<int>(on_node.size());
  std::uint64_t inside = 0;
  for (const auto& [node, n] : on_node)
    inside += n * (n - 1);
  const NodeSpec& node = cost.topology->spec().node;
  std::array<double, 3> messages{};
  messages[static_cast<std::size_t>(node_hop(node))] = static_cast<double>(inside);
  messages[static_cast<std::size_t>(HopClass::net)] = static_cast<double>(p * (p - 1) - inside);
  for (std::size_t h = 0; h < 3; ++h) {
    if (messages[h] > 0) call.hop = std::max(call.hop, static_cast<HopClass>(h));
  }
  call.steps = static_cast<double>(pairs.steps.size());
  // the bytes the busiest rank sends
  const std::uint64_t row_base = p * pairs.smallest_chunk_bytes();  // a row of P blocks without their extra elements
  const std::uint64_t extra_blocks = pairs.bytes / pairs.element_bytes % pairs.chunk_count();
  for (std::uint64_t r = 0; r < p; ++r) {
    std::uint64_t sent = 0;
    for (const AllPairsStep& step : pairs.steps) {
      if (step.block == PairBlock::receiver_chunk) {
        sent += pairs.bytes - pairs.chunk_bytes(r);  // every chunk but its own, once
      } else if (step.block == PairBlock::sender_chunk) {
        sent += (p - 1) * pairs.chunk_bytes(r);  // its own, to every other
      } else {  // its row of blocks but the diagonal's (the first `extra_blocks` blocks hold an element more)
        const std::uint64_t longer = std::min(p, extra_blocks > r * p ? extra_blocks - r * p : 0);
        sent += row_base + longer * pairs.element_bytes - pairs.chunk_bytes(r * p + r);
      }
    }
    call.wire_bytes = std::max(call.wire_bytes, static_cast<double>(sent));
  }
  set_hop_figures(call, messages, node);
  return call;
}

bool runs_as_p2p(Collective collective) {
  return collective == Collective::alltoall || collective == Collective::gather || collective == Collective::scatter;
}

namespace {

// The protocol of a call of `collective`, given its figures as the tuner reads them (`call`) and its largest
// message: a send/receive call's by NCCL's rule, the tuner's otherwise.
Protocol call_protocol(const NetworkCost& cost, Collective collective, const LibraryCall& call,
                       std::uint64_t largest_message_bytes) {
  if (!runs_as_p2p(collective)) return choose_protocol(cost.library, call);
  return p2p_protocol(cost.library, static_cast<double>(largest_message_bytes), call.hop == HopClass::net);
}

// A Schedule's largest message: its largest chunk (a message carries one chunk in the direct algorithms that run
// send/receive calls).
std::uint64_t largest_chunk_bytes(const Schedule& s) {
  std::uint64_t largest = 0;
  for (const Chunk& c : s.chunks)
    largest = std::max(largest, c.size_bytes);
  return largest;
}

}  // namespace

Protocol tuned_protocol(const NetworkCost& cost, const Schedule& s) {
  if (!cost.library.enabled()) return Protocol::none;
  return call_protocol(cost, s.collective, library_call(cost, s), largest_chunk_bytes(s));
}

Protocol tuned_protocol(const NetworkCost& cost, const AllPairs& pairs) {
  if (!cost.library.enabled()) return Protocol::none;
  return call_protocol(cost, pairs.collective, library_call(cost, pairs), pairs.largest_chunk_bytes());
}

namespace {

// Rings over a full mesh of g accelerators that share no link direction: g - 1 of them, a decomposition of the
// complete directed graph into Hamiltonian cycles (it exists for every g but 4 and 6: Tillson 1980), found by a
// depth-first search with a fixed seed (reproducible; a few milliseconds for g = 8 or 16) and bounded in tries. Where
// it finds none: one ring per stride s coprime with g (i -> i + s mod g), fewer rings but still disjoint. Each ring
// is listed as the order of the node's accelerators, starting at 0.
class MeshRings {
public:
  explicit MeshRings(int g) : g_(g), used_(static_cast<std::size_t>(g * g), 0), rng_(20261125) {}

  std::vector<std::vector<int>> find() {
    if (g_ >= 3 && g_ != 4 && g_ != 6 && g_ <= 64 && decompose(0)) return rings_;
    std::vector<std::vector<int>> strides;
    for (int s = 1; s < g_; ++s) {
      if (std::gcd(s, g_) != 1) continue;
      std::vector<int>& ring = strides.emplace_back();
      for (int i = 0; i < g_; ++i)
        ring.push_back(i * s % g_);
    }
    return strides;
  }

private:
  char& arc(int u, int v) { return used_[static_cast<std::size_t>(u * g_ + v)]; }
  void mark(const std::vector<int>& ring, bool on) {
    for (std::size_t i = 0; i < ring.size(); ++i)
      arc(ring[i], ring[(i + 1) % ring.size()]) = on ? 1 : 0;
  }
  bool cycle(std::vector<int>& path, std::vector<char>& seen) {
    if (++steps_ > max_steps) return false;
    if (static_cast<int>(path.size()) == g_) return arc(path.back(), 0) == 0;
    std::vector<int> next;
    for (int v = 0; v < g_; ++v)
      if (seen[static_cast<std::size_t>(v)] == 0 && arc(path.back(), v) == 0) next.push_back(v);
    std::shuffle(next.begin(), next.end(), rng_);
    for (const int v : next) {
      path.push_back(v);
      seen[static_cast<std::size_t>(v)] = 1;
      if (cycle(path, seen)) return true;
      seen[static_cast<std::size_t>(v)] = 0;
      path.pop_back();
    }
    return false;
  }
  bool decompose(int found) {
    if (found == g_ - 1) return true;
    for (int attempt = 0; attempt < 20 && steps_ <= max_steps; ++attempt) {
      std::vector<int> path{0};
      std::vector<char> seen(static_cast<std::size_t>(g_), 0);
      seen[0] = 1;
      if (!cycle(path, seen)) return false;
      mark(path, true);
      rings_.push_back(path);
      if (decompose(found + 1)) return true;
      rings_.pop_back();
      mark(path, false);
    }
    return false;
  }

  static constexpr std::uint64_t max_steps = 2'000'000;
  int g_;
  std::vector<char> used_;
  std::mt19937 rng_;
  std::uint64_t steps_ = 0;
  std::vector<std::vector<int>> rings_;
};

const std::vector<std::vector<int>>& mesh_rings(int g) {
  static std::map<int, std::vector<std::vector<int>>> cache;  // by node size, for the process (not for threads)
  auto it = cache.find(g);
  if (it == cache.end()) it = cache.emplace(g, MeshRings(g).find()).first;
  return it->second;
}

// Positions that fill one node whose accelerators are linked pairwise (IntraKind::nvlink, a full mesh).
bool one_mesh_node(const Topology& topology, std::size_t positions) {
  return topology.spec().node.intra_kind == IntraKind::nvlink &&
         positions == static_cast<std::size_t>(topology.spec().node.accelerators);
}

// Positions that fill several whole nodes of an even number g of pairwise-linked accelerators: there the channels'
// paths through a node are mesh_paths(g), so that they share no link.
bool mesh_nodes(const Topology& topology, std::size_t positions) {
  const auto g = static_cast<std::size_t>(topology.spec().node.accelerators);
  return topology.spec().node.intra_kind == IntraKind::nvlink && g >= 2 && g % 2 == 0 && positions > g &&
         positions % g == 0;
}

// g paths through all g accelerators of a full mesh (g even) that use every link direction once: Walecki's zigzag
// k, k+1, k-1, k+2, k-2, ..., k+g/2 (mod g) for k < g/2, whose undirected edges rotate into a decomposition of the
// complete graph into g/2 Hamiltonian paths, each then walked both ways (path k + g/2 is path k reversed). Path k
// starts at accelerator k and their ends are all different, so that a channel enters each node through NIC k and
// every NIC sends one channel on to the next node.
std::vector<std::vector<int>> mesh_paths(int g) {
  std::vector<std::vector<int>> paths(static_cast<std::size_t>(g));
  for (int k = 0; k < g / 2; ++k) {
    std::vector<int>& path = paths[static_cast<std::size_t>(k)];
    for (int j = 0; j < g; ++j) {
      const int step = j % 2 == 1 ? (j + 1) / 2 : -(j / 2);
      path.push_back(((k + step) % g + g) % g);
    }
    paths[static_cast<std::size_t>(k + g / 2)].assign(path.rbegin(), path.rend());
  }
  return paths;
}

}  // namespace

int library_channels(const NetworkCost& cost, const Schedule& s) {
  if (!cost.library.enabled() || cost.topology == nullptr) return 1;
  // (NCCL's channels are rings and trees: its tree is chain-dbtree, or dbtree where ranks are not laid node by node)
  if (s.algorithm != "ring" && s.algorithm != "dbtree" && s.algorithm != "chain-dbtree") return 1;
  const Topology& t = *cost.topology;
  const int per_node = t.spec().node.accelerators;
  if (static_cast<int>(cost.accelerator_of.size()) % per_node != 0) return 1;
  for (std::size_t i = 0; i < cost.accelerator_of.size(); ++i)
    if (cost.accelerator_of[i] != static_cast<int>(i)) return 1;  // not node by node
  // a full mesh: its rings over links of their own (mesh_rings; as NCCL's and RCCL's rings spread over a mesh's
  // links); across nodes: one ring per NIC (at most NCCL's MAXCHANNELS, 64: src/include/device.h)
  if (one_mesh_node(t, cost.accelerator_of.size())) {
    return std::clamp(static_cast<int>(mesh_rings(per_node).size()), 1, 64);
  }
  return nodes_spanned(cost, s) < 2 ? 1 : std::min(t.spec().node.nics, 64);
}

std::vector<int> channel_placement(const Topology& topology, const std::vector<int>& accelerator_of, int channels) {
  const int per_node = topology.spec().node.accelerators;
  const std::size_t positions = accelerator_of.size();
  std::vector<int> out;
  out.reserve(positions * static_cast<std::size_t>(channels));
  if (one_mesh_node(topology, positions)) {
    const std::vector<std::vector<int>>& rings = mesh_rings(per_node);  // a mesh node: ring c over links of its own
    for (int c = 0; c < channels; ++c) {
      const std::vector<int>& ring = rings[static_cast<std::size_t>(c) % rings.size()];
      for (std::size_t i = 0; i < positions; ++i)
        out.push_back(accelerator_of[static_cast<std::size_t>(ring[i])]);
    }
    return out;
  }
  if (mesh_nodes(topology, positions)) {  // mesh nodes: channel c's path through each node over links of its own
    const std::vector<std::vector<int>> paths = mesh_paths(per_node);
    for (int c = 0; c < channels; ++c) {
      const std::vector<int>& path =
          paths[static_cast<std::size_t>(channels <= per_node ? c * per_node / channels : c % per_node)];
      for (std::size_t i = 0; i < positions; ++i) {
        const auto local = static_cast<int>(i) % per_node;
        const auto node_first = static_cast<int>(i) - local;
        out.push_back(accelerator_of[static_cast<std::size_t>(node_first + path[static_cast<std::size_t>(local)])]);
      }
    }
    return out;
  }
  for (int c = 0; c < channels; ++c) {
    const int shift = c * per_node / channels;
    for (std::size_t i = 0; i < positions; ++i) {
      const auto local = static_cast<int>(i) % per_node;
      const auto node_first = static_cast<int>(i) - local;
      out.push_back(accelerator_of[static_cast<std::size_t>(node_first + (local + shift) % per_node)]);
    }
  }
  return out;
}

LibraryCallPlan plan_library_call(const std::function<Schedule(std::uint64_t bytes)>& build, std::uint64_t bytes,
                                  std::uint64_t element_bytes, const NetworkCost& network, bool automatic,
                                  Protocol forced, bool allow_channels) {
  LibraryCallPlan plan;
  plan.schedule = build(bytes);
  plan.accelerator_of = network.topology != nullptr
                            ? place_switch_helpers(*network.topology, network.accelerator_of, plan.schedule)
                            : network.accelerator_of;
  if (!network.library.enabled() || (!automatic && forced == Protocol::none)) return plan;
  if (const LibraryAlgorithm family = library_algorithm(plan.schedule);
      family == LibraryAlgorithm::collnet || family == LibraryAlgorithm::pat) {  // Simple only, one call
    if (!automatic && forced != Protocol::simple) {
      throw OptionError("protocol", plan.schedule.algorithm + " (NCCL's " +
                                        (family == LibraryAlgorithm::pat ? "PAT" : "CollNet") +
                                        ") runs in simple only, got " + to_string(forced));
    }
    plan.schedule.protocol = Protocol::simple;
    return plan;
  }
  if (const LibraryAlgorithm family = library_algorithm(plan.schedule);
      family == LibraryAlgorithm::nvls || family == LibraryAlgorithm::nvls_tree) {  // Simple only, one call
    if (nvls_efficiency(network.library.generation) <= 0) {
      throw OptionError("algorithm", plan.schedule.algorithm + ": the cluster's library runs on " +
                                         std::string(to_string(network.library.generation)) +
                                         " GPUs, which have no NVLS (Hopper and later)");
    }
    if (!automatic && forced != Protocol::simple) {
      throw OptionError("protocol", plan.schedule.algorithm + " runs in simple only, got " + to_string(forced));
    }
    plan.schedule.protocol = Protocol::simple;
    return plan;
  }
  const int most = allow_channels ? library_channels(network, plan.schedule) : 1;
  Protocol protocol = forced;
  if (automatic) {
    LibraryCall call = library_call(network, plan.schedule);
    if (call.hop == HopClass::net) call.bandwidth_Bps *= most;  // a NIC each
    protocol = call_protocol(network, plan.schedule.collective, call, largest_chunk_bytes(plan.schedule));
  }
  // NCCL gives each channel at least its threads' worth of bytes (src/include/comm.h thresholds, bytes per thread:
  // LL 8, times the ranks for rings, on 512 threads; LL128 8 on 640; Simple 64 on 512), so small calls use fewer
  const double per_channel = protocol == Protocol::ll      ? 8.0 * 512 * plan.schedule.ranks
                             : protocol == Protocol::ll128 ? 8.0 * 640
                                                           : 64.0 * 512;
  plan.channels =
      static_cast<int>(std::clamp(static_cast<double>(bytes) / per_channel, 1.0, static_cast<double>(most)));
  if (plan.channels > 1) {  // the channels' copies side by side, each on its share, in its own rank order
    const std::uint64_t unit = static_cast<std::uint64_t>(plan.channels) * element_bytes;
    plan.schedule = replicate_groups(build((bytes + unit - 1) / unit * element_bytes), plan.channels);
    plan.accelerator_of = channel_placement(*network.topology, network.accelerator_of, plan.channels);
    plan.schedule.channels = static_cast<std::uint32_t>(plan.channels);
  }
  plan.schedule.protocol = protocol;
  return plan;
}

namespace {

// An aggregation tree's shape from the fabric (Topology::aggregation_shape), unless the options give it: over one rank
// a node (--ranks-per-node), for sharp or where hierarchical runs it across nodes (--inter sharp).
AlgorithmOptions with_aggregation_tree(const AlgorithmInfo& algorithm, AlgorithmOptions options,
                                       const NetworkCost& network, int ranks) {
  if (network.topology == nullptr) return options;
  const AlgorithmInfo* tree = &algorithm;
  if (algorithm.option(inter_option.name) != nullptr) {
    try {
      tree = &find_nestable_allreduce(options.text(inter_option));
    } catch (const std::invalid_argument&) {
      return options;  // (the builder names the bad --inter)
    }
  }
  if (tree->option(leaf_ranks_option.name) == nullptr) return options;
  // the tree's positions: one rank a node (local rank 0's; every local rank's tree alike)
  const std::uint64_t stride = std::max<std::uint64_t>(1, options.number(ranks_per_node_option));
  std::vector<int> accelerators;
  for (std::uint64_t q = 0; q < static_cast<std::uint64_t>(ranks); q += stride)
    accelerators.push_back(accelerator_at(network, static_cast<int>(q)));
  const Topology::AggregationShape shape = network.topology->aggregation_shape(accelerators);
  if (!options.has(leaf_ranks_option.name)) options.set(leaf_ranks_option.name, std::uint64_t{shape.leaf_ranks});
  if (!options.has(fanin_option.name)) options.set(fanin_option.name, std::uint64_t{shape.fanin});
  // inside nodes whose NVSwitch reduces, through it (NCCL's NVLS with CollNet); nowhere else
  const bool node_switch = network.topology->spec().node.nvls;
  if (!options.has(in_node_option.name)) {
    options.set(in_node_option.name, std::string(node_switch ? "nvls" : "scatter"));
  } else if (options.text(in_node_option) == "nvls" && !node_switch) {
    throw OptionError("in-node", "nvls needs nodes whose NVSwitch reduces, and cluster '" +
                                     network.topology->spec().name + "' has node.intra.nvls false");
  }
  return options;
}

}  // namespace

LibraryCallPlan plan_library_call(const AlgorithmInfo& algorithm, int ranks, const AlgorithmOptions& given,
                                  std::uint64_t bytes, const NetworkCost& network, bool automatic, Protocol forced,
                                  bool allow_channels) {
  const AlgorithmOptions options = with_aggregation_tree(algorithm, given, network, ranks);
  LibraryCallPlan plan = plan_library_call([&](std::uint64_t b) { return algorithm.build(ranks, b, options); }, bytes,
                                           options.element_bytes, network, automatic, forced, allow_channels);
  const Protocol protocol = plan.schedule.protocol;
  const LibraryAlgorithm family = library_algorithm(plan.schedule);
  if (protocol == Protocol::none || family == LibraryAlgorithm::ring ||
      algorithm.option(segment_size_option.name) == nullptr || options.has(segment_size_option.name)) {
    return plan;
  }
  AlgorithmOptions chunked = options;
  if (family == LibraryAlgorithm::nvls || family == LibraryAlgorithm::nvls_tree) {
    // a step of its pipeline: a chunk of each of NCCL's NVLS channels
    chunked.set(segment_size_option.name, nvls_step_bytes(static_cast<double>(bytes)));
  } else if (family == LibraryAlgorithm::collnet) {  // a step: what each local rank has in flight, as CollNet does
    chunked.set(segment_size_option.name, collnet_step_bytes(options.number(ranks_per_node_option)));
  } else {
    NetworkCost laid = network;  // (the channels' copies, where they run)
    laid.accelerator_of = plan.accelerator_of;
    const int nodes = nodes_spanned(laid, plan.schedule);
    chunked.set(segment_size_option.name, tree_chunk_bytes(protocol, static_cast<double>(bytes), plan.channels, nodes,
                                                           static_cast<double>(ranks) / std::max(1, nodes)));
  }
  return plan_library_call([&](std::uint64_t b) { return algorithm.build(ranks, b, chunked); }, bytes,
                           options.element_bytes, network, false, protocol, allow_channels);
}

}  // namespace dtsim
