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

}  // namespace dtsim
