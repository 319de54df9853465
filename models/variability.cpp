#include "models/variability.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

namespace dtsim {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t hash_keys(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  std::uint64_t h = splitmix(seed);
  h = splitmix(h ^ a);
  h = splitmix(h ^ b);
  h = splitmix(h ^ c);
  return splitmix(h ^ d);
}

double to_unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

constexpr double normal_floor = 0.05;

}  // namespace

const char* to_string(JitterDistribution distribution) {
  switch (distribution) {
    case JitterDistribution::none: return "none";
    case JitterDistribution::normal: return "normal";
    case JitterDistribution::lognormal: return "lognormal";
    case JitterDistribution::empirical: return "empirical";
    case JitterDistribution::replay: return "replay";
  }
  return "?";
}

const char* to_string(JitterScope scope) { return scope == JitterScope::step ? "step" : "kernel"; }

std::string ComputeJitter::describe() const {
  if (!active()) return "none";
  if (distribution == JitterDistribution::empirical) {
    return "empirical (" + std::to_string(factors.size()) + " measured times) per " + to_string(scope);
  }
  if (distribution == JitterDistribution::replay) {
    return "replay of " + std::to_string(rank_factors.size()) + " ranks x " +
           std::to_string(rank_factors.empty() ? 0 : rank_factors.front().size()) + " measured times per step";
  }
  char text[64];
  std::snprintf(text, sizeof text, "%s %.3g%% per %s", to_string(distribution), 100 * sigma, to_string(scope));
  return text;
}

namespace {
std::string which_nodes(double fraction, std::size_t named) {
  char text[64];
  if (fraction > 0) {
    std::snprintf(text, sizeof text, "%.3g%% of the nodes", 100 * fraction);
  } else {
    std::snprintf(text, sizeof text, "%zu named node%s", named, named == 1 ? "" : "s");
  }
  return text;
}
}  // namespace

std::string describe(const Variability& v) {
  std::vector<std::string> parts;
  char text[128];
  if (v.jitter.active()) parts.push_back("jitter " + v.jitter.describe());
  if (v.slow.active()) {
    std::snprintf(text, sizeof text, "slow nodes x%.3g on ", v.slow.slowdown);
    parts.push_back(text + which_nodes(v.slow.fraction, v.slow.nodes.size()));
  }
  for (const DeviceGroup& g : v.devices)
    parts.push_back(g.device.name + " on " + which_nodes(g.fraction, g.nodes.size()));
  if (v.bursts.active()) {
    std::snprintf(text, sizeof text, "bursts of %.3g%% of the fabric every %.3g s for %.3g s", 100 * v.bursts.load,
                  v.bursts.period_s, v.bursts.duration_s);
    parts.push_back(text);
  }
  if (v.background_load > 0) {
    std::snprintf(text, sizeof text, "background load %.3g%%", 100 * v.background_load);
    parts.push_back(text);
  }
  if (parts.empty()) return "none";
  std::string out = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i)
    out += "; " + parts[i];
  return out;
}

std::vector<double> empirical_factors(const std::vector<double>& step_times_s) {
  if (step_times_s.empty()) throw std::invalid_argument("an empirical distribution needs at least one time");
  for (const double t : step_times_s) {
    if (!std::isfinite(t) || t <= 0) {
      throw std::invalid_argument("an empirical time must be positive and finite, got " + std::to_string(t));
    }
  }
  const double mean =
      std::accumulate(step_times_s.begin(), step_times_s.end(), 0.0) / static_cast<double>(step_times_s.size());
  std::vector<double> factors;
  factors.reserve(step_times_s.size());
  for (const double t : step_times_s)
    factors.push_back(t / mean);
  return factors;
}

std::vector<std::vector<double>> replay_factors(const std::vector<std::vector<double>>& rank_times_s) {
  if (rank_times_s.empty() || rank_times_s.front().empty()) {
    throw std::invalid_argument("replayed step times: expected at least one rank with at least one time");
  }
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t r = 0; r < rank_times_s.size(); ++r) {
    if (rank_times_s[r].size() != rank_times_s.front().size()) {
      throw std::invalid_argument("replayed step times: rank " + std::to_string(r) + " has " +
                                  std::to_string(rank_times_s[r].size()) + " times, rank 0 " +
                                  std::to_string(rank_times_s.front().size()) + "; every rank needs as many");
    }
    for (const double t : rank_times_s[r]) {
      if (!(t > 0) || !std::isfinite(t)) {
        throw std::invalid_argument("replayed step times: rank " + std::to_string(r) + " has a time " +
                                    std::to_string(t) + "; expected positive and finite");
      }
      sum += t;
      ++count;
    }
  }
  const double mean = sum / static_cast<double>(count);
  std::vector<std::vector<double>> factors = rank_times_s;
  for (std::vector<double>& row : factors) {
    for (double& t : row)
      t /= mean;
  }
  return factors;
}

int whole_passes(const ComputeJitter& jitter, int wanted) {
  if (jitter.distribution != JitterDistribution::replay || jitter.rank_factors.empty()) return wanted;
  const auto moments = static_cast<int>(jitter.rank_factors.front().size());
  return (wanted + moments - 1) / moments * moments;
}

