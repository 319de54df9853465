// Binomial trees: reduce to a root, broadcast from it, and allreduce as the two in turn. The buffer moves whole.
// Phases: reduce, for mask = 1, 2, 4, ...: a rank whose lowest set bit is `mask` sends its partial sum to
//   rank - mask and leaves the phase; a rank below that bit receives and adds the partial sum of rank + mask (if it
//   exists). Broadcast, the mirror image: rank r != 0 receives from r - lowbit(r), then every rank sends to r + m for
//   m = lowbit(r)/2 (for rank 0 the largest power of two below P) down to 1, where r + m < P.
// Cost: ceil(log2 P) (alpha + n beta + n gamma) for the reduce, ceil(log2 P) (alpha + n beta) for the broadcast
//   (Thakur, Rabenseifner and Gropp 2005, "Optimization of collective communication operations in MPICH", IJHPCA
//   19(1), sections 4.1 and 4.4). Latency-optimal in messages per rank, but moves the whole buffer at every level.
//   Reduce alone: ceil(log2 P) (alpha + n beta + n gamma); broadcast alone: ceil(log2 P) (alpha + n beta).
#include "algorithms/binomial_tree.hpp"

#include <bit>
#include <stdexcept>

namespace dtsim {

namespace {

enum class Phases { reduce, broadcast, both };

// Binomial reduce to `root` and/or binomial broadcast from it, on one chunk holding the whole buffer. Ranks are
// renumbered v = (r - root) mod P so that the tree's root is v = 0.
Schedule binomial(Collective collective, const char* name, Phases phases, int ranks, std::uint64_t bytes,
                  const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks(name, ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(collective, name, ranks, bytes, buffer_chunks(bytes, 1, options.element_bytes));
  builder.set_root(static_cast<int>(options.root));
  const std::uint32_t root = options.root;
  const std::uint32_t top = nothing_to_send ? 0 : std::bit_floor(p - 1);  // largest power of two below P
  const bool reduce = phases != Phases::broadcast;
  const bool broadcast = phases != Phases::reduce;
  auto rank_of = [&](std::uint32_t v) { return static_cast<int>((v + root) % p); };
  if (!nothing_to_send) builder.reserve_ops(4ULL * (p - 1));
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    const std::uint32_t v = (r + p - root) % p;
    const std::uint32_t low = v == 0 ? 2 * top : (v & (~v + 1));  // lowest set bit; the root acts above the top
    if (reduce) {
      for (std::uint32_t mask = 1; mask < low && mask <= top; mask <<= 1) {
        if (v + mask < p) {
          builder.begin_step();
          builder.add(Op::recv_reduce(rank_of(v + mask), 0));
        }
      }
      if (v != 0) {
        builder.begin_step();
        builder.add(Op::send(rank_of(v - low), 0));
      }
    }
    if (broadcast) {
      if (v != 0) {
        builder.begin_step();
        builder.add(Op::recv_copy(rank_of(v - low), 0));
      }
      for (std::uint32_t mask = (v == 0 ? top : low / 2); mask >= 1; mask >>= 1) {
        if (v + mask < p) {
          builder.begin_step();
          builder.add(Op::send(rank_of(v + mask), 0));
        }
      }
    }
  }
  return builder.finish();
}

}  // namespace

Schedule binomial_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  AlgorithmOptions at_zero = options;
  at_zero.root = 0;
  return binomial(Collective::allreduce, "tree", Phases::both, ranks, bytes, at_zero);
}

Schedule binomial_reduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return binomial(Collective::reduce, "tree", Phases::reduce, ranks, bytes, options);
}

Schedule binomial_broadcast(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return binomial(Collective::broadcast, "tree", Phases::broadcast, ranks, bytes, options);
}

}  // namespace dtsim
