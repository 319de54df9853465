// Least-squares fits of measured samples (Eigen): a straight line y = intercept + slope x with its R-squared and
// residuals, and piecewise lines over ranges of x (message sizes), as SMPI calibrates its latency and bandwidth
// factors. A fit that cannot be trusted (too few points, a negative slope, nothing finite) is refused.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim {

struct FitError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Sample {
  double x = 0;  // e.g. bytes, or samples per batch
  double y = 0;  // seconds
};

struct LinearFit {
  double intercept = 0;
  double slope = 0;
  double r_squared = 0;
  double min_x = 0;
  double max_x = 0;
  std::vector<double> residuals;  // y - fitted, per sample
};

// Ordinary least squares over at least 3 samples with at least 2 distinct x; `what` names the fit in errors.
// Refuses a slope below zero by more than twice its standard error (time must grow with size) and a negative intercept
// beyond the noise (a latency below zero means the model does not fit).
// `slope_only`: the intercept may be negative and is kept as is (a token bucket lets its burst through for free,
// which shows as a negative intercept of -burst/rate; only the slope is wanted then).
LinearFit fit_line(std::span<const Sample> samples, const std::string& what, bool slope_only = false);

// The per-message gap from `dtsim-mpi-pingpong msgrate` samples (COUNT small messages sent at once, and how long they
// took): the slope of time over count between the two largest counts (the smallest count's time is mostly latency).
// 0 when fewer than two counts were measured or the slope is not positive.
double fit_message_gap(std::vector<Sample> msgrate);

// One line per range [breakpoints[i], breakpoints[i+1]) (the last range unbounded); ranges with too few samples are
// an error naming them.
std::vector<LinearFit> fit_piecewise(std::span<const Sample> samples, const std::vector<double>& breakpoints,
                                     const std::string& what);

}  // namespace dtsim
