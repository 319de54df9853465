// Monte Carlo of a data-parallel training step under variability (models/variability.hpp): many samples of the step,
// each with its own draws of every rank's compute times, summarised as a distribution.
//
// Two samplers, one step program:
//   exact  re-runs the step driver (sim/step_driver.hpp) on the configuration's network for every sample, every rank
//          drawing its computes (ComputeNoise): every message of every bucket is simulated again, so it costs a full
//          simulation per sample, without classes of ranks.
//   fast   reuses what the network did: each bucket's reduction time, simulated once alone on the same network and
//          executor, and the program's layer times. A bucket's reduction synchronises its ranks (no rank finishes a
//          ring, a tree or a parameter server's round before the last rank has joined), so per sample it starts when
//          the previous reduction is done and the last rank has released the bucket, and takes its simulated time:
//          s_b = max(e_(b-1), max_r ready_(r,b)), e_b = s_b + d_b. A rank's step ends with the last reduction and its
//          optimizer. Per rank and step it draws what the exact sampler draws (the same counters) once per stretch of
//          backward between two buckets, not once per layer where the jitter allows it (per-step jitter; per-kernel
//          normal jitter, whose sum over a stretch is normal again), so a sample costs O(ranks x buckets), not a
//          network simulation. It ignores that a rank that joins a ring late finds its neighbours' first chunks
//          already waiting (at most one of the reduction's steps); tests/test_variability.cpp bounds the difference
//          from the exact sampler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/variability.hpp"
#include "sim/executor.hpp"

namespace dtsim {

enum class Sampler : std::uint8_t { fast, exact };

struct HistogramBin {
  double from_s = 0;
  double to_s = 0;
  int count = 0;
};

// A sampled step time: its moments and percentiles (nearest rank) and a histogram of `bins` equal bins.
struct StepDistribution {
  int samples = 0;
  std::uint64_t seed = 0;
  Sampler sampler = Sampler::fast;
  double mean_s = 0;
  double p50_s = 0;
  double median_s = 0;  // the middle sample, or the mean of the middle two (as a measured median is taken)
  double p90_s = 0;
  double p99_s = 0;
  double min_s = 0;
  double max_s = 0;
  std::vector<HistogramBin> histogram;
};
StepDistribution summarize_steps(std::vector<double> step_s, int bins = 20);

// What varies and how to sample it.
struct SamplingRequest {
  int samples = 0;  // >= 1
  std::uint64_t seed = 1;
  Sampler sampler = Sampler::fast;
  const Variability* variability = nullptr;  // jitter and slow nodes (the background load is in the network)
  int ranks_per_node = 1;                    // where slow nodes put their ranks
  // per variability->devices group: its ranks' compute time over the scenario device's (sim/predict.cpp fills it)
  std::vector<double> device_slowdowns;
};

// Fast sampler: `samples` steps of `program` over `ranks` ranks (one per program rank), each bucket's reduction
// taking bucket_s[b]. Throws std::invalid_argument when bucket_s does not match the program's buckets.
std::vector<double> sample_steps_fast(const TrainingProgram& program, int ranks, const std::vector<double>& bucket_s,
                                      const SamplingRequest& request);

// Each rank's fixed slowdown in `sample` (slow nodes: named, or chosen per sample by the seed).
std::vector<double> sample_rank_scale(const SamplingRequest& request, int ranks, std::uint64_t sample);

}  // namespace dtsim
