// NVLS allreduce: NVLink SHARP, the NVSwitch reducing data in flight (NCCL 2.17+ on H100 and later, NCCL_ALGO=NVLS).
// Phases, for each segment of the buffer (K segments of at most --segment-size bytes, each cut into P shares; share j
//   is rank j's), as four pipelined steps:
//   A reduce (multimem.ld_reduce): every rank sends its copy of every share of the segment to the switch, which adds
//     them up (the helper position P);
//   B the switch returns share j's sum to rank j;
//   C store (multimem.st): rank j sends the sum back to the switch;
//   D multicast: the switch sends every share to every rank.
//   Segment k is in step A at tau = k, B at k + 1, C at k + 2 and D at k + 3, so that a rank's link carries A and C
//   up while B and D come down: each direction carries (1 + 1/P) n, against the ring's 2 (P-1)/P n. The switch's
//   reduction and multicast are what the saving needs; NCCL's tuner counts the engine at nvlsEfficiency of the
//   links (0.85 on Hopper, 0.74 on Blackwell: src/graph/tuning.cc, NCCL v2.30.7-1), which the library layer applies.
// Cost without contention: (K + 3)(alpha + n/(K P) beta); the switch reduces P n gamma in all (in flight: NCCL's
//   fused reduction). Measured: about 480 GB/s bus bandwidth on 8 H100s against the ring's 370 (nccl-tests #212).
// Inside one node only: across nodes NCCL runs NVLS with CollNet (SHARP switches) or NVLSTree, not modelled here.
#include "algorithms/nvls.hpp"

#include <algorithm>

namespace dtsim {
namespace {

// K segments, at least one element a share; the switch handles 2 P^2 + 2 P ops a segment, every rank 2 P + 2
std::uint32_t segments(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const auto p = static_cast<std::uint64_t>(ranks);
  return pipeline_segments("nvls", ranks, bytes, options, std::max<std::uint64_t>(1, bytes / options.element_bytes / p),
                           4ULL * (p + 1) * p);
}

}  // namespace

Schedule nvls_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options) {
  const std::uint32_t p = checked_ranks("nvls", ranks);
  const std::uint32_t k = segments(ranks, bytes, options);
  const auto sw = static_cast<int>(p);  // the switch's position
  ScheduleBuilder builder(Collective::allreduce, "nvls", ranks + 1, bytes,
                          buffer_chunks(bytes, k * p, options.element_bytes));
  builder.set_participants(ranks);
  builder.set_switch_helpers();
  auto chunk = [p](std::uint64_t segment, std::uint32_t share) {
    return static_cast<std::uint32_t>(segment * p + share);
  };
  // segment of step `tau` in phase `phase` (0 A, 1 B, 2 C, 3 D), or -1
  auto at = [k](std::uint64_t tau, std::uint64_t phase) -> std::int64_t {
    return tau >= phase && tau - phase < k ? static_cast<std::int64_t>(tau - phase) : -1;
  };
  const std::uint64_t last_tau = k + 2;
  for (std::uint32_t r = 0; r <= p; ++r) {
    builder.begin_rank(static_cast<int>(r));
    if (k == 0) continue;
    for (std::uint64_t tau = 0; tau <= last_tau; ++tau) {
      builder.begin_step();
      if (r < p) {  // a rank, in the order the switch lists its transfers with it: A then C up, B then D down
        if (const auto s = at(tau, 0); s >= 0) {
          for (std::uint32_t j = 0; j < p; ++j)
            builder.add(Op::send(sw, chunk(s, j)));
        }
        if (const auto s = at(tau, 1); s >= 0) builder.add(Op::recv_copy(sw, chunk(s, r)));
        if (const auto s = at(tau, 2); s >= 0) builder.add(Op::send(sw, chunk(s, r)));
        if (const auto s = at(tau, 3); s >= 0) {
          for (std::uint32_t j = 0; j < p; ++j)
            builder.add(Op::recv_copy(sw, chunk(s, j)));
        }
      } else {  // the switch
        if (const auto s = at(tau, 0); s >= 0) {
          for (std::uint32_t j = 0; j < p; ++j)
            for (std::uint32_t q = 0; q < p; ++q)
              builder.add(Op::recv_reduce(static_cast<int>(q), chunk(s, j)));
        }
        if (const auto s = at(tau, 1); s >= 0) {
          for (std::uint32_t j = 0; j < p; ++j)
            builder.add(Op::send(static_cast<int>(j), chunk(s, j)));
        }
        if (const auto s = at(tau, 2); s >= 0) {
          for (std::uint32_t j = 0; j < p; ++j)
            builder.add(Op::recv_copy(static_cast<int>(j), chunk(s, j)));
        }
        if (const auto s = at(tau, 3); s >= 0) {
          for (std::uint32_t j = 0; j < p; ++j)
            for (std::uint32_t q = 0; q < p; ++q)
              builder.add(Op::send(static_cast<int>(q), chunk(s, j)));
        }
      }
      // the pipeline's steady state (all four phases at once, tau in [3, K)): one step, the rest repetitions of it
      // with every segment one further on (P chunks), drifting as pipelines do (not in lockstep)
      if (tau == 3 && k > 4) {
        builder.repeat_step(k - 4, p, 0, k * p, false);
        tau = k - 1;
      }
    }
  }
  return builder.finish();
}

double nvls_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, const AlgorithmOptions& options) {
  if (bytes == 0) return 0;
  const double k = segments(ranks, bytes, options);
  return (k + 3) * (cost.alpha_s + static_cast<double>(bytes) / (k * ranks) / cost.bandwidth_Bps);
}

}  // namespace dtsim
