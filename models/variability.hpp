// Variability of a training run: how long a rank's computes take from step to step (jitter), nodes slower than the
// rest (stragglers), and other jobs' traffic on the fabric. Each is an input of the one step program: a rank's
// computes are scaled by its factor (sim/step_driver.hpp), the fabric's bandwidth by the load left to the job.
//
// Draws are counter-based: a factor is a pure function of (seed, sample, rank, step, kernel), never of the order in
// which an engine happens to ask, so one seed gives the same numbers on every engine, every machine and every MPI
// split of a sweep (normal deviates by Box-Muller from two hashed uniforms; no std:: distribution, whose output the
// standard leaves to each library).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/cluster.hpp"

namespace dtsim {

enum class JitterDistribution : std::uint8_t {
  none,
  normal,     // factor 1 + sigma Z, clamped at 0.05 (a kernel never runs 20x faster than its mean)
  lognormal,  // factor exp(sigma Z - sigma^2 / 2): mean 1, a long right tail
  empirical,  // a measured step time, drawn uniformly from a list, over the list's mean
};
const char* to_string(JitterDistribution distribution);

enum class JitterScope : std::uint8_t {
  step,    // one factor per rank and step, scaling all its computes (the optimizer's too)
  kernel,  // one factor per compute (a layer's forward or backward, the optimizer), drawn independently
};
const char* to_string(JitterScope scope);

struct ComputeJitter {
  JitterDistribution distribution = JitterDistribution::none;
  double sigma = 0;  // normal: standard deviation over the mean; lognormal: of the log
  JitterScope scope = JitterScope::step;
  std::vector<double> factors;  // empirical: the measured times over their mean (mean 1)
  bool active() const { return distribution != JitterDistribution::none; }
  std::string describe() const;  // e.g. "normal 2% per step"
};

// Nodes that run slower than the rest, by a fixed factor: named ones, or a fraction of the nodes chosen per sample
// (from the seed).
struct SlowNodes {
  double fraction = 0;     // of the nodes, rounded to the nearest count (at least one when > 0)
  std::vector<int> nodes;  // node indices, from 0
  double slowdown = 1;     // their computes take this many times as long, >= 1
  bool active() const { return slowdown != 1 && (fraction > 0 || !nodes.empty()); }
};

struct Variability {
  ComputeJitter jitter;
  SlowNodes slow;
  // The share of the fabric's bandwidth (NICs and switch links) that other jobs use; the job gets the rest.
  double background_load = 0;
  bool any() const { return jitter.active() || slow.active() || background_load > 0; }
  // Ranks stop running alike (jitter or a slow node): classes of ranks no longer hold.
  bool per_rank() const { return jitter.active() || slow.active(); }
};

// The empirical jitter of measured step times: each over their mean. Throws std::invalid_argument for an empty list
// or a time that is not positive and finite.
std::vector<double> empirical_factors(const std::vector<double>& step_times_s);

// The cluster left to the job by `load`: NIC and fabric link bandwidths times (1 - load). Throws
// std::invalid_argument unless 0 <= load < 1.
void apply_background_load(ClusterSpec& cluster, double load);

// A uniform double in [0, 1) from a counter (splitmix64 of the keys).
double counter_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d);

// One draw of `jitter`'s factor for keys (a, b, c, d) under `seed`; 1 when none.
double jitter_factor(const ComputeJitter& jitter, std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c,
                     std::uint64_t d);

// A normal deviate for the keys (Box-Muller).
double counter_normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d);

// What one run of the step program draws: the jitter, the seed and sample, and each rank's fixed slowdown.
struct ComputeNoise {
  const ComputeJitter* jitter = nullptr;  // null or none: no jitter
  std::uint64_t seed = 0;
  std::uint64_t sample = 0;
  std::vector<double> rank_scale;  // by rank: its fixed slowdown (empty: 1 for every rank)

  bool jitters() const { return jitter != nullptr && jitter->active(); }
  double scale(int rank) const { return rank_scale.empty() ? 1.0 : rank_scale[static_cast<std::size_t>(rank)]; }
  // The factor of rank `rank`'s step `step` (per-step jitter; 1 for per-kernel jitter or none).
  double step_factor(int rank, int step) const;
  // The factor of compute `kernel` of rank `rank`'s step `step` (per-kernel jitter; 1 otherwise).
  double kernel_factor(int rank, int step, std::uint64_t kernel) const;
};

// Each rank's fixed slowdown: those of the slow nodes (named, or a fraction chosen by `seed` and `sample`), 1 for
// the others. Throws std::invalid_argument naming a node beyond the cluster.
std::vector<double> rank_slowdowns(const SlowNodes& slow, int ranks, int ranks_per_node, std::uint64_t seed,
                                   std::uint64_t sample);

// Order statistics: the expected largest of n independent draws of a standard normal (numerically integrated).
double expected_max_standard_normal(int n);

}  // namespace dtsim
