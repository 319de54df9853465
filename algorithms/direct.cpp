// Direct allreduce. The buffer is cut into P chunks; rank r owns chunk r.
// Phases: reduce-scatter in one step: every rank sends chunk c to its owner c for every c != r, and receives and adds
//   chunk r from every other rank. Allgather in one step: every rank sends its reduced chunk r to every other rank and
//   receives every other chunk from its owner.
// Cost without contention: 2 (alpha + n/P beta) + (P-1) n/P gamma. Every rank sends and receives P-1 messages at once,
//   so on a network where a host has one link the messages share it and the cost becomes
//   2 (alpha + (P-1) n/P beta) + (P-1) n/P gamma: the ring's bandwidth term with 2 latencies instead of 2(P-1)
//   (the all-to-all based allreduce, as in Thakur et al. 2005 and NCCL's "direct"/one-shot variants).
#include "algorithms/direct.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dtsim {

namespace {

std::uint64_t elements_of(const AllPairs& a) { return a.bytes / a.element_bytes; }

// The chunk that a message of a step carries from sender s to receiver q.
std::uint32_t block_of(PairBlock block, std::uint32_t s, std::uint32_t q, std::uint32_t p) {
  switch (block) {
    case PairBlock::receiver_chunk: return q;
    case PairBlock::sender_chunk: return s;
    case PairBlock::pair_block: break;
  }
  return s * p + q;
}

AllPairs all_pairs(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                   std::vector<AllPairsStep> steps) {
  AllPairs a;
  a.collective = collective;
  a.ranks = static_cast<int>(checked_ranks("direct", ranks));
  a.bytes = bytes;
  a.element_bytes = options.element_bytes;
  if (options.element_bytes == 0 || bytes % options.element_bytes != 0) {
    throw std::invalid_argument("direct: " + std::to_string(bytes) + " bytes is not a whole number of " +
                                std::to_string(options.element_bytes) + "-byte elements");
  }
  if (ranks > 1 && bytes > 0) a.steps = std::move(steps);
  return a;
}

}  // namespace

std::uint64_t AllPairs::chunk_count() const {
  if (bytes == 0) return 0;  // (an empty buffer has no chunks: buffer_chunks)
  const auto p = static_cast<std::uint64_t>(ranks);
  const bool pairs =
      std::any_of(steps.begin(), steps.end(), [](const AllPairsStep& s) { return s.block == PairBlock::pair_block; });
  return pairs || collective == Collective::alltoall ? p * p : p;
}

std::uint64_t AllPairs::chunk_bytes(std::uint64_t i) const {
  const std::uint64_t c = chunk_count();
  if (c == 0) return 0;
  return (elements_of(*this) / c + (i < elements_of(*this) % c ? 1 : 0)) * element_bytes;
}

std::uint64_t AllPairs::largest_chunk_bytes() const { return chunk_bytes(0); }

std::uint64_t AllPairs::smallest_chunk_bytes() const {
  const std::uint64_t c = chunk_count();
  return c == 0 ? 0 : chunk_bytes(c - 1);
}

std::uint64_t AllPairs::messages() const {
  const auto p = static_cast<std::uint64_t>(ranks);
  return steps.size() * p * (p - 1);
}

std::uint64_t AllPairs::op_count() const { return 2 * messages(); }

std::uint64_t AllPairs::bytes_sent() const {
  const auto p = static_cast<std::uint64_t>(ranks);
  std::uint64_t total = 0;
  for (const AllPairsStep& s : steps) {
    if (s.block != PairBlock::pair_block) {  // every chunk goes to the P - 1 ranks that do not hold it
      total += (p - 1) * bytes;
      continue;
    }
    // every block but the diagonal's (block r P + r stays on rank r); split_even gives the first `remainder` blocks
    // an element more
    const std::uint64_t c = chunk_count();
    const std::uint64_t remainder = elements_of(*this) % c;
    const std::uint64_t long_diagonal = std::min(p, (remainder + p) / (p + 1));  // r with r (P + 1) < remainder
    total += bytes - (p * smallest_chunk_bytes() + long_diagonal * element_bytes);
  }
  return total;
}

