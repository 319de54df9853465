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

Schedule sharp_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("sharp", ranks);
  const std::uint32_t g = ranks_per_node(options, p);
  const std::uint32_t nodes = p / g;
  const Tree t = aggregation_tree(nodes, options);
  const std::uint32_t d = t.levels();
  const bool nvls = options.text(in_node_option) == "nvls" && g > 1;
  const std::uint32_t switches = nvls ? nodes : 0;  // the nodes' NVSwitches, after the trees' helpers
  const std::uint32_t k = segments(p, g, g * t.helpers + switches * g, bytes, options);
  ScheduleBuilder builder(Collective::allreduce, "sharp", static_cast<int>(p + g * t.helpers + switches), bytes,
                          buffer_chunks(bytes, k * g, options.element_bytes));
  builder.set_participants(ranks);
  builder.set_switch_helpers();
  auto chunk = [g](std::int64_t segment, std::uint32_t share) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(segment) * g + share);
  };
  // segment in the phase at `offset` at step tau, or -1
  auto at = [k](std::uint64_t tau, std::uint64_t offset) -> std::int64_t {
    return tau >= offset && tau - offset < k ? static_cast<std::int64_t>(tau - offset) : -1;
  };
  // where tree helper h (counted from its tree's first) sits: its level and index there
  auto level_of = [&t](std::uint32_t h) {
    std::uint32_t level = 0;
    while (level + 1 < t.levels() && h >= t.first[level + 1])
      ++level;
    return level;
  };
  auto helper = [&](std::uint32_t tree, std::uint32_t level, std::uint32_t j) {
    return static_cast<int>(p + tree * t.helpers + t.first[level] + j);
  };
  // the steps before the tree: none, the scatter, or the switch's reduction and its return of share j
  const std::uint64_t a = g == 1 ? 0 : nvls ? 2 : 1;
  const std::uint64_t back = a + 2ULL * d - 1;                    // a rank receives its share's total
  const std::uint64_t last = back + (g == 1 ? 0 : nvls ? 2 : 1);  // the gather, or the store and the multicast
  const int first_switch = static_cast<int>(p + g * t.helpers);
  for (std::uint32_t r = 0; r < p + g * t.helpers + switches; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (k == 0) continue;
    for (std::uint64_t tau = 0; tau <= k - 1 + last; ++tau) {
      builder.begin_step();
      if (r < p && nvls) {
        const std::uint32_t node = r / g, local = r % g;
        const int leaf = helper(local, 0, node / t.leaf);
        const int sw = first_switch + static_cast<int>(node);
        // to the switch: the whole segment (A), then the share's total (C); from it: the share's node sum (B), then
        // every share's total (D)
        if (const auto s = at(tau, 0); s >= 0) {
          for (std::uint32_t j = 0; j < g; ++j)
            builder.add(Op::send(sw, chunk(s, j)));
        }
        if (const auto s = at(tau, back + 1); s >= 0) builder.add(Op::send(sw, chunk(s, local)));
        if (const auto s = at(tau, 1); s >= 0) builder.add(Op::recv_copy(sw, chunk(s, local)));
        if (const auto s = at(tau, last); s >= 0) {
          for (std::uint32_t j = 0; j < g; ++j)
            builder.add(Op::recv_copy(sw, chunk(s, j)));
        }
        if (const auto s = at(tau, a); s >= 0) builder.add(Op::send(leaf, chunk(s, local)));
        if (const auto s = at(tau, back); s >= 0) builder.add(Op::recv_copy(leaf, chunk(s, local)));
      } else if (r >= static_cast<std::uint32_t>(first_switch)) {  // node n's NVSwitch
        const std::uint32_t node = r - static_cast<std::uint32_t>(first_switch);
        auto rank = [&](std::uint32_t q) { return static_cast<int>(node * g + q); };
        if (const auto s = at(tau, 0); s >= 0) {  // A from every rank, in the order each sends
          for (std::uint32_t q = 0; q < g; ++q)
            for (std::uint32_t j = 0; j < g; ++j)
              builder.add(Op::recv_reduce(rank(q), chunk(s, j)));
        }
        if (const auto s = at(tau, back + 1); s >= 0) {  // C: each share's total from its rank
          for (std::uint32_t j = 0; j < g; ++j)
            builder.add(Op::recv_copy(rank(j), chunk(s, j)));
        }
        if (const auto s = at(tau, 1); s >= 0) {  // B
          for (std::uint32_t j = 0; j < g; ++j)
            builder.add(Op::send(rank(j), chunk(s, j)));
        }
        if (const auto s = at(tau, last); s >= 0) {  // D: every share to every rank
          for (std::uint32_t q = 0; q < g; ++q)
            for (std::uint32_t j = 0; j < g; ++j)
              builder.add(Op::send(rank(q), chunk(s, j)));
        }
      } else if (r < p) {
        const std::uint32_t node = r / g, local = r % g;
        const int leaf = helper(local, 0, node / t.leaf);
        if (const auto s = at(tau, 0); s >= 0 && g > 1) {  // scatter: share j to local rank j, ours from each
          for (std::uint32_t j = 0; j < g; ++j)
            if (j != local) builder.add(Op::send(static_cast<int>(node * g + j), chunk(s, j)));
          for (std::uint32_t j = 0; j < g; ++j)
            if (j != local) builder.add(Op::recv_reduce(static_cast<int>(node * g + j), chunk(s, local)));
        }
        if (const auto s = at(tau, a); s >= 0) builder.add(Op::send(leaf, chunk(s, local)));
        if (const auto s = at(tau, back); s >= 0) builder.add(Op::recv_copy(leaf, chunk(s, local)));
        if (const auto s = at(tau, last); s >= 0 && g > 1) {  // gather: our share to the others, theirs to us
          for (std::uint32_t j = 0; j < g; ++j)
            if (j != local) builder.add(Op::send(static_cast<int>(node * g + j), chunk(s, local)));
          for (std::uint32_t j = 0; j < g; ++j)
            if (j != local) builder.add(Op::recv_copy(static_cast<int>(node * g + j), chunk(s, j)));
        }
      } else {  // a switch of tree `tree` (local rank `tree`'s share)
        const std::uint32_t tree = (r - p) / t.helpers, h = (r - p) % t.helpers;
        const std::uint32_t level = level_of(h), j = h - t.first[level];
        const bool root = level + 1 == d;
        const int parent = root ? -1 : helper(tree, level + 1, j / t.fanin);
        const std::uint32_t per = level == 0 ? t.leaf : t.fanin;
        const std::uint32_t below = level == 0 ? nodes : t.count[level - 1];
        const std::uint32_t first_child = j * per, children = std::min(below, first_child + per) - first_child;
        auto child = [&](std::uint32_t c) {
          return level == 0 ? static_cast<int>((first_child + c) * g + tree) : helper(tree, level - 1, first_child + c);
        };
        if (const auto s = at(tau, a + level); s >= 0) {
          for (std::uint32_t c = 0; c < children; ++c)
            builder.add(Op::recv_reduce(child(c), chunk(s, tree)));
        }
        if (!root) {
          if (const auto s = at(tau, a + level + 1); s >= 0) builder.add(Op::send(parent, chunk(s, tree)));
          if (const auto s = at(tau, a + 2ULL * d - 2 - level); s >= 0) {
            builder.add(Op::recv_copy(parent, chunk(s, tree)));
          }
        }
        if (const auto s = at(tau, a + 2ULL * d - 1 - level); s >= 0) {
          for (std::uint32_t c = 0; c < children; ++c)
            builder.add(Op::send(child(c), chunk(s, tree)));
        }
      }
      // the steady state (every phase under way): one step, the rest repetitions of it one segment (G chunks)
      // further on, drifting as pipelines do
      if (tau == last && k > last + 1) {
        builder.repeat_step(static_cast<std::uint32_t>(k - 1 - last), g, 0, k * g, false);
        tau = k - 1;
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
