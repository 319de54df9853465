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
namespace {

// One pass around the ring for rank r: P-1 steps; in step s the rank sends chunk (r + shift - s) mod P to r+1 and
// receives chunk (r + shift - s - 1) mod P from r-1 (adding or copying it). shift is taken mod P.
// Every step is the first with its chunks rotated back by one more: one step and a repeat.
void ring_pass(ScheduleBuilder& builder, std::uint32_t r, std::uint32_t p, std::uint32_t shift, bool reduce) {
  const int next = static_cast<int>((r + 1) % p);
  const int prev = static_cast<int>((r + p - 1) % p);
  const std::uint32_t out = (r + shift) % p;
  const std::uint32_t in = (out + p - 1) % p;
  builder.begin_step();
  builder.add(Op::send(next, out));
  builder.add(reduce ? Op::recv_reduce(prev, in) : Op::recv_copy(prev, in));
  builder.repeat_step(p - 2, p - 1, 0, p);
}

// Reduce-scatter (ends with block r on rank r) or allgather (starts from it): one ring pass.
Schedule ring_half(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ring", ranks);
  ScheduleBuilder builder(collective, "ring", ranks, bytes, buffer_chunks(bytes, p, options.element_bytes));
  if (bytes > 0) builder.set_chunk_blocks(identity_blocks(p));
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  const bool reduce = collective == Collective::reduce_scatter;
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    ring_pass(builder, r, p, reduce ? p - 1 : 0, reduce);
  }
  return builder.finish();
}

}  // namespace

Schedule ring_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ring", ranks);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(Collective::allreduce, "ring", ranks, bytes, buffer_chunks(bytes, p, options.element_bytes));
  if (!nothing_to_send) builder.reserve_ops(4ULL * p);  // compact: two stored steps per pass
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    ring_pass(builder, r, p, 0, true);   // rank r ends holding chunk r+1 reduced
    ring_pass(builder, r, p, 1, false);  // and sends it on first
  }
  return builder.finish();
}

// Ring reduce-scatter, shifted so that rank r ends with block r: in step s rank r sends chunk (r-s-1) mod P to r+1
// and adds chunk (r-s-2) mod P from r-1. Cost (P-1)(alpha + n/P beta + n/P gamma).
Schedule ring_reduce_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return ring_half(Collective::reduce_scatter, ranks, bytes, options);
}

// Ring allgather: rank r starts with block r; in step s it sends chunk (r-s) mod P to r+1 and copies chunk
// (r-s-1) mod P from r-1. Cost (P-1)(alpha + n/P beta).
Schedule ring_allgather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  return ring_half(Collective::allgather, ranks, bytes, options);
}

}  // namespace dtsim