AllPairs direct_allreduce_pairs(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return all_pairs(Collective::allreduce, ranks, bytes, options,
                   {{PairBlock::receiver_chunk, OpKind::recv_reduce}, {PairBlock::sender_chunk, OpKind::recv_copy}});
}

AllPairs direct_alltoall_pairs(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return all_pairs(Collective::alltoall, ranks, bytes, options, {{PairBlock::pair_block, OpKind::recv_copy}});
}

Schedule build_all_pairs(const AllPairs& a) {
  const auto p = static_cast<std::uint32_t>(a.ranks);
  // refused before its blocks are laid out (an all-to-all's P x P take more memory than its ops)
  ScheduleBuilder::check_ops(a.algorithm, a.ranks, a.op_count());
  ScheduleBuilder builder(a.collective, a.algorithm, a.ranks, a.bytes,
                          buffer_chunks(a.bytes, static_cast<std::uint32_t>(a.chunk_count()), a.element_bytes));
  builder.reserve_ops(a.op_count());
  if (a.collective == Collective::alltoall && a.bytes > 0) {
    builder.set_chunk_blocks(identity_blocks(static_cast<std::uint32_t>(a.chunk_count())));
  }
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    for (const AllPairsStep& step : a.steps) {
      builder.begin_step();
      for (std::uint32_t q = 0; q < p; ++q) {
        if (q == r) continue;
        builder.add(Op::send(static_cast<int>(q), block_of(step.block, r, q, p)));
        const std::uint32_t incoming = block_of(step.block, q, r, p);
        builder.add(step.receive == OpKind::recv_reduce ? Op::recv_reduce(static_cast<int>(q), incoming)
                                                        : Op::recv_copy(static_cast<int>(q), incoming));
      }
    }
  }
  return builder.finish();
}

Schedule direct_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return build_all_pairs(direct_allreduce_pairs(ranks, bytes, options));
}

namespace {

// Gather (to_root) or scatter (from the root): block r of P moves between rank r and the root in one step.
Schedule linear_root(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("direct", ranks);
  ScheduleBuilder builder(collective, "direct", ranks, bytes, buffer_chunks(bytes, p, options.element_bytes));
  if (bytes > 0) builder.set_chunk_blocks(identity_blocks(p));
  builder.set_root(static_cast<int>(options.root));
  const bool to_root = collective == Collective::gather;
  const auto root = static_cast<int>(options.root);
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (bytes == 0 || p == 1) continue;
    builder.begin_step();
    if (static_cast<int>(r) != root) {
      builder.add(to_root ? Op::send(root, r) : Op::recv_copy(root, r));
      continue;
    }
    for (std::uint32_t q = 0; q < p; ++q) {
      if (q != r) builder.add(to_root ? Op::recv_copy(static_cast<int>(q), q) : Op::send(static_cast<int>(q), q));
    }
  }
  return builder.finish();
}

}  // namespace

// Gather: cost alpha + n/P beta without contention; the root's link carries (P-1) n/P, so alpha + (P-1) n/P beta on a
// star (Thakur et al. 2005 use a binomial tree for short messages; linear is MPICH's choice for long ones).
Schedule direct_gather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return linear_root(Collective::gather, ranks, bytes, options);
}

// Scatter: the mirror image of gather, with the same costs.
Schedule direct_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return linear_root(Collective::scatter, ranks, bytes, options);
}

// All-to-all: the buffer is P x P blocks (block i*P + j goes from rank i to rank j); every rank sends its P-1 outgoing
// blocks and receives its P-1 incoming ones in one step. Cost alpha + n/P^2 beta without contention and
// alpha + (P-1) n/P^2 beta with one link per host (Thakur et al. 2005, section 3.5, long messages).
Schedule direct_alltoall(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return build_all_pairs(direct_alltoall_pairs(ranks, bytes, options));
}

}  // namespace dtsim
