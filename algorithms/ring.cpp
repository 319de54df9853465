// Ring allreduce.
// Phases: the buffer is cut into P chunks. Reduce-scatter: P-1 steps; in step s rank r sends chunk (r-s) mod P to
//   r+1 and receives chunk (r-s-1) mod P from r-1, adding it in; afterwards rank r holds chunk (r+1) mod P fully
//   reduced. Allgather: P-1 steps; in step s rank r sends chunk (r+1-s) mod P to r+1 and receives chunk (r-s) mod P
//   from r-1, copying it.
// Cost (alpha latency, beta seconds per byte, gamma seconds per reduced byte, n bytes):
//   2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma, bandwidth-optimal (Patarasuk and Yuan 2009, "Bandwidth optimal
//   all-reduce algorithms for clusters of workstations", JPDC 69(2); Thakur, Rabenseifner and Gropp 2005).
// Chunks that do not divide evenly differ by one element; then the slowest step carries the largest chunk.
// Channels (--channels K, NCCL's channels: src/graph/connect.cc builds one ring per channel): K rings at once, ring c
// on every K-th chunk of K P, visiting each group of G ranks (--channel-group) in an order rotated by c G / K, so that
// on nodes of G ranks with K NICs ring c crosses between nodes through NIC c. A step then moves K messages of n/(KP):
// the same bytes per step, K - 1 more messages (gaps) per step.
#include "algorithms/ring.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

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

// The K rings' orders: ring c puts rank group * G + (local + c G / K) mod G at position group * G + local.
struct Channels {
  std::uint32_t k = 1;
  std::uint32_t g = 1;
  std::uint32_t shift(std::uint32_t c) const { return c * g / k; }
  std::uint32_t rank_at(std::uint32_t c, std::uint32_t position) const {
    const std::uint32_t local = position % g;
    return position - local + (local + shift(c)) % g;
  }
  std::uint32_t position_of(std::uint32_t c, std::uint32_t rank) const {
    const std::uint32_t local = rank % g;
    return rank - local + (local + g - shift(c) % g) % g;
  }
};

// ring_pass for K rings at once: ring c moves chunks i K + c, from the rank's position in ring c.
void channel_pass(ScheduleBuilder& builder, std::uint32_t r, std::uint32_t p, std::uint32_t shift, bool reduce,
                  const Channels& ch) {
  builder.begin_step();
  for (std::uint32_t c = 0; c < ch.k; ++c) {
    const std::uint32_t at = ch.position_of(c, r);
    const auto next = static_cast<int>(ch.rank_at(c, (at + 1) % p));
    const auto prev = static_cast<int>(ch.rank_at(c, (at + p - 1) % p));
    const std::uint32_t out = (at + shift) % p;
    const std::uint32_t in = (out + p - 1) % p;
    builder.add(Op::send(next, out * ch.k + c));
    builder.add(reduce ? Op::recv_reduce(prev, in * ch.k + c) : Op::recv_copy(prev, in * ch.k + c));
  }
  builder.repeat_step(p - 2, ch.k * (p - 1), 0, ch.k * p);  // every ring's chunk back by one: K places of K P
}

Channels channels_of(int ranks, const AlgorithmOptions& options) {
  Channels ch;
  ch.k = static_cast<std::uint32_t>(options.number(channels_option));
  if (ch.k == 1) return ch;  // (one ring: no rotation, whatever the group)
  ch.g = static_cast<std::uint32_t>(options.number(channel_group_option));
  if (static_cast<std::uint64_t>(ranks) % ch.g != 0) {
    throw OptionError(
        std::string(channel_group_option.name),
        "expected a divisor of the rank count " + std::to_string(ranks) + ", got " + std::to_string(ch.g));
  }
  return ch;
}

}  // namespace

Schedule ring_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("ring", ranks);
  const Channels ch = channels_of(ranks, options);
  const bool nothing_to_send = ranks == 1 || bytes == 0;
  ScheduleBuilder builder(Collective::allreduce, "ring", ranks, bytes,
                          buffer_chunks(bytes, ch.k * p, options.element_bytes));
  if (!nothing_to_send) builder.reserve_ops(4ULL * ch.k * p);  // compact: two stored steps per pass
  for (std::uint32_t r = 0; r < p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (nothing_to_send) continue;
    channel_pass(builder, r, p, 0, true, ch);   // rank r ends holding chunk r+1 of each ring reduced
    channel_pass(builder, r, p, 1, false, ch);  // and sends it on first
  }
  return builder.finish();
}

double ring_allreduce_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                  const AlgorithmOptions& options) {
  const std::uint64_t k = options.number(channels_option);
  if (k == 1) return ring_allreduce_seconds(ranks, bytes, cost);
  const double p = ranks, n = static_cast<double>(bytes);
  if (ranks == 1 || bytes == 0) return 0;
  const double step = std::max(cost.alpha_s + n / (p * static_cast<double>(k)) / cost.bandwidth_Bps,
                               static_cast<double>(k - 1) * cost.gap_s);
  return 2 * (p - 1) * step + (p - 1) / p * n / cost.reduce_Bps;
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
