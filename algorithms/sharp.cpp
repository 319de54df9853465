// SHARP allreduce: the fabric's switches add the data up as it passes (Mellanox/NVIDIA Scalable Hierarchical
// Aggregation and Reduction Protocol on InfiniBand switches), in the shape of NCCL's CollNet Direct, which runs it
// through its SHARP plugin. Graham et al., "Scalable Hierarchical Aggregation Protocol (SHArP): a hardware
// architecture for efficient data reduction", COMHPC 2016; NCCL's CollNet algorithms (src/graph/tuning.cc,
// src/device/all_reduce.h, v2.30.7-1).
// The P ranks sit in N nodes of G (--ranks-per-node); local rank l of every node joins aggregation tree l: the N
// nodes under leaf switches of --leaf-ranks nodes each, --fanin switches under each switch above, up to one root:
// D levels of helpers per tree (Schedule::switch_helpers), placed on the cluster's switches (place_switch_helpers:
// each on the lowest reducing switch above its children; tree l on rail l's switches where the fabric has rails).
// Phases, for each segment of the buffer (K segments of at most --segment-size bytes, each cut into G shares), as
// pipelined steps (a segment one step behind the one before it):
//   scatter (G > 1): every rank sends share j of the segment to local rank j of its node, which adds them up;
//   up:      local rank l sends its share's node sum to its leaf switch in tree l, which adds its nodes' sums and
//            sends the total to its parent, and so on to the root (a level-i switch receives at step i + 1);
//   down:    the root multicasts the total to its children, and so down to local rank l of every node;
//   gather (G > 1): local rank l sends the share to the other ranks of its node.
//   Each rank's NIC carries n/G up and n/G down, against the ring's 2 (P-1)/P n/G on each of G NICs, with only D
//   levels of network latency.
// With --in-node nvls (NCCL's NVLS with CollNet, where the node's NVSwitch reduces) the scatter is the switch's: every
// rank sends the whole segment to its node's switch (one more helper a node, after the trees' helpers), which returns
// share j's node sum to local rank j; at the end local rank j sends the total back and the switch multicasts it to the
// node (NVLS's four phases around the tree): each rank's NVLink carries (1 + 1/G) n each way instead of 2 (G-1)/G n.
// Cost without contention: K segments of n/(K G) a share, s = 1 + 2 [G > 1] + 2D - 1 steps from first to last:
//   (K + s - 1)(alpha + (G-1) n/(K G) beta) where G > 1, (K + 2D - 1)(alpha + n/K beta) at G = 1; the switches reduce
//   in flight, the ranks G-1 shares a segment (gamma).
#include "algorithms/sharp.hpp"

#include <algorithm>
#include <vector>

namespace dtsim {
namespace {

struct Tree {
  std::vector<std::uint32_t> count;  // helpers by level, leaves first; the last level holds the root alone
  std::vector<std::uint32_t> first;  // each level's first helper, counted from the tree's first
  std::uint32_t leaf = 1;            // nodes under a leaf
  std::uint32_t fanin = 2;           // switches under a switch above
  std::uint32_t helpers = 0;         // in one tree
  std::uint32_t levels() const { return static_cast<std::uint32_t>(count.size()); }
};

Tree aggregation_tree(std::uint32_t nodes, const AlgorithmOptions& options) {
  Tree t;
  t.leaf = static_cast<std::uint32_t>(std::min<std::uint64_t>(options.number(leaf_ranks_option), nodes));
  t.fanin = static_cast<std::uint32_t>(options.number(fanin_option));
  std::uint32_t n = (nodes + t.leaf - 1) / t.leaf;
  while (true) {
    t.count.push_back(n);
    t.first.push_back(t.helpers);
    t.helpers += n;
    if (n == 1) break;
    n = (n + t.fanin - 1) / t.fanin;
  }
  return t;
}

// K segments, at least one element a share; where --segment-size would give more segments than a schedule holds,
// fewer and larger ones (a library's calls at scale)
std::uint32_t segments(std::uint32_t p, std::uint32_t g, std::uint32_t helpers, std::uint64_t bytes,
                       const AlgorithmOptions& options) {
  const std::uint64_t per_segment = 4ULL * p * g + 4ULL * helpers;
  const std::uint64_t most = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(bytes / options.element_bytes / g, ScheduleBuilder::max_ops / per_segment));
  return pipeline_segments("sharp", static_cast<int>(p), bytes, options, most, per_segment);
}

}  // namespace

