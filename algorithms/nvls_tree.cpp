// NVLS tree allreduce: NCCL's NVLS_TREE (NCCL 2.18+ on H100 and later across nodes): NVLS inside each node, the
// double binary tree between nodes. src/graph/tuning.cc (v2.30.7-1) costs it and picks it for large calls across nodes
// of NVSwitch GPUs; Sanders, Speck and Traeff 2009 for the two trees.
// The P ranks sit in N nodes of G (--ranks-per-node); each node's NVSwitch reduces (one helper a node, placed on its
// switch endpoint by place_switch_helpers). The buffer is cut into K segments of at most --segment-size bytes, each
// into G shares, each share into two halves, one per tree. Phases, for each segment, pipelined:
//   A  every rank sends the whole segment to its node's switch, which adds the node's copies up (multimem.ld_reduce);
//   B  the switch returns share j's node sum to local rank j;
//   up and down the trees: local rank j of every node runs dbtree's two complementary trees over the N nodes on
//      share j's halves, a node of height h sending its half up at h steps after B, the roots sending the totals down
//      (pipelined_tree.cpp's timing);
//   C  local rank j sends each half's total back to its switch once it holds it (multimem.st);
//   D  the switch multicasts it to every rank of the node.
//   A rank's NVLink carries (1 + 1/G) n each way, as NVLS does, and its NIC about n/G each way, against the ring's
//   2 (P-1)/P n/G: at two nodes each tree crosses the one pair of NICs once each way (NCCL's "2-node case" that
//   doubles its network bandwidth).
// Cost without contention: (K + 4 + 2H)(alpha + n/K beta) with H the trees' height (a segment's whole trip,
//   its largest message a full segment in A and D); the switches reduce in flight, the ranks nothing.
#include "algorithms/nvls_tree.hpp"

#include <algorithm>
#include <vector>

namespace dtsim {
namespace {

// One of the two trees over the nodes: parent, children, height and depth of each node.
struct NodeTree {
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
  std::vector<std::uint32_t> height;
  std::vector<std::uint32_t> depth;
  std::uint32_t root_height = 0;
};

std::array<NodeTree, 2> node_trees(std::uint32_t nodes) {
  std::array<NodeTree, 2> out;
  const std::array<std::vector<int>, 2> parents = complementary_tree_parents(nodes);
  for (std::size_t t = 0; t < 2; ++t) {
    NodeTree& tree = out[t];
    tree.parent = parents[t];
    tree.children.assign(nodes, {});
    tree.height.assign(nodes, 0);
    tree.depth.assign(nodes, 0);
    for (std::uint32_t n = 0; n < nodes; ++n)
      if (tree.parent[n] >= 0) tree.children[static_cast<std::size_t>(tree.parent[n])].push_back(static_cast<int>(n));
    for (std::uint32_t n = 0; n < nodes; ++n) {  // depth: the walk to the root; height: raised along it
      std::uint32_t d = 0;
      for (int up = tree.parent[n], below = static_cast<int>(n); up >= 0; below = up, up = tree.parent[up]) {
        ++d;
        auto& h = tree.height[static_cast<std::size_t>(up)];
        h = std::max(h, tree.height[static_cast<std::size_t>(below)] + 1);
      }
      tree.depth[n] = d;
    }
    // (heights need a second pass where a deeper leaf was visited before a shallower sibling's walk)
    for (bool changed = true; changed;) {
      changed = false;
      for (std::uint32_t n = 0; n < nodes; ++n) {
        const int up = tree.parent[n];
        if (up < 0) continue;
        auto& h = tree.height[static_cast<std::size_t>(up)];
        if (h < tree.height[n] + 1) {
          h = tree.height[n] + 1;
          changed = true;
        }
      }
    }
    for (std::uint32_t n = 0; n < nodes; ++n)
      if (tree.parent[n] < 0) tree.root_height = tree.height[n];
  }
  return out;
}

// K segments, at least one element a half share; a rank has 2 G + 6 ops a segment, a switch 4 G^2 + 2 G. Where
// --segment-size would give more segments than a schedule holds, fewer and larger ones (a library's calls at scale:
// 16 GB over 128 nodes in 2 MiB steps).
std::uint32_t segments(std::uint32_t p, std::uint32_t g, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint64_t per_segment =
      static_cast<std::uint64_t>(p) * (2ULL * g + 6) + (p / g) * (4ULL * g * g + 2ULL * g);
  const std::uint64_t most = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(bytes / options.element_bytes / (2ULL * g), ScheduleBuilder::max_ops / per_segment));
  return pipeline_segments("nvls-tree", static_cast<int>(p), bytes, options, most, per_segment);
}

}  // namespace

