// Bruck's allgather, and the reduce-scatter that is its transpose.
// Phases: ceil(log2 P) steps k = 0, 1, ... with distance d = 2^k and c = min(d, P - d) blocks each.
//   allgather: before step k rank r holds the d blocks r .. r+d-1 (mod P); it sends the first c of them to r - d and
//   receives blocks r+d .. r+d+c-1 from r + d, so that it ends with all P. (Bruck et al. rotate the buffer so that the
//   blocks are contiguous and rotate it back at the end; here a range that wraps past block P-1 goes as two messages.)
//   reduce-scatter: the same steps backwards with every transfer reversed and copies turned into additions: in step
//   k = K-1, ..., 0 rank q sends its partial sums of blocks q+d .. q+d+c-1 to q + d and adds those of blocks
//   q .. q+c-1 from q - d, so that each block's P contributions meet at its rank along the allgather's paths reversed.
// Cost: ceil(log2 P) alpha + (P-1)/P n beta, plus (P-1)/P n gamma for the reduce-scatter: the ring's bandwidth term
//   with log2 P latencies instead of P-1 (Bruck, Ho, Kipnis, Upfal and Weathersby 1997, "Efficient algorithms for
//   all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11); Thakur, Rabenseifner and Gropp
//   2005, IJHPCA 19(1), section 3.1: MPICH's allgather for short messages on non-powers of two). MPICH reduces and
//   scatters short messages by recursive halving, which has this cost on powers of two.
#include "algorithms/bruck.hpp"

#include <algorithm>
#include <bit>

namespace dtsim {
namespace {

// Blocks first .. first+count-1 (mod p) as at most two contiguous spans, in block order from `first`.
template <class Add>
void wrapped_spans(ScheduleBuilder& builder, std::uint32_t p, std::uint32_t first, std::uint32_t count, Add add) {
  first %= p;
  const std::uint32_t before_end = std::min(count, p - first);
  add(builder.add_span(first, before_end));
  if (before_end < count) add(builder.add_span(0, count - before_end));
}

Schedule bruck(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("bruck", ranks);
  ScheduleBuilder builder(collective, "bruck", ranks, bytes, buffer_chunks(bytes, p, options.element_bytes));
  if (bytes > 0) builder.set_chunk_blocks(identity_blocks(p));
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  const auto steps = static_cast<std::uint32_t>(std::bit_width(p - 1));  // ceil(log2 p)
  if (!nothing_to_send) builder.reserve_ops(4ULL * p * steps);
  const bool reduce = collective == Collective::reduce_scatter;
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    for (std::uint32_t i = 0; i < steps; ++i) {
      const std::uint32_t k = reduce ? steps - 1 - i : i;
      const std::uint32_t d = 1U << k;
      const std::uint32_t c = std::min(d, p - d);
      builder.begin_step();
      if (reduce) {
        const auto to = static_cast<int>((r + d) % p);
        const auto from = static_cast<int>((r + p - d) % p);
        wrapped_spans(builder, p, r + d, c, [&](std::uint32_t span) { builder.add(Op::send(to, span)); });
        wrapped_spans(builder, p, r, c, [&](std::uint32_t span) { builder.add(Op::recv_reduce(from, span)); });
      } else {
        const auto to = static_cast<int>((r + p - d) % p);
        const auto from = static_cast<int>((r + d) % p);
        wrapped_spans(builder, p, r, c, [&](std::uint32_t span) { builder.add(Op::send(to, span)); });
        wrapped_spans(builder, p, r + d, c, [&](std::uint32_t span) { builder.add(Op::recv_copy(from, span)); });
      }
    }
  }
  return builder.finish();
}

}  // namespace

Schedule bruck_allgather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return bruck(Collective::allgather, ranks, bytes, options);
}

Schedule bruck_reduce_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return bruck(Collective::reduce_scatter, ranks, bytes, options);
}

}  // namespace dtsim