namespace {

// What every position's steps are built from: the shape, the pipeline's phase offsets, and the positions.
struct Pipeline {
  std::uint32_t p = 0;      // ranks
  std::uint32_t g = 1;      // ranks a node
  std::uint32_t nodes = 0;  //
  Tree t;                   // one aggregation tree a local rank
  std::uint32_t k = 0;      // segments
  std::uint64_t a = 0;      // steps before the tree: none, the scatter, or the switch's reduction and its return
  std::uint64_t back = 0;   // a rank receives its share's total
  std::uint64_t last = 0;   // the gather, or the store and the multicast
  int first_switch = 0;     // the nodes' NVSwitches (--in-node nvls), after the trees' helpers

  std::uint32_t chunk(std::int64_t segment, std::uint32_t share) const {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(segment) * g + share);
  }
  // the segment in the phase at `offset` at step tau, or -1
  std::int64_t at(std::uint64_t tau, std::uint64_t offset) const {
    return tau >= offset && tau - offset < k ? static_cast<std::int64_t>(tau - offset) : -1;
  }
  int helper(std::uint32_t tree, std::uint32_t level, std::uint32_t j) const {
    return static_cast<int>(p + tree * t.helpers + t.first[level] + j);
  }
  int rank(std::uint32_t node, std::uint32_t local) const { return static_cast<int>(node * g + local); }
};

// Rank r's own share through its tree: up to its leaf switch after the node's reduction, the total back.
void tree_ends(ScheduleBuilder& b, const Pipeline& x, std::uint32_t r, std::uint64_t tau) {
  const int leaf = x.helper(r % x.g, 0, r / x.g / x.t.leaf);
  if (const auto s = x.at(tau, x.a); s >= 0) b.add(Op::send(leaf, x.chunk(s, r % x.g)));
  if (const auto s = x.at(tau, x.back); s >= 0) b.add(Op::recv_copy(leaf, x.chunk(s, r % x.g)));
}

// A rank whose node reduces by NVLink: share j of the segment to local rank j, its own from each (scatter); then its
// share through the tree; then its share's total to the others, theirs to it (gather).
void rank_with_scatter(ScheduleBuilder& b, const Pipeline& x, std::uint32_t r, std::uint64_t tau) {
  const std::uint32_t node = r / x.g, local = r % x.g;
  if (const auto s = x.at(tau, 0); s >= 0 && x.g > 1) {
    for (std::uint32_t j = 0; j < x.g; ++j)
      if (j != local) b.add(Op::send(x.rank(node, j), x.chunk(s, j)));
    for (std::uint32_t j = 0; j < x.g; ++j)
      if (j != local) b.add(Op::recv_reduce(x.rank(node, j), x.chunk(s, local)));
  }
  tree_ends(b, x, r, tau);
  if (const auto s = x.at(tau, x.last); s >= 0 && x.g > 1) {
    for (std::uint32_t j = 0; j < x.g; ++j)
      if (j != local) b.add(Op::send(x.rank(node, j), x.chunk(s, local)));
    for (std::uint32_t j = 0; j < x.g; ++j)
      if (j != local) b.add(Op::recv_copy(x.rank(node, j), x.chunk(s, j)));
  }
}

