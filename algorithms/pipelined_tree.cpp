// Pipelined binary-tree allreduce, and NCCL's double binary tree.
// Phases: the buffer is cut into K segments of at most --segment-size bytes. Reduce: a segment climbs the tree, each
//   node adding its children's copies before passing it up, one segment per step, so that segment j leaves a node of
//   height h at step j + h. Broadcast: the root sends each segment down as soon as it holds its sum; a node at depth d
//   receives segment j at step j + H + d - 1 and forwards it one step later. Both phases overlap: a node receives,
//   reduces and forwards different segments in the same step.
//   pipelined-tree: one heap-shaped binary tree (children of r are 2r+1 and 2r+2), height H = floor(log2 P).
//   dbtree: two in-order binary trees, each moving half of the buffer; the second is the first mirrored (r -> P-1-r)
//   for even P, shifted by one for odd P, so that every rank that is a leaf of one tree is an inner node of the other
//   and no rank forwards more than one tree's traffic (Sanders, Speck and Traeff 2009, "Two-tree algorithms for full
//   bandwidth broadcast, reduction and scan", Parallel Computing 35(12); NCCL 2.4's double binary tree).
//   chain-dbtree: NCCL's tree as it lays it on nodes of G ranks (--ranks-per-node; src/graph/trees.cc, connect.cc):
//   dbtree's two trees over the nodes, and inside each node a chain through its ranks hanging from the node's head
//   (rank 0 of the node in the first tree, rank G-1 in the second, the chain running the other way), so that
//   H = (G - 1) + the nodes' tree height: NCCL's 2 ((G - 1) intra + log2(nodes) inter) latency terms.
// Cost without contention, with segments of s bytes: (K + 2H - 1)(alpha + s beta) plus up to 2 s gamma per step of
//   reduction; dbtree with K = ceil(n/2 / segment) per tree and H the in-order tree's height floor(log2(P-1)) + 1.
//   On a single link per host the steady state carries three segments each way through an inner node of the
//   pipelined tree (two up from children, one down from the parent): about 3 n beta, against the double tree's
//   2 n beta (Patarasuk and Yuan 2009 discuss the same bandwidth argument for trees).
#include "algorithms/pipelined_tree.hpp"

#include "algorithms/hierarchical.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <string>

namespace dtsim {
namespace {

// A rooted tree over ranks 0..P-1, at most three children a node (a binary tree's two; a node's head in NCCL's tree:
// the next rank of its chain and the heads of two child nodes), with each node's height (0 at leaves) and depth (0 at
// the root).
struct BinaryTree {
  std::vector<int> parent;                   // -1 at the root
  std::vector<std::array<int, 3>> children;  // -1 where there is none
  std::vector<std::uint32_t> height;
  std::vector<std::uint32_t> depth;
  int root = 0;
  std::uint32_t root_height = 0;

  explicit BinaryTree(std::uint32_t p) : parent(p, -1), children(p, {-1, -1, -1}), height(p, 0), depth(p, 0) {}

  void link(int up, int down, int slot) {
    parent[static_cast<std::size_t>(down)] = up;
    children[static_cast<std::size_t>(up)][static_cast<std::size_t>(slot)] = down;
  }

