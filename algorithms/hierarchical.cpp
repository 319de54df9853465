// Hierarchical (two-level) allreduce, G ranks per node and N = P/G nodes; rank r is local rank r mod G of node r / G.
// Phases: the buffer is cut into G blocks, block l for local rank l. Intra-node reduce-scatter: a ring over the node's
//   G ranks, moving whole blocks, leaves local rank l with block l summed over its node. Inter-node allreduce: the N
//   ranks with local rank l run the chosen allreduce (any registered one, its schedule embedded unchanged) on block l.
//   Intra-node allgather: a ring over the node's ranks spreads the blocks back. An inner allreduce with helpers in
//   switches (sharp: NCCL's CollNet Direct shape) brings them along, one set per local rank, after the P ranks.
// Cost, with a ring across nodes: (G-1)(alpha + n/G beta + n/G gamma) + 2(N-1)(alpha + n/(GN) beta)
//   + (N-1) n/(GN) gamma + (G-1)(alpha + n/G beta). Its point is where the two levels differ (NVLink inside a node,
//   the NIC between nodes): only n/G per rank crosses the slower network (Horovod's and NCCL's hierarchical modes;
//   Jia et al. 2018, "Highly scalable deep learning training system with mixed-precision", arXiv:1807.11205).
#include "algorithms/hierarchical.hpp"

#include <algorithm>
#include <stdexcept>

#include "algorithms/registry.hpp"

