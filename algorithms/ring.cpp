// Ring allreduce.
// Phases: the buffer is cut into P chunks. Reduce-scatter: P-1 steps; in step s rank r sends chunk (r-s) mod P to
//   r+1 and receives chunk (r-s-1) mod P from r-1, adding it in; afterwards rank r holds chunk (r+1) mod P fully
//   reduced. Allgather: P-1 steps; in step s rank r sends chunk (r+1-s) mod P to r+1 and receives chunk (r-s) mod P
//   from r-1, copying it.
// Cost (alpha latency, beta seconds per byte, gamma seconds per reduced byte, n bytes):
//   2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma, bandwidth-optimal (Patarasuk and Yuan 2009, "Bandwidth optimal
//   all-reduce algorithms for clusters of workstations", JPDC 69(2); Thakur, Rabenseifner and Gropp 2005).
// Chunks that do not divide evenly differ by one element; then the slowest step carries the largest chunk.
#include "algorithms/ring.hpp"

#include <stdexcept>

namespace dtsim {

Schedule ring_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ring", ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(Collective::allreduce, "ring", ranks, bytes, buffer_chunks(bytes, p, options.element_bytes));
  if (!nothing_to_send) builder.reserve_ops(4ULL * p * (p - 1));
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    const int next = static_cast<int>((r + 1) % p);
    const int prev = static_cast<int>((r + p - 1) % p);
    for (std::uint32_t s = 0; s + 1 < p; ++s) {
      builder.begin_step();
      builder.add(Op::send(next, (r + p - s) % p));
      builder.add(Op::recv_reduce(prev, (r + 2 * p - s - 1) % p));
    }
    for (std::uint32_t s = 0; s + 1 < p; ++s) {
      builder.begin_step();
      builder.add(Op::send(next, (r + 1 + p - s) % p));
      builder.add(Op::recv_copy(prev, (r + p - s) % p));
    }
  }
  return builder.finish();
}

// Ring reduce-scatter, shifted so that rank r ends with block r: in step s rank r sends chunk (r-s-1) mod P to r+1
// and adds chunk (r-s-2) mod P from r-1. Cost (P-1)(alpha + n/P beta + n/P gamma).
Schedule ring_reduce_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ring", ranks);
  ScheduleBuilder builder(Collective::reduce_scatter, "ring", ranks, bytes,
                          buffer_chunks(bytes, p, options.element_bytes));
  if (bytes > 0) builder.set_chunk_blocks(identity_blocks(p));
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    for (std::uint32_t s = 0; s + 1 < p; ++s) {
      builder.begin_step();
      builder.add(Op::send(static_cast<int>((r + 1) % p), (r + 2 * p - s - 1) % p));
      builder.add(Op::recv_reduce(static_cast<int>((r + p - 1) % p), (r + 2 * p - s - 2) % p));
    }
  }
  return builder.finish();
}

// Ring allgather: rank r starts with block r; in step s it sends chunk (r-s) mod P to r+1 and copies chunk
// (r-s-1) mod P from r-1. Cost (P-1)(alpha + n/P beta).
Schedule ring_allgather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ring", ranks);
  ScheduleBuilder builder(Collective::allgather, "ring", ranks, bytes, buffer_chunks(bytes, p, options.element_bytes));
  if (bytes > 0) builder.set_chunk_blocks(identity_blocks(p));
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    for (std::uint32_t s = 0; s + 1 < p; ++s) {
      builder.begin_step();
      builder.add(Op::send(static_cast<int>((r + 1) % p), (r + p - s) % p));
      builder.add(Op::recv_copy(static_cast<int>((r + p - 1) % p), (r + 2 * p - s - 1) % p));
    }
  }
  return builder.finish();
}

}  // namespace dtsim
