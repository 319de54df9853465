#include "models/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/golden_section.hpp"

namespace dtsim {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double max_events_per_sample = 1e7;  // segments, or expected failures, that sample_runs accepts
constexpr double max_failures_per_sample = 1e8;
constexpr int max_samples = 100'000'000;

[[noreturn]] void refuse(const char* function, const char* argument, const char* expected, double got) {
  std::ostringstream message;
  message << function << ": " << argument << " must be " << expected << ", got " << got;
  throw std::invalid_argument(message.str());
}

void require_positive_finite(const char* function, const char* argument, double value) {
  if (!(value > 0 && std::isfinite(value))) refuse(function, argument, "positive and finite", value);
}

void require_non_negative_finite(const char* function, const char* argument, double value) {
  if (!(value >= 0 && std::isfinite(value))) refuse(function, argument, "non-negative and finite", value);
}

void require_mtbf(const char* function, double mtbf_s) {
  if (!(mtbf_s > 0)) refuse(function, "mtbf_s", "positive (infinity for no failures)", mtbf_s);
}

void check_run(const char* function, double work_s, double mtbf_s, double interval_s, const CheckpointCost& cost) {
  require_positive_finite(function, "work_s", work_s);
  require_mtbf(function, mtbf_s);
  require_positive_finite(function, "interval_s", interval_s);
  require_non_negative_finite(function, "write_s", cost.write_s);
  require_non_negative_finite(function, "restart_s", cost.restart_s);
}

void check_interval_args(const char* function, double write_s, double mtbf_s) {
  if (!(write_s > 0 && std::isfinite(write_s))) {
    refuse(function, "write_s", "positive and finite (a free checkpoint is best taken continuously)", write_s);
  }
  if (!(mtbf_s > 0 && std::isfinite(mtbf_s))) {
    refuse(function, "mtbf_s", "positive and finite (without failures, checkpoint as rarely as possible)", mtbf_s);
  }
}

// e^x - 1 - x without cancellation for small x (the time a failed attempt of x M seconds wastes beyond x M, over M).
double expm1_minus_x(double x) {
  if (x < 1e-3) return x * x * (1.0 / 2 + x * (1.0 / 6 + x * (1.0 / 24 + x / 120)));
  return std::expm1(x) - x;
}

// log(e^x - 1) for x > 0, without overflow for large x.
double log_expm1(double x) { return x > 1 ? x + std::log1p(-std::exp(-x)) : std::log(std::expm1(x)); }

// log of the closed form's wall time per unit of work, less the constants log M + R/M: minimised over tau.
double log_overhead(double interval_s, double mtbf_s, double write_s) {
  return log_expm1((interval_s + write_s) / mtbf_s) - std::log(interval_s);
}

// A uniform double in [0, 1) from the top 53 bits of one 64-bit draw: the same on every standard library.
double uniform(std::mt19937_64& generator) { return static_cast<double>(generator() >> 11) * 0x1.0p-53; }

double time_to_failure_s(std::mt19937_64& generator, double mtbf_s) {
  if (std::isinf(mtbf_s)) return infinity;
  return -std::log1p(-uniform(generator)) * mtbf_s;
}

}  // namespace

double failures_per_hour(const FailureRates& rates, const ComponentCounts& counts) {
  const char* f = "failures_per_hour";
  require_non_negative_finite(f, "gpu_per_h", rates.gpu_per_h);
  require_non_negative_finite(f, "node_per_h", rates.node_per_h);
  require_non_negative_finite(f, "nic_per_h", rates.nic_per_h);
  require_non_negative_finite(f, "link_per_h", rates.link_per_h);
  require_non_negative_finite(f, "switch_per_h", rates.switch_per_h);
  require_non_negative_finite(f, "gpus", counts.gpus);
  require_non_negative_finite(f, "nodes", counts.nodes);
  require_non_negative_finite(f, "nics", counts.nics);
  require_non_negative_finite(f, "links", counts.links);
  require_non_negative_finite(f, "switches", counts.switches);
  return rates.gpu_per_h * counts.gpus + rates.node_per_h * counts.nodes + rates.nic_per_h * counts.nics +
         rates.link_per_h * counts.links + rates.switch_per_h * counts.switches;
}

double mtbf_s(const FailureRates& rates, const ComponentCounts& counts) {
  const double per_h = failures_per_hour(rates, counts);
  return per_h > 0 ? 3600.0 / per_h : infinity;
}

double checkpoint_write_s(double bytes, double write_Bps) {
  require_non_negative_finite("checkpoint_write_s", "bytes", bytes);
  require_positive_finite("checkpoint_write_s", "write_Bps", write_Bps);
  return bytes / write_Bps;
}

