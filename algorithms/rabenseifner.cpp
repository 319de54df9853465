// Rabenseifner's allreduce.
// Phases: let p' be the largest power of two <= P and rem = P - p'; the buffer is cut into p' chunks. Fold-in (rem >
// 0):
//   among the first 2 rem ranks each even rank sends its whole buffer to the next odd rank, which adds it in, and sits
//   out until the end. Reduce-scatter by recursive halving among the p' remaining ranks (renumbered 0..p'-1): in step
//   k = 0..log2(p')-1 a rank exchanges with the partner whose number differs in bit k; of the range of chunks it still
//   holds, it sends the half the partner keeps and adds the half it keeps (the lower half goes to the lower number).
//   Each rank ends with one chunk fully reduced. Allgather by recursive doubling: the same steps backwards, each rank
//   sending its range and copying the partner's. Fold-out (rem > 0): each odd rank among the first 2 rem sends the
//   result to the even rank before it.
// Cost: 2 log2(p') alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma, plus 2 (alpha + n beta) + n gamma when P != p'
//   (Rabenseifner 2004, "Optimization of collective reduction operations", ICCS; Thakur, Rabenseifner and Gropp 2005,
//   IJHPCA 19(1), section 4.5). Bandwidth-optimal like the ring with log2(p') latencies instead of P-1.
#include "algorithms/rabenseifner.hpp"

#include <bit>
#include <stdexcept>
#include <vector>

namespace dtsim {

Schedule rabenseifner_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("rabenseifner", ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  const std::uint32_t pof2 = std::bit_floor(p);
  const std::uint32_t rem = p - pof2;
  ScheduleBuilder builder(Collective::allreduce, "rabenseifner", ranks, bytes,
                          buffer_chunks(bytes, pof2, options.element_bytes));
  auto old_rank = [rem](std::uint32_t v) { return static_cast<int>(v < rem ? 2 * v + 1 : v + rem); };
  const std::uint32_t levels = static_cast<std::uint32_t>(std::bit_width(pof2)) - 1;
  if (!nothing_to_send) builder.reserve_ops(4ULL * p * (levels + 1));
  struct Range {
    std::uint32_t lo, count;
  };
  std::vector<Range> held;  // the range each rank holds before each reduce-scatter step
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    const std::uint32_t whole = builder.add_span(0, pof2);
    if (r < 2 * rem && r % 2 == 0) {  // folded out
      builder.begin_step();
      builder.add(Op::send(static_cast<int>(r + 1), whole));
      builder.begin_step();
      builder.add(Op::recv_copy(static_cast<int>(r + 1), whole));
      continue;
    }
    if (r < 2 * rem) {
      builder.begin_step();
      builder.add(Op::recv_reduce(static_cast<int>(r - 1), whole));
    }
    const std::uint32_t v = r < 2 * rem ? r / 2 : r - rem;
    held.clear();
    Range range{0, pof2};
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1) {
      held.push_back(range);
      const std::uint32_t half = range.count / 2;
      const bool lower = (v & mask) == 0;
      const Range keep{lower ? range.lo : range.lo + half, half};
      const Range give{lower ? range.lo + half : range.lo, half};
      const int partner = old_rank(v ^ mask);
      builder.begin_step();
      builder.add(Op::send(partner, builder.add_span(give.lo, give.count)));
      builder.add(Op::recv_reduce(partner, builder.add_span(keep.lo, keep.count)));
      range = keep;
    }
    for (std::uint32_t mask = pof2 >> 1; mask >= 1; mask >>= 1) {
      const Range before = held.back();
      held.pop_back();
      const Range partner_range{range.lo == before.lo ? range.lo + range.count : before.lo, range.count};
      const int partner = old_rank(v ^ mask);
      builder.begin_step();
      builder.add(Op::send(partner, builder.add_span(range.lo, range.count)));
      builder.add(Op::recv_copy(partner, builder.add_span(partner_range.lo, partner_range.count)));
      range = before;
    }
    if (r < 2 * rem) {
      builder.begin_step();
      builder.add(Op::send(static_cast<int>(r - 1), whole));
    }
  }
  return builder.finish();
}

}  // namespace dtsim
