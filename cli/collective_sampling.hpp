// `collective --samples` and `compare --samples`: a collective whose ranks arrive at different times (the compute
// before it varies), run again per sample on the command's executor (Schedule with_arrivals: each rank first computes
// its arrival delay), the time reported as a distribution. Draws are counters of (seed, sample, rank).
#pragma once

#include <array>
#include <string>

#include "cli/collective_runs.hpp"
#include "cli/flags.hpp"
#include "sim/step_sampler.hpp"

namespace dtsim::cli {

inline constexpr std::array<FlagSpec, 3> collective_sampling_flags{{
    {"samples", "N", "0",
     "Monte Carlo of ranks arriving apart (--arrival): N runs (1 to 100000), the time as mean, p50, p90, p99 and a "
     "histogram (JSON)"},
    {"seed", "S", "1", "the samples' seed (0 to 2^63): the same seed gives the same output"},
    {"arrival", "DIST", "",
     "how late each rank arrives: normal:SIGMA (|N(0, SIGMA)|), uniform:MAX or exponential:MEAN, e.g. normal:20us"},
}};

struct ArrivalSampling {
  int samples = 0;  // 0: none
  std::uint64_t seed = 1;
  enum class Kind : std::uint8_t { half_normal, uniform, exponential } kind = Kind::half_normal;
  double scale_s = 0;
  std::string text;  // as given
};

// Reads --samples, --seed and --arrival (--samples needs --arrival and the other way round).
ArrivalSampling parse_arrival_sampling(const Flags& flags);

// The schedule's time with the ranks arriving apart, `sampling.samples` times, on settings' executor (and cluster).
StepDistribution sample_arrivals(const Schedule& schedule, const RunSettings& settings, const ClusterInstance* cluster,
                                 const ArrivalSampling& sampling);

// Refuses, before anything runs, samples of an all-pairs algorithm too large to write out (each sampled run simulates
// every message of its written schedule, which the call itself runs without: collective_runs.hpp, run_call), or,
// unless --force or on the analytical backend (no link shared), whose samples would together take more than the 300 s
// limit by an estimate made before the first.
void check_samples_buildable(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                             const AlgorithmOptions& options, const ArrivalSampling& sampling,
                             const RunSettings& settings);

// A run of `algorithm` (run_call's) sampled with arrivals: fills run.distribution. Throws UsageError for a call split
// over a collective library's channels (its plain schedule would not be what ran).
void add_arrival_samples(CollectiveRun& run, const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                         const AlgorithmOptions& options, const RunSettings& settings, const ClusterInstance* cluster,
                         const ArrivalSampling& sampling);

}  // namespace dtsim::cli
