// Recursive-doubling (butterfly) allreduce. The buffer moves whole.
// Phases: let p' be the largest power of two <= P and rem = P - p'. Fold-in (only when rem > 0): among the first
//   2 rem ranks, each even rank sends its buffer to the next odd rank, which adds it in; the even ranks then sit out.
//   Butterfly: the p' remaining ranks, renumbered 0..p'-1, exchange whole buffers with the partner whose new number
//   differs in bit k, for k = 0 .. log2(p')-1, adding what they receive. Fold-out (only when rem > 0): each odd rank
//   among the first 2 rem sends the result back to the even rank before it.
// Cost: log2(p') (alpha + n beta + n gamma), plus 2 (alpha + n beta) + n gamma when P is not a power of two
//   (Thakur, Rabenseifner and Gropp 2005, IJHPCA 19(1), section 4.5; MPICH's allreduce_intra_recursive_doubling).
//   Latency-optimal, but every rank sends the whole buffer log2(p') times.
#include "algorithms/recursive_doubling.hpp"

#include <bit>
#include <stdexcept>

namespace dtsim {

Schedule recursive_doubling_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("butterfly", ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(Collective::allreduce, "butterfly", ranks, bytes,
                          buffer_chunks(bytes, 1, options.element_bytes));
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  // Old rank of new rank `v` in the butterfly.
  auto old_rank = [rem](std::uint32_t v) { return static_cast<int>(v < rem ? 2 * v + 1 : v + rem); };
  if (!nothing_to_send) builder.reserve_ops(2ULL * p * std::bit_width(pof2) + 2ULL * rem);
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    if (r < 2 * rem && r % 2 == 0) {  // folded out: hand the buffer over, get the result back
      builder.begin_step();
      builder.add(Op::send(static_cast<int>(r + 1), 0));
      builder.begin_step();
      builder.add(Op::recv_copy(static_cast<int>(r + 1), 0));
      continue;
    }
    if (r < 2 * rem) {
      builder.begin_step();
      builder.add(Op::recv_reduce(static_cast<int>(r - 1), 0));
    }
    const std::uint32_t v = r < 2 * rem ? r / 2 : r - rem;
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1) {
      const int partner = old_rank(v ^ mask);
      builder.begin_step();
      builder.add(Op::send(partner, 0));
      builder.add(Op::recv_reduce(partner, 0));
    }
    if (r < 2 * rem) {
      builder.begin_step();
      builder.add(Op::send(static_cast<int>(r - 1), 0));
    }
  }
  return builder.finish();
}

}  // namespace dtsim