  // Depths from the root down, heights from the leaves up; order lists parents before their children.
  void finish(const std::vector<int>& order) {
    for (int v : order) {
      const int up = parent[static_cast<std::size_t>(v)];
      if (up >= 0) depth[static_cast<std::size_t>(v)] = depth[static_cast<std::size_t>(up)] + 1;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int up = parent[static_cast<std::size_t>(*it)];
      if (up >= 0) {
        auto& h = height[static_cast<std::size_t>(up)];
        h = std::max(h, height[static_cast<std::size_t>(*it)] + 1);
      }
    }
    root_height = height[static_cast<std::size_t>(root)];
  }
};

// Heap order: the children of r are 2r+1 and 2r+2.
BinaryTree heap_tree(std::uint32_t p) {
  BinaryTree tree(p);
  std::vector<int> order(p);
  for (std::uint32_t r = 0; r < p; ++r) {
    order[r] = static_cast<int>(r);
    for (std::uint32_t slot = 0; slot < 2; ++slot) {
      const std::uint64_t child = 2ULL * r + 1 + slot;
      if (child < p) tree.link(static_cast<int>(r), static_cast<int>(child), static_cast<int>(slot));
    }
  }
  tree.finish(order);
  return tree;
}

// In-order tree on positions 0..P-1: position 0 is the root with the single child bit_floor(P-1); a position x whose
// lowest set bit is b covers (x - b, x + b) and has children x - b/2 and the largest-bit position in (x, min(x+b, P)).
// Odd positions are leaves. `rank_at` maps positions to ranks (identity, mirror or shift).
template <typename RankAt>
BinaryTree in_order_tree(std::uint32_t p, RankAt rank_at) {
  BinaryTree tree(p);
  tree.root = rank_at(0U);
  std::vector<int> order{tree.root};
  order.reserve(p);
  std::vector<std::uint32_t> stack;
  if (p > 1) {
    const std::uint32_t top = std::bit_floor(p - 1);
    tree.link(tree.root, rank_at(top), 1);
    stack.push_back(top);
  }
  while (!stack.empty()) {
    const std::uint32_t x = stack.back();
    stack.pop_back();
    order.push_back(rank_at(x));
    const std::uint32_t b = x & (~x + 1);
    if (b == 1) continue;
    const std::uint32_t left = x - b / 2;  // always inside (x - b, x)
    tree.link(rank_at(x), rank_at(left), 0);
    stack.push_back(left);
    for (std::uint32_t half = b / 2; half >= 1; half /= 2) {  // the right child: first of x + b/2, x + b/4, ... < P
      if (x + half < p) {
        tree.link(rank_at(x), rank_at(x + half), 1);
        stack.push_back(x + half);
        break;
      }
    }
  }
  tree.finish(order);
  return tree;
}

// NCCL's tree over `nodes` nodes of `g` ranks (rank = node x g + local): inside each node a chain from its head
// (local `head`, then one step `step` = +1 or -1 at a time), across nodes the in-order tree `across` of the nodes'
// heads; a head's children are the next rank of its chain and the heads of its child nodes.
BinaryTree chain_tree(std::uint32_t nodes, std::uint32_t g, const BinaryTree& across, std::uint32_t head, int step) {
  BinaryTree tree(nodes * g);
  auto rank = [g](std::uint32_t node, std::uint32_t local) { return static_cast<int>(node * g + local); };
  tree.root = rank(static_cast<std::uint32_t>(across.root), head);
  std::vector<int> order;
  order.reserve(nodes * g);
  std::vector<std::uint32_t> queue{static_cast<std::uint32_t>(across.root)};  // nodes, parents first
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const std::uint32_t n = queue[i];
    std::uint32_t local = head;
    for (std::uint32_t k = 0; k < g; ++k) {  // the chain, head first
      order.push_back(rank(n, local));
      if (k + 1 < g) {
        const auto next = static_cast<std::uint32_t>(static_cast<int>(local) + step);
        tree.link(rank(n, local), rank(n, next), 0);
        local = next;
      }
    }
    int slot = 1;
    for (const int child : across.children[n]) {
      if (child < 0) continue;
      tree.link(rank(n, head), rank(static_cast<std::uint32_t>(child), head), slot++);
      queue.push_back(static_cast<std::uint32_t>(child));
    }
  }
  tree.finish(order);
  return tree;
}

// One tree carrying the chunks [first_chunk, first_chunk + segments).
struct TreeJob {
  BinaryTree tree;
  std::uint32_t first_chunk = 0;
  std::uint32_t segments = 0;
};

// Segment j of a job happens at a step tau given by the formulas in the file comment; a rank's steps are the taus at
// which any job gives it something to do, jobs in order and, within a job, reduce ops before broadcast ops. Both ends
// of a transfer list it at the same tau in the same order, so k-th sends match k-th receives and no step waits on a
// later one.
// Each op of a rank's step is active for the K taus [offset, offset + K) of its kind; where all of the rank's kinds are
// active at once (the pipeline's steady state), a step is the one before with every segment one further on, so it is
// stored once with a StepRepeat (stride 1, over all `chunk_count` chunks: no segment wraps) and the schedule stays
// O(P (H + jobs)) ops instead of O(P K).
void emit_rank(ScheduleBuilder& builder, const std::vector<TreeJob>& jobs, int r, std::uint64_t last_tau,
               std::uint32_t chunk_count) {
  const auto v = static_cast<std::size_t>(r);
  // the taus at which every op kind this rank has is active: [steady_from, steady_to)
  std::uint64_t steady_from = 0;
  std::uint64_t steady_to = last_tau + 1;
  auto active_for = [&](std::uint64_t offset, std::uint64_t k) {
    steady_from = std::max(steady_from, offset);
    steady_to = std::min(steady_to, offset + k);
  };
  for (const TreeJob& job : jobs) {
    const BinaryTree& t = job.tree;
    const std::uint64_t hh = t.root_height;
    for (int c : t.children[v]) {
      if (c >= 0) active_for(t.height[static_cast<std::size_t>(c)], job.segments);
    }
    if (t.parent[v] >= 0) {
      active_for(t.height[v], job.segments);
      active_for(hh + t.depth[v] - 1, job.segments);  // receives segment j at tau + 1 = hh + depth + j
    }
    if (std::any_of(t.children[v].begin(), t.children[v].end(), [](int c) { return c >= 0; })) {
      active_for(hh + t.depth[v], job.segments);
    }
  }
  for (std::uint64_t tau = 0; tau <= last_tau; ++tau) {
    builder.begin_step();
    for (const TreeJob& job : jobs) {
      const BinaryTree& t = job.tree;
      const std::uint64_t k = job.segments;
      const std::uint64_t hh = t.root_height;
      auto segment = [&](std::uint64_t at, std::uint64_t offset) -> std::int64_t {
        return at >= offset && at - offset < k ? static_cast<std::int64_t>(at - offset) : -1;
      };
      auto chunk = [&](std::int64_t j) { return job.first_chunk + static_cast<std::uint32_t>(j); };
      for (int c : t.children[v]) {
        if (c < 0) continue;
        if (auto j = segment(tau, t.height[static_cast<std::size_t>(c)]); j >= 0) {
          builder.add(Op::recv_reduce(c, chunk(j)));
        }
      }
      const int up = t.parent[v];
      if (up >= 0) {
        if (auto j = segment(tau, t.height[v]); j >= 0) builder.add(Op::send(up, chunk(j)));
        if (auto j = segment(tau + 1, hh + t.depth[v]); j >= 0) builder.add(Op::recv_copy(up, chunk(j)));
      }
      if (auto j = segment(tau, hh + t.depth[v]); j >= 0) {
        for (int c : t.children[v]) {
          if (c >= 0) builder.add(Op::send(c, chunk(j)));
        }
      }
    }
    if (tau == steady_from && steady_to > steady_from + 1) {
      builder.repeat_step(static_cast<std::uint32_t>(steady_to - steady_from - 1), 1, 0, chunk_count, false);
      tau = steady_to - 1;
    }
  }
}

Schedule run_trees(const char* name, int ranks, std::uint64_t bytes, std::vector<std::uint64_t> part_bytes,
                   std::vector<BinaryTree> trees, const AlgorithmOptions& options) {
  std::vector<Chunk> chunks;
  std::vector<TreeJob> jobs;
  std::uint64_t offset = 0;
  std::uint64_t last_tau = 0;
  std::uint64_t op_count = 0;
  for (std::size_t i = 0; i < trees.size(); ++i) {
    // every tree edge carries each segment up and down: 4 ops per segment, edge and tree
    const std::uint32_t k =
        pipeline_segments(name, ranks, part_bytes[i], options, part_bytes[i] / options.element_bytes,
                          4ULL * static_cast<std::uint64_t>(ranks) * trees.size());
    TreeJob job{std::move(trees[i]), static_cast<std::uint32_t>(chunks.size()), k};
    if (k > 0) {
      for (Chunk c : split_even(part_bytes[i], k, options.element_bytes)) {
        chunks.push_back(Chunk{offset + c.offset_bytes, c.size_bytes});
      }
      last_tau = std::max<std::uint64_t>(last_tau, k + 2ULL * job.tree.root_height - 2);
      op_count += 4ULL * k * static_cast<std::uint64_t>(ranks - 1);
      jobs.push_back(std::move(job));
    }
    offset += part_bytes[i];
  }
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  // every rank walks every step of the pipeline (a chain through G ranks makes it about 2 G long): refused like ops
  if (!nothing_to_send && (last_tau + 1) * static_cast<std::uint64_t>(ranks) > ScheduleBuilder::max_ops) {
    throw std::invalid_argument(std::string(name) + " for " + std::to_string(ranks) + " ranks runs " +
                                std::to_string(last_tau + 1) + " pipeline steps on each, more than " +
                                std::to_string(ScheduleBuilder::max_ops) +
                                " rank-steps in all: use fewer ranks a node (--ranks-per-node) or larger segments");
  }
  const std::size_t chunk_count = chunks.size();
  ScheduleBuilder builder(Collective::allreduce, name, ranks, bytes, std::move(chunks));
  if (!nothing_to_send) builder.reserve_ops(op_count);
  for (int r = 0; r < ranks; ++r) {
    builder.begin_rank(r);
    if (!nothing_to_send) emit_rank(builder, jobs, r, last_tau, static_cast<std::uint32_t>(chunk_count));
  }
  return builder.finish();
}

// dbtree's two in-order trees over p positions: the second is the first mirrored (r -> p-1-r) for even p, shifted by
// one for odd p, so that every leaf of one is an inner node of the other.
std::array<BinaryTree, 2> complementary_trees(std::uint32_t p) {
  BinaryTree first = in_order_tree(p, [](std::uint32_t x) { return static_cast<int>(x); });
  BinaryTree second = p % 2 == 0 ? in_order_tree(p, [p](std::uint32_t x) { return static_cast<int>(p - 1 - x); })
                                 : in_order_tree(p, [p](std::uint32_t x) { return static_cast<int>((x + 1) % p); });
  return {std::move(first), std::move(second)};
}

// The two trees' shares of the buffer (nothing for an empty one).
std::vector<std::uint64_t> halves(std::uint64_t bytes, const AlgorithmOptions& options) {
  if (bytes == 0) return {0, 0};
  const std::vector<Chunk> split = split_even(bytes, 2, options.element_bytes);
  return {split[0].size_bytes, split[1].size_bytes};
}

}  // namespace