RunEstimate expected_run(double work_s, double mtbf_s, double interval_s, const CheckpointCost& cost) {
  check_run("expected_run", work_s, mtbf_s, interval_s, cost);
  const double segments = work_s / interval_s;  // continuous: see the header
  RunEstimate run;
  run.work_s = work_s;
  run.checkpoint_s = segments * cost.write_s;
  if (std::isinf(mtbf_s)) {
    run.wall_s = work_s + run.checkpoint_s;
  } else {
    // Per segment of L = tau + delta: attempts take M (e^(L/M) - 1) in all, of which L is the one that completes;
    // e^(L/M) - 1 attempts fail, each followed by restarts taking M (e^(R/M) - 1) in all. Summed, this is Daly's
    // M e^(R/M) (e^(L/M) - 1) per segment.
    const double x = (interval_s + cost.write_s) / mtbf_s;
    const double failed_attempts = segments * std::expm1(x);
    run.lost_s = segments * mtbf_s * expm1_minus_x(x);
    run.restart_s = cost.restart_s > 0 ? failed_attempts * mtbf_s * std::expm1(cost.restart_s / mtbf_s) : 0.0;
    run.wall_s = mtbf_s * std::exp(cost.restart_s / mtbf_s) * std::expm1(x) * segments;
  }
  run.goodput = work_s / run.wall_s;
  run.expected_interruptions = std::isinf(mtbf_s) ? 0.0 : run.wall_s / mtbf_s;
  return run;
}

double young_interval_s(double write_s, double mtbf_s) {
  check_interval_args("young_interval_s", write_s, mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s);
}

double daly_interval_s(double write_s, double mtbf_s) {
  check_interval_args("daly_interval_s", write_s, mtbf_s);
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double r = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(r) / 3 + r / 9) - write_s;
}

double optimal_interval_s(double mtbf_s, const CheckpointCost& cost) {
  check_interval_args("optimal_interval_s", cost.write_s, mtbf_s);
  require_non_negative_finite("optimal_interval_s", "restart_s", cost.restart_s);
  // The overhead (e^((tau + delta)/M) - 1) / tau falls then rises in tau (its derivative's sign is that of
  // e^((tau + delta)/M) (tau/M - 1) + 1, increasing in tau), so a golden-section search finds its one minimum.
  const double young_s = std::sqrt(2 * cost.write_s * mtbf_s);
  const double lo = std::log(std::min({1.0, mtbf_s / 1000, young_s / 1000}));
  const double hi = std::log(100 * mtbf_s);
  auto f = [&](double log_tau) { return log_overhead(std::exp(log_tau), mtbf_s, cost.write_s); };
  const GoldenBracket g = golden_section(f, lo, hi, 200, 1e-13);
  return std::exp((g.lo + g.hi) / 2);
}

std::vector<double> sample_runs(double work_s, double mtbf_s, double interval_s, const CheckpointCost& cost,
                                std::uint64_t seed, int samples) {
  const char* function = "sample_runs";
  check_run(function, work_s, mtbf_s, interval_s, cost);
  if (samples <= 0 || samples > max_samples) {
    refuse(function, "samples", "between 1 and 1e8", static_cast<double>(samples));
  }
  // Segments: floor(W / tau) whole ones, then the remainder unless it is rounding noise.
  const double whole = std::floor(work_s / interval_s);
  double remainder_s = work_s - whole * interval_s;
  if (remainder_s <= 1e-9 * interval_s) remainder_s = 0;
  const double segments = whole + (remainder_s > 0 ? 1 : 0);
  if (segments > max_events_per_sample) {
    std::ostringstream message;
    message << function << ": " << segments << " checkpoint segments per sample (work_s / interval_s) is more than "
            << max_events_per_sample << "; use a longer interval_s";
    throw std::invalid_argument(message.str());
  }
  const double expected_failures = expected_run(work_s, mtbf_s, interval_s, cost).expected_interruptions;
  if (!(expected_failures <= max_events_per_sample)) {
    std::ostringstream message;
    message << function << ": about " << expected_failures << " failures expected per sample (more than "
            << max_events_per_sample << "): the run would hardly progress; shorten interval_s or the checkpoint";
    throw std::invalid_argument(message.str());
  }

  std::mt19937_64 generator(seed);
  std::vector<double> walls;
  walls.reserve(static_cast<std::size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    double wall_s = 0;
    double failures = 0;
    for (double k = 0; k < segments; ++k) {
      const double attempt_s = (k < whole ? interval_s : remainder_s) + cost.write_s;
      for (;;) {
        const double failure_s = time_to_failure_s(generator, mtbf_s);
        if (failure_s >= attempt_s) {  // work and checkpoint done before the next failure
          wall_s += attempt_s;
          break;
        }
        wall_s += failure_s;  // the segment is lost; restart until a restart completes
        for (;;) {
          if (++failures > max_failures_per_sample) {
            std::ostringstream message;
            message << function << ": a sample passed " << max_failures_per_sample << " failures (about "
                    << expected_failures << " expected)";
            throw std::runtime_error(message.str());
          }
          const double restart_failure_s = cost.restart_s > 0 ? time_to_failure_s(generator, mtbf_s) : infinity;
          if (restart_failure_s >= cost.restart_s) {
            wall_s += cost.restart_s;
            break;
          }
          wall_s += restart_failure_s;
        }
      }
    }
    walls.push_back(wall_s);
  }
  return walls;
}

}  // namespace dtsim
