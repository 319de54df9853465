// Binomial-tree allreduce: a binomial reduce to rank 0, then a binomial broadcast from it. The buffer moves whole.
// Phases: reduce, for mask = 1, 2, 4, ...: a rank whose lowest set bit is `mask` sends its partial sum to
//   rank - mask and leaves the phase; a rank below that bit receives and adds the partial sum of rank + mask (if it
//   exists). Broadcast, the mirror image: rank r != 0 receives from r - lowbit(r), then every rank sends to r + m for
//   m = lowbit(r)/2 (for rank 0 the largest power of two below P) down to 1, where r + m < P.
// Cost: ceil(log2 P) (alpha + n beta + n gamma) for the reduce, ceil(log2 P) (alpha + n beta) for the broadcast
//   (Thakur, Rabenseifner and Gropp 2005, "Optimization of collective communication operations in MPICH", IJHPCA
//   19(1), sections 4.1 and 4.4). Latency-optimal in messages per rank, but moves the whole buffer at every level.
#include "algorithms/binomial_tree.hpp"

#include <bit>
#include <stdexcept>

namespace dtsim {

Schedule binomial_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("tree", ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(Collective::allreduce, "tree", ranks, bytes, buffer_chunks(bytes, 1, options.element_bytes));
  const std::uint32_t top = nothing_to_send ? 0 : std::bit_floor(p - 1);  // largest power of two below P
  if (!nothing_to_send) builder.reserve_ops(4ULL * (p - 1));
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    const std::uint32_t low = r == 0 ? 2 * top : (r & (~r + 1));  // lowest set bit; rank 0 acts above the top
    for (std::uint32_t mask = 1; mask < low && mask <= top; mask <<= 1) {
      if (r + mask < p) {
        builder.begin_step();
        builder.add(Op::recv_reduce(static_cast<int>(r + mask), 0));
      }
    }
    if (r != 0) {
      builder.begin_step();
      builder.add(Op::send(static_cast<int>(r - low), 0));
      builder.begin_step();
      builder.add(Op::recv_copy(static_cast<int>(r - low), 0));
    }
    for (std::uint32_t mask = (r == 0 ? top : low / 2); mask >= 1; mask >>= 1) {
      if (r + mask < p) {
        builder.begin_step();
        builder.add(Op::send(static_cast<int>(r + mask), 0));
      }
    }
  }
  return builder.finish();
}

}  // namespace dtsim