// A rank whose node's NVSwitch reduces: to the switch the whole segment (A), then its share's total (C); from it its
// share's node sum (B), then every share's total (D); its share through the tree between B and C.
void rank_with_switch(ScheduleBuilder& b, const Pipeline& x, std::uint32_t r, std::uint64_t tau) {
  const std::uint32_t node = r / x.g, local = r % x.g;
  const int sw = x.first_switch + static_cast<int>(node);
  if (const auto s = x.at(tau, 0); s >= 0) {
    for (std::uint32_t j = 0; j < x.g; ++j)
      b.add(Op::send(sw, x.chunk(s, j)));
  }
  if (const auto s = x.at(tau, x.back + 1); s >= 0) b.add(Op::send(sw, x.chunk(s, local)));
  if (const auto s = x.at(tau, 1); s >= 0) b.add(Op::recv_copy(sw, x.chunk(s, local)));
  if (const auto s = x.at(tau, x.last); s >= 0) {
    for (std::uint32_t j = 0; j < x.g; ++j)
      b.add(Op::recv_copy(sw, x.chunk(s, j)));
  }
  tree_ends(b, x, r, tau);
}

// Node `node`'s NVSwitch: A from every rank (in the order each sends) and C from each share's rank; B to each share's
// rank and D, every share to every rank.
void node_switch(ScheduleBuilder& b, const Pipeline& x, std::uint32_t node, std::uint64_t tau) {
  if (const auto s = x.at(tau, 0); s >= 0) {
    for (std::uint32_t q = 0; q < x.g; ++q)
      for (std::uint32_t j = 0; j < x.g; ++j)
        b.add(Op::recv_reduce(x.rank(node, q), x.chunk(s, j)));
  }
  if (const auto s = x.at(tau, x.back + 1); s >= 0) {
    for (std::uint32_t j = 0; j < x.g; ++j)
      b.add(Op::recv_copy(x.rank(node, j), x.chunk(s, j)));
  }
  if (const auto s = x.at(tau, 1); s >= 0) {
    for (std::uint32_t j = 0; j < x.g; ++j)
      b.add(Op::send(x.rank(node, j), x.chunk(s, j)));
  }
  if (const auto s = x.at(tau, x.last); s >= 0) {
    for (std::uint32_t q = 0; q < x.g; ++q)
      for (std::uint32_t j = 0; j < x.g; ++j)
        b.add(Op::send(x.rank(node, q), x.chunk(s, j)));
  }
}

// Helper h (counted from its tree's first) of tree `tree`: its children's copies up (a level-i switch at step a + i),
// the sum to its parent; the total down from the parent, then to its children.
void tree_switch(ScheduleBuilder& b, const Pipeline& x, std::uint32_t tree, std::uint32_t h, std::uint64_t tau) {
  const Tree& t = x.t;
  std::uint32_t level = 0;
  while (level + 1 < t.levels() && h >= t.first[level + 1])
    ++level;
  const std::uint32_t j = h - t.first[level];
  const std::uint32_t d = t.levels();
  const bool root = level + 1 == d;
  const std::uint32_t per = level == 0 ? t.leaf : t.fanin;
  const std::uint32_t below = level == 0 ? x.nodes : t.count[level - 1];
  const std::uint32_t first_child = j * per, children = std::min(below, first_child + per) - first_child;
  auto child = [&](std::uint32_t c) {
    return level == 0 ? x.rank(first_child + c, tree) : x.helper(tree, level - 1, first_child + c);
  };
  if (const auto s = x.at(tau, x.a + level); s >= 0) {
    for (std::uint32_t c = 0; c < children; ++c)
      b.add(Op::recv_reduce(child(c), x.chunk(s, tree)));
  }
  if (!root) {
    const int parent = x.helper(tree, level + 1, j / t.fanin);
    if (const auto s = x.at(tau, x.a + level + 1); s >= 0) b.add(Op::send(parent, x.chunk(s, tree)));
    if (const auto s = x.at(tau, x.a + 2ULL * d - 2 - level); s >= 0) b.add(Op::recv_copy(parent, x.chunk(s, tree)));
  }
  if (const auto s = x.at(tau, x.a + 2ULL * d - 1 - level); s >= 0) {
    for (std::uint32_t c = 0; c < children; ++c)
      b.add(Op::send(child(c), x.chunk(s, tree)));
  }
}

}  // namespace