void apply_background_load(ClusterSpec& cluster, double load) {
  if (!(load >= 0 && load < 1)) {
    throw std::invalid_argument("background load must be in [0, 1), got " + std::to_string(load));
  }
  const double left = 1 - load;
  cluster.node.nic.bandwidth_Bps *= left;
  cluster.fabric.link.bandwidth_Bps *= left;
  cluster.fabric.global_link.bandwidth_Bps *= left;
}

double counter_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  return to_unit(hash_keys(seed, a, b, c, d));
}

double counter_normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  const std::uint64_t h = hash_keys(seed, a, b, c, d);
  const double u1 = 1.0 - to_unit(h);  // (0, 1]
  const double u2 = to_unit(splitmix(h));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double jitter_factor(const ComputeJitter& jitter, std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c,
                     std::uint64_t d) {
  switch (jitter.distribution) {
    case JitterDistribution::none: return 1.0;
    case JitterDistribution::normal:
      return std::max(normal_floor, 1.0 + jitter.sigma * counter_normal(seed, a, b, c, d));
    case JitterDistribution::lognormal: {
      const double s = jitter.sigma;
      return std::exp(s * counter_normal(seed, a, b, c, d) - 0.5 * s * s);
    }
    case JitterDistribution::empirical: {
      const auto n = static_cast<double>(jitter.factors.size());
      const auto i =
          std::min(jitter.factors.size() - 1, static_cast<std::size_t>(counter_uniform(seed, a, b, c, d) * n));
      return jitter.factors[i];
    }
    case JitterDistribution::replay: {  // (a: the sample, b: the rank, c: the step; nothing drawn)
      const std::vector<double>& row = jitter.rank_factors[b % jitter.rank_factors.size()];
      return row[(a + c) % row.size()];
    }
  }
  return 1.0;
}

namespace {
constexpr std::uint64_t kernel_stream = 0x6b65726e656cULL;  // ("kernel": per-kernel draws apart from per-step ones)
constexpr std::uint64_t slow_stream = 0x736c6f77ULL;        // ("slow": which nodes are slow)
}  // namespace

double ComputeNoise::step_factor(int rank, int step) const {
  if (!jitters() || jitter->scope != JitterScope::step) return 1.0;
  return jitter_factor(*jitter, seed, sample, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(step), 0);
}

double ComputeNoise::kernel_factor(int rank, int step, std::uint64_t kernel) const {
  if (!jitters() || jitter->scope != JitterScope::kernel) return 1.0;
  return jitter_factor(*jitter, seed ^ kernel_stream, sample, static_cast<std::uint64_t>(rank),
                       static_cast<std::uint64_t>(step), kernel);
}

std::vector<double> rank_slowdowns(const SlowNodes& slow, int ranks, int ranks_per_node, std::uint64_t seed,
                                   std::uint64_t sample, std::uint64_t stream) {
  std::vector<double> scale(static_cast<std::size_t>(ranks), 1.0);
  if (!slow.active()) return scale;
  const int nodes = (ranks + ranks_per_node - 1) / ranks_per_node;
  std::vector<int> chosen;
  for (const int n : slow.nodes) {
    if (n < 0) throw std::invalid_argument("slow node " + std::to_string(n) + ": node indices start at 0");
    if (n < nodes) chosen.push_back(n);  // (a node beyond this configuration's is not in it)
  }
  if (slow.fraction > 0) {
    const int count = std::max(1, static_cast<int>(std::lround(slow.fraction * nodes)));
    // the first `count` of a seeded shuffle (Fisher-Yates on counter draws)
    std::vector<int> order(static_cast<std::size_t>(nodes));
    std::iota(order.begin(), order.end(), 0);
    for (int i = nodes - 1; i > 0; --i) {
      const auto j = static_cast<int>(
          counter_uniform(seed ^ slow_stream, sample, static_cast<std::uint64_t>(i), stream, 0) * (i + 1));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(std::min(j, i))]);
    }
    chosen.insert(chosen.end(), order.begin(), order.begin() + std::min(count, nodes));
  }
  for (const int n : chosen) {
    for (int r = n * ranks_per_node; r < std::min(ranks, (n + 1) * ranks_per_node); ++r)
      scale[static_cast<std::size_t>(r)] = slow.slowdown;
  }
  return scale;
}

double expected_max_standard_normal(int n) {
  if (n < 1) throw std::invalid_argument("expected maximum: needs n >= 1");
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, Simpson's rule on [-12, 12]
  constexpr int intervals = 24000;
  constexpr double lo = -12, hi = 12;
  const double h = (hi - lo) / intervals;
  double sum = 0;
  for (int i = 0; i <= intervals; ++i) {
    const double x = lo + i * h;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    const double f = x * n * phi * std::pow(cdf, n - 1);
    sum += f * (i == 0 || i == intervals ? 1 : (i % 2 == 1 ? 4 : 2));
  }
  return sum * h / 3;
}

}  // namespace dtsim