namespace dtsim {

std::uint32_t ranks_per_node(const AlgorithmOptions& options, std::uint32_t ranks) {
  const std::uint64_t g = options.number(ranks_per_node_option);
  if (g < 1 || ranks % g != 0) {
    throw OptionError("ranks-per-node",
                      "expected a divisor of the " + std::to_string(ranks) + " ranks, got " + std::to_string(g));
  }
  return static_cast<std::uint32_t>(g);
}

Schedule hierarchical_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("hierarchical", ranks);
  const std::uint32_t g = ranks_per_node(options, p);
  const AlgorithmInfo* inter_info = nullptr;
  try {
    inter_info = &find_nestable_allreduce(options.text(inter_option));
  } catch (const std::invalid_argument& e) {
    throw OptionError("inter", e.what());
  }
  const std::uint32_t nodes = p / g;
  AlgorithmOptions across = options;  // across nodes each node is one position (--ranks-per-node is this level's)
  across.set(ranks_per_node_option.name, std::uint64_t{1});
  // The blocks, and the inter-node schedule of each. They differ only where blocks differ in size (an even split has
  // at most two sizes), so each size's schedule is built once: 1000 ranks a node over 1000 nodes held a thousand
  // copies of a million-op schedule (16 GB) before.
  const std::vector<Chunk> blocks = buffer_chunks(bytes, g, options.element_bytes);
  std::vector<Schedule> built;            // one per distinct block size
  std::vector<std::uint64_t> built_size;  // its block size
  std::vector<std::size_t> inter;         // by block: its schedule in `built`
  std::vector<Chunk> chunks;
  std::vector<std::uint32_t> block_first;  // first global chunk of each block
  for (const Chunk& block : blocks) {
    // An empty block (fewer bytes than ranks per node) still runs the inner schedule, on zero-byte chunks, like the
    // ring's empty chunks, so that every rank ends holding every (empty) block reduced.
    const bool empty = block.size_bytes == 0;
    const std::uint64_t size = empty ? options.element_bytes : block.size_bytes;
    std::size_t which = 0;
    while (which < built.size() && built_size[which] != size)
      ++which;
    if (which == built.size()) {
      built.push_back(inter_info->build(static_cast<int>(nodes), size, across));
      built_size.push_back(size);
    }
    inter.push_back(which);
    block_first.push_back(static_cast<std::uint32_t>(chunks.size()));
    for (const Chunk& c : built[which].chunks) {
      chunks.push_back(empty ? Chunk{block.offset_bytes, 0} : Chunk{block.offset_bytes + c.offset_bytes, c.size_bytes});
    }
  }
  // an inner schedule's helpers (sharp's switches): H of them for each local rank's allreduce, after the p ranks
  const std::uint32_t helpers =
      built.empty() ? 0 : static_cast<std::uint32_t>(built.front().ranks - built.front().participants);
  ScheduleBuilder builder(Collective::allreduce, "hierarchical", static_cast<int>(p + g * helpers), bytes, chunks);
  if (helpers > 0) {
    builder.set_participants(static_cast<int>(p));
    if (built.front().switch_helpers) builder.set_switch_helpers();
  }
  std::vector<std::uint32_t> block_span;
  for (std::uint32_t l = 0; l < blocks.size(); ++l) {
    const std::uint32_t end = l + 1 < blocks.size() ? block_first[l + 1] : static_cast<std::uint32_t>(chunks.size());
    block_span.push_back(builder.add_span(block_first[l], end - block_first[l]));
  }
  const bool nothing_to_send = bytes == 0 || p == 1;
  if (!nothing_to_send) {  // every rank's intra-node steps, and every block's inner schedule once over the nodes;
    // refused here, before anything is built, when beyond ScheduleBuilder::max_ops
    std::uint64_t ops = static_cast<std::uint64_t>(p) * 4 * (g - 1);
    for (const std::size_t which : inter)
      ops += built[which].op_count();
    builder.reserve_ops(ops);
  }
  // inner position q of local rank `local`'s allreduce, as a position here: node q's rank, or one of its helpers
  auto outer = [&](std::uint32_t local, int q) {
    return q < static_cast<int>(nodes) ? q * static_cast<int>(g) + static_cast<int>(local)
                                       : static_cast<int>(p + local * helpers) + q - static_cast<int>(nodes);
  };
  // the inter-node allreduce of block `local` at inner position q: the inner schedule's ops with ranks and spans
  // translated (and its step repeats with their rotation moved to the block's chunks)
  auto add_inner = [&](std::uint32_t local, std::uint32_t q) {
    const Schedule& inner = built[inter[local]];
    const std::uint64_t first = inner.rank_begin[q], last = inner.rank_begin[q + 1];
    auto repeat = inner.repeats.begin() + static_cast<std::ptrdiff_t>(inner.first_repeat_from(first));
    for (std::uint64_t i = first; i < last; ++i) {
      const Op& op = inner.ops[i];
      if (op.kind() == OpKind::compute) throw std::logic_error("hierarchical: inner allreduce with compute ops");
      if (op.starts_step()) builder.begin_step();
      const Span& sp = inner.spans[op.span()];
      const std::uint32_t span = builder.add_span(block_first[local] + sp.first_chunk, sp.chunk_count);
      builder.add(op.with(outer(local, op.peer()), span));
      const bool step_ends = i + 1 == last || inner.ops[i + 1].starts_step();
      if (step_ends && repeat != inner.repeats.end() && repeat->op < i + 1) {
        builder.repeat_step(repeat->count, repeat->stride, block_first[local] + repeat->base, repeat->modulus,
                            repeat->lockstep);
        ++repeat;
      }
    }
  };
  for (std::uint32_t r = 0; r < p + g * helpers; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    if (r >= p) {  // a helper of local rank l's inner allreduce
      add_inner((r - p) / helpers, nodes + (r - p) % helpers);
      continue;
    }
    const std::uint32_t node = r / g, local = r % g;
    const int next = static_cast<int>(node * g + (local + 1) % g);
    const int prev = static_cast<int>(node * g + (local + g - 1) % g);
    // intra-node reduce-scatter over blocks: local rank l ends with block l
    for (std::uint32_t s = 0; s + 1 < g; ++s) {
      builder.begin_step();
      builder.add(Op::send(next, block_span[(local + 2 * g - s - 1) % g]));
      builder.add(Op::recv_reduce(prev, block_span[(local + 2 * g - s - 2) % g]));
    }
    add_inner(local, node);  // inter-node allreduce of block `local`
    // intra-node allgather of the blocks
    for (std::uint32_t s = 0; s + 1 < g; ++s) {
      builder.begin_step();
      builder.add(Op::send(next, block_span[(local + g - s) % g]));
      builder.add(Op::recv_copy(prev, block_span[(local + 2 * g - s - 1) % g]));
    }
  }
  return builder.finish();
}

double hierarchical_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                      const AlgorithmOptions& options) {
  const std::uint64_t per_node = options.number(ranks_per_node_option);
  const AlgorithmInfo* inter = nullptr;
  try {
    inter = &find_nestable_allreduce(options.text(inter_option));
  } catch (const std::invalid_argument&) {
    return -1.0;
  }
  if (per_node < 1) return -1.0;
  if (ranks <= 1 || bytes == 0) return 0.0;
  const auto g = static_cast<double>(per_node);
  const double block = static_cast<double>(bytes) / g;
  const auto block_bytes = static_cast<std::uint64_t>(block);
  const double inter_s = inter->closed_form_seconds(ranks / static_cast<int>(per_node), block_bytes, cost, options);
  if (inter_s < 0) return -1.0;
  const double intra = (g - 1.0) * (2.0 * cost.alpha_s + 2.0 * block / cost.bandwidth_Bps + block / cost.reduce_Bps);
  return intra + inter_s;
}

}  // namespace dtsim
