// Direct allreduce. The buffer is cut into P chunks; rank r owns chunk r.
// Phases: reduce-scatter in one step: every rank sends chunk c to its owner c for every c != r, and receives and adds
//   chunk r from every other rank. Allgather in one step: every rank sends its reduced chunk r to every other rank and
//   receives every other chunk from its owner.
// Cost without contention: 2 (alpha + n/P beta) + (P-1) n/P gamma. Every rank sends and receives P-1 messages at once,
//   so on a network where a host has one link the messages share it and the cost becomes
//   2 (alpha + (P-1) n/P beta) + (P-1) n/P gamma: the ring's bandwidth term with 2 latencies instead of 2(P-1)
//   (the all-to-all based allreduce, as in Thakur et al. 2005 and NCCL's "direct"/one-shot variants).
#include "algorithms/direct.hpp"

#include <stdexcept>

namespace dtsim {

Schedule direct_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("direct", ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(Collective::allreduce, "direct", ranks, bytes,
                          buffer_chunks(bytes, p, options.element_bytes));
  if (!nothing_to_send) builder.reserve_ops(4ULL * p * (p - 1));
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    builder.begin_step();
    for (std::uint32_t q = 0; q < p; ++q) {
      if (q == r) continue;
      builder.add(Op::send(static_cast<int>(q), q));
      builder.add(Op::recv_reduce(static_cast<int>(q), r));
    }
    builder.begin_step();
    for (std::uint32_t q = 0; q < p; ++q) {
      if (q == r) continue;
      builder.add(Op::send(static_cast<int>(q), r));
      builder.add(Op::recv_copy(static_cast<int>(q), q));
    }
  }
  return builder.finish();
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
  const std::uint32_t p = checked_ranks("direct", ranks);
  const bool nothing_to_send = bytes == 0 || p == 1;
  // refused before its P x P blocks are laid out (they take more memory than its ops)
  const std::uint64_t ops = nothing_to_send ? 0 : 2ULL * p * (p - 1);
  ScheduleBuilder::check_ops("direct", ranks, ops);
  ScheduleBuilder builder(Collective::alltoall, "direct", ranks, bytes,
                          buffer_chunks(bytes, p * p, options.element_bytes));
  builder.reserve_ops(ops);
  if (bytes > 0) builder.set_chunk_blocks(identity_blocks(p * p));
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    builder.begin_step();
    for (std::uint32_t q = 0; q < p; ++q) {
      if (q == r) continue;
      builder.add(Op::send(static_cast<int>(q), r * p + q));
      builder.add(Op::recv_copy(static_cast<int>(q), q * p + r));
    }
  }
  return builder.finish();
}

}  // namespace dtsim