Schedule sharp_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  Pipeline x;
  x.p = checked_ranks("sharp", ranks);
  x.g = ranks_per_node(options, x.p);
  x.nodes = x.p / x.g;
  x.t = aggregation_tree(x.nodes, options);
  const std::uint32_t d = x.t.levels();
  const bool nvls = options.text(in_node_option) == "nvls" && x.g > 1;
  const std::uint32_t switches = nvls ? x.nodes : 0;
  const std::uint32_t helpers = x.g * x.t.helpers + switches;
  x.k = segments(x.p, x.g, x.g * x.t.helpers + switches * x.g, bytes, options);
  x.a = x.g == 1 ? 0 : nvls ? 2 : 1;
  x.back = x.a + 2ULL * d - 1;
  x.last = x.back + (x.g == 1 ? 0 : nvls ? 2 : 1);
  x.first_switch = static_cast<int>(x.p + x.g * x.t.helpers);
  ScheduleBuilder builder(Collective::allreduce, "sharp", static_cast<int>(x.p + helpers), bytes,
                          buffer_chunks(bytes, x.k * x.g, options.element_bytes));
  builder.set_participants(ranks);
  builder.set_switch_helpers();
  for (std::uint32_t r = 0; r < x.p + helpers; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (x.k == 0) continue;
    for (std::uint64_t tau = 0; tau <= x.k - 1 + x.last; ++tau) {
      builder.begin_step();
      if (r >= static_cast<std::uint32_t>(x.first_switch)) {
        node_switch(builder, x, r - static_cast<std::uint32_t>(x.first_switch), tau);
      } else if (r >= x.p) {
        tree_switch(builder, x, (r - x.p) / x.t.helpers, (r - x.p) % x.t.helpers, tau);
      } else if (nvls) {
        rank_with_switch(builder, x, r, tau);
      } else {
        rank_with_scatter(builder, x, r, tau);
      }
      // the steady state (every phase under way): one step, the rest repetitions of it one segment (G chunks)
      // further on, drifting as pipelines do
      if (tau == x.last && x.k > x.last + 1) {
        builder.repeat_step(static_cast<std::uint32_t>(x.k - 1 - x.last), x.g, 0, x.k * x.g, false);
        tau = x.k - 1;
      }
    }
  }
  return builder.finish();
}

double sharp_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, const AlgorithmOptions& options) {
  if (bytes == 0 || ranks <= 1) return 0;
  const auto p = static_cast<std::uint32_t>(ranks);
  std::uint64_t per_node = options.number(ranks_per_node_option);
  if (per_node < 1 || p % per_node != 0) return -1.0;
  const auto g = static_cast<std::uint32_t>(per_node);
  const Tree t = aggregation_tree(p / g, options);
  const double k = segments(p, g, g * t.helpers, bytes, options);
  const double share = static_cast<double>(bytes) / (k * g);
  const double tree_steps = 2.0 * t.levels();  // the tree's 2D - 1 steps and the rank's first send
  if (g == 1) return (k + tree_steps - 1) * (cost.alpha_s + share / cost.bandwidth_Bps);
  if (options.text(in_node_option) == "nvls") {  // each step's largest message a whole segment (A and D)
    return (k + tree_steps + 3) * (cost.alpha_s + g * share / cost.bandwidth_Bps);
  }
  // each step of the pipeline: the scatter's or gather's G-1 shares at once (the slowest phase in a step)
  const double step = cost.alpha_s + (g - 1) * share / cost.bandwidth_Bps;
  return (k + tree_steps + 1) * step + (k * (g - 1) * share) / cost.reduce_Bps;
}

}  // namespace dtsim