Schedule nvls_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("nvls-tree", ranks);
  const std::uint32_t g = ranks_per_node(options, p);
  const std::uint32_t nodes = p / g;
  const std::array<NodeTree, 2> trees = node_trees(nodes);
  const std::uint32_t k = segments(p, g, bytes, options);
  const std::uint32_t per_segment = 2 * g;  // G shares of two halves
  ScheduleBuilder builder(Collective::allreduce, "nvls-tree", static_cast<int>(p + nodes), bytes,
                          buffer_chunks(bytes, k * per_segment, options.element_bytes));
  builder.set_participants(ranks);
  builder.set_switch_helpers();
  auto chunk = [g](std::int64_t segment, std::uint32_t share, std::size_t half) {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(segment) * g + share) * 2 + half);
  };
  auto at = [k](std::uint64_t tau, std::uint64_t offset) -> std::int64_t {
    return tau >= offset && tau - offset < k ? static_cast<std::int64_t>(tau - offset) : -1;
  };
  // node n's half of tree t: up from a child c at 2 + height(c), to the parent at 2 + height(n); the total down from
  // the parent at 1 + 2 + H + depth(n) (received the step before it is forwarded), to the children at 2 + H + depth(n)
  auto total_at = [&](std::size_t t, std::uint32_t n) {  // the step after which node n holds tree t's total
    const NodeTree& tree = trees[t];
    return static_cast<std::uint64_t>(tree.parent[n] < 0 ? 2ULL + tree.root_height - 1
                                                         : 2ULL + tree.root_height + tree.depth[n] - 1);
  };
  std::uint64_t last = 0;  // the last phase's offset (D)
  for (std::size_t t = 0; t < 2; ++t)
    for (std::uint32_t n = 0; n < nodes; ++n)
      last = std::max<std::uint64_t>(last, total_at(t, n) + 2);
  for (std::uint32_t r = 0; r < p + nodes; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (k == 0 || p == 1) continue;
    for (std::uint64_t tau = 0; tau <= k - 1 + last; ++tau) {
      builder.begin_step();
      if (r < p) {
        const std::uint32_t node = r / g, local = r % g;
        const int sw = static_cast<int>(p + node);
        // to the switch: A, then C of each tree
        if (const auto s = at(tau, 0); s >= 0) {
          for (std::uint32_t j = 0; j < g; ++j)
            for (std::size_t h = 0; h < 2; ++h)
              builder.add(Op::send(sw, chunk(s, j, h)));
        }
        for (std::size_t t = 0; t < 2; ++t)
          if (const auto s = at(tau, total_at(t, node) + 1); s >= 0) builder.add(Op::send(sw, chunk(s, local, t)));
        // from the switch: B, then D of each tree
        if (const auto s = at(tau, 1); s >= 0) {
          for (std::size_t h = 0; h < 2; ++h)
            builder.add(Op::recv_copy(sw, chunk(s, local, h)));
        }
        for (std::size_t t = 0; t < 2; ++t) {
          if (const auto s = at(tau, total_at(t, node) + 2); s >= 0) {
            for (std::uint32_t j = 0; j < g; ++j)
              builder.add(Op::recv_copy(sw, chunk(s, j, t)));
          }
        }
        // the trees between nodes, tree 0 then tree 1: from children, to the parent, from the parent, to children
        for (std::size_t t = 0; t < 2; ++t) {
          const NodeTree& tree = trees[t];
          const std::uint64_t hh = tree.root_height;
          auto peer = [&](int n) { return static_cast<int>(static_cast<std::uint32_t>(n) * g + local); };
          for (const int c : tree.children[node]) {
            if (const auto s = at(tau, 2ULL + tree.height[static_cast<std::size_t>(c)]); s >= 0) {
              builder.add(Op::recv_reduce(peer(c), chunk(s, local, t)));
            }
          }
          if (const int up = tree.parent[node]; up >= 0) {
            if (const auto s = at(tau, 2ULL + tree.height[node]); s >= 0)
              builder.add(Op::send(peer(up), chunk(s, local, t)));
            if (const auto s = at(tau, 2ULL + hh + tree.depth[node] - 1); s >= 0) {
              builder.add(Op::recv_copy(peer(up), chunk(s, local, t)));
            }
          }
          if (const auto s = at(tau, 2ULL + hh + tree.depth[node]); s >= 0) {
            for (const int c : tree.children[node])
              builder.add(Op::send(peer(c), chunk(s, local, t)));
          }
        }
      } else {  // node n's switch
        const std::uint32_t node = r - p;
        auto rank = [&](std::uint32_t q) { return static_cast<int>(node * g + q); };
        if (const auto s = at(tau, 0); s >= 0) {  // A from every rank, in the order each sends
          for (std::uint32_t q = 0; q < g; ++q)
            for (std::uint32_t j = 0; j < g; ++j)
              for (std::size_t h = 0; h < 2; ++h)
                builder.add(Op::recv_reduce(rank(q), chunk(s, j, h)));
        }
        for (std::size_t t = 0; t < 2; ++t) {  // C from each share's rank
          if (const auto s = at(tau, total_at(t, node) + 1); s >= 0) {
            for (std::uint32_t j = 0; j < g; ++j)
              builder.add(Op::recv_copy(rank(j), chunk(s, j, t)));
          }
        }
        if (const auto s = at(tau, 1); s >= 0) {  // B
          for (std::uint32_t j = 0; j < g; ++j)
            for (std::size_t h = 0; h < 2; ++h)
              builder.add(Op::send(rank(j), chunk(s, j, h)));
        }
        for (std::size_t t = 0; t < 2; ++t) {  // D: every share to every rank
          if (const auto s = at(tau, total_at(t, node) + 2); s >= 0) {
            for (std::uint32_t q = 0; q < g; ++q)
              for (std::uint32_t j = 0; j < g; ++j)
                builder.add(Op::send(rank(q), chunk(s, j, t)));
          }
        }
      }
      // the steady state (every phase under way): one step, the rest repetitions of it a segment further on
      if (tau == last && k > last + 1) {
        builder.repeat_step(static_cast<std::uint32_t>(k - 1 - last), per_segment, 0, k * per_segment, false);
        tau = k - 1;
      }
    }
  }
  return builder.finish();
}

double nvls_tree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                             const AlgorithmOptions& options) {
  if (bytes == 0 || ranks <= 1) return 0;
  const auto p = static_cast<std::uint32_t>(ranks);
  const std::uint64_t per_node = options.number(ranks_per_node_option);
  if (per_node < 1 || p % per_node != 0) return -1.0;
  const auto g = static_cast<std::uint32_t>(per_node);
  const std::array<NodeTree, 2> trees = node_trees(p / g);
  const double k = segments(p, g, bytes, options);
  const double height = std::max(trees[0].root_height, trees[1].root_height);
  return (k + 4 + 2 * height) * (cost.alpha_s + static_cast<double>(bytes) / k / cost.bandwidth_Bps);
}

}  // namespace dtsim
