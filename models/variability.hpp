// Variability of a training run: how long a rank's computes take from step to step (jitter), nodes slower than the
// rest (stragglers), and other jobs' traffic on the fabric. Each is an input of the one step program: a rank's
// computes are scaled by its factor (sim/step_driver.hpp), the fabric's bandwidth by the load left to the job.
//
// Draws are counter-based: a factor is a pure function of (seed, sample, rank, step, kernel), never of the order in
// which an engine happens to ask, so one seed gives the same numbers on every engine, every machine and every MPI
// split of a sweep (normal deviates by Box-Muller from two hashed uniforms; no std:: distribution, whose output the
// standard leaves to each library).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/devices.hpp"

namespace dtsim {

enum class JitterDistribution : std::uint8_t {
  none,
  normal,     // factor 1 + sigma Z, clamped at 0.05 (a kernel never runs 20x faster than its mean)
  lognormal,  // factor exp(sigma Z - sigma^2 / 2): mean 1, a long right tail
  empirical,  // a measured step time, drawn uniformly from a list, over the list's mean
  replay,     // measured step times of every rank, replayed side by side: a step takes each rank's k-th time
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
  // replay: each rank's measured step times over the mean of them all, a row per rank, rows of one length. Rank r
  // takes row r mod rows; its step t of sample s takes column (s + t) mod columns, so the ranks' times of one moment
  // stay together (a machine that slows every rank at once slows them in the same sample, as it did when measured).
  std::vector<std::vector<double>> rank_factors;
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

// Nodes of another device than the scenario's (a cluster of mixed generations): named ones, or a fraction chosen per
// sample. Their ranks are slower (or faster) by the ratio of the step's compute on their device to the scenario's.
struct DeviceGroup {
  Device device;
  std::string precision;  // the scenario's precision name, resolved for this device ("mixed": fp16 or bf16)
  double fraction = 0;
  std::vector<int> nodes;
};

// Periodic bursts of other jobs' traffic: every `period_s` for `duration_s`, taking `load` of the fabric; a reduction
// that starts inside a burst takes 1 / (1 - load) as long (fast sampler, at a random phase per sample).
struct TrafficBursts {
  double load = 0;
  double period_s = 0;
  double duration_s = 0;
  bool active() const { return load > 0 && period_s > 0 && duration_s > 0; }
};

struct Variability {
  ComputeJitter jitter;
  SlowNodes slow;
  std::vector<DeviceGroup> devices;
  TrafficBursts bursts;
  // The share of the fabric's bandwidth (NICs and switch links) that other jobs use; the job gets the rest.
  double background_load = 0;
  bool any() const {
    return jitter.active() || slow.active() || !devices.empty() || bursts.active() || background_load > 0;
  }
  // Ranks stop running alike (jitter, a slow node, another device): classes of ranks no longer hold.
  bool per_rank() const { return jitter.active() || slow.active() || !devices.empty(); }
  // Something is drawn per sample (a jitter, slow nodes or devices chosen by fraction, bursts).
  bool random() const {
    return jitter.active() || slow.fraction > 0 || bursts.active() ||
           std::any_of(devices.begin(), devices.end(), [](const DeviceGroup& g) { return g.fraction > 0; });
  }
};

// Every part that is active, e.g. "jitter normal 2% per step; slow nodes x1.5 (1 named); v100 on 1 named node;
// bursts of 50% every 100 ms for 50 ms; background load 30%"; "none".
std::string describe(const Variability& v);

// The empirical jitter of measured step times: each over their mean. Throws std::invalid_argument for an empty list
// or a time that is not positive and finite.
std::vector<double> empirical_factors(const std::vector<double>& step_times_s);

// The replayed jitter of measured step times, a row per rank: each over the mean of all. Throws std::invalid_argument
// for no rows, rows of different lengths, an empty row, or a time that is not positive and finite.
std::vector<std::vector<double>> replay_factors(const std::vector<std::vector<double>>& rank_times_s);

// The cluster left to the job by `load`: NIC and fabric link bandwidths times (1 - load). Throws
// std::invalid_argument unless 0 <= load < 1.
void apply_background_load(ClusterSpec& cluster, double load);

// How many samples to take when `wanted` are asked for: a replay's, rounded up to a whole number of passes over its
// measured moments (each weighs the same); otherwise `wanted`.
int whole_passes(const ComputeJitter& jitter, int wanted);

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
// the others. Throws std::invalid_argument naming a node beyond the cluster. `stream` keeps the choices of several
// groups apart.
std::vector<double> rank_slowdowns(const SlowNodes& slow, int ranks, int ranks_per_node, std::uint64_t seed,
                                   std::uint64_t sample, std::uint64_t stream = 0);

// Order statistics: the expected largest of n independent draws of a standard normal (numerically integrated).
double expected_max_standard_normal(int n);

}  // namespace dtsim