std::array<std::vector<int>, 2> complementary_tree_parents(std::uint32_t p) {
  std::array<BinaryTree, 2> pair = complementary_trees(p);
  return {std::move(pair[0].parent), std::move(pair[1].parent)};
}

Schedule pipelined_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("pipelined-tree", ranks);
  std::vector<BinaryTree> trees;
  trees.push_back(heap_tree(p));
  return run_trees("pipelined-tree", ranks, bytes, {bytes}, std::move(trees), options);
}

Schedule double_binary_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("dbtree", ranks);
  std::array<BinaryTree, 2> pair = complementary_trees(p);
  std::vector<BinaryTree> trees;
  trees.push_back(std::move(pair[0]));
  trees.push_back(std::move(pair[1]));
  return run_trees("dbtree", ranks, bytes, halves(bytes, options), std::move(trees), options);
}

Schedule chain_dbtree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("chain-dbtree", ranks);
  const std::uint32_t g = ranks_per_node(options, p);
  const std::uint32_t nodes = p / g;
  // the nodes' two trees, as dbtree's; the second tree's chains run the other way, from the node's last rank, so that
  // the two trees cross nodes through different ranks (and their NICs)
  const std::array<BinaryTree, 2> across = complementary_trees(nodes);
  std::vector<BinaryTree> trees;
  trees.push_back(chain_tree(nodes, g, across[0], 0, +1));
  trees.push_back(chain_tree(nodes, g, across[1], g - 1, -1));
  return run_trees("chain-dbtree", ranks, bytes, halves(bytes, options), std::move(trees), options);
}

std::uint32_t pipeline_segments(const char* name, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                                std::uint64_t most, std::uint64_t ops_per_segment) {
  const std::uint64_t segment_bytes = options.number(segment_size_option);
  if (segment_bytes == 0) throw OptionError("segment-size", "must be at least 1 byte, got 0");
  if (bytes == 0) return 0;
  const std::uint64_t k = std::min(most, (bytes + segment_bytes - 1) / segment_bytes);
  if (k * ops_per_segment > ScheduleBuilder::max_ops) {
    throw OptionError("segment-size", std::string(name) + ": " + std::to_string(segment_bytes) + "-byte segments of " +
                                          std::to_string(bytes) + " bytes over " + std::to_string(ranks) +
                                          " ranks need more than " + std::to_string(ScheduleBuilder::max_ops) +
                                          " ops; use larger segments");
  }
  return static_cast<std::uint32_t>(k);
}

double pipelined_tree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                  const AlgorithmOptions& options) {
  return pipelined_tree_allreduce_seconds(ranks, bytes, cost, options.number(segment_size_option));
}

double double_binary_tree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                      const AlgorithmOptions& options) {
  return double_binary_tree_allreduce_seconds(ranks, bytes, cost, options.number(segment_size_option));
}

double chain_dbtree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                const AlgorithmOptions& options) {
  return chain_double_binary_tree_allreduce_seconds(ranks, bytes, cost, options.number(segment_size_option),
                                                    static_cast<int>(options.number(ranks_per_node_option)));
}

}  // namespace dtsim
