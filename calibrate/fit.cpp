#include "calibrate/fit.hpp"

#include <algorithm>

#include <Eigen/Dense>
#include <cmath>
#include <set>
#include <sstream>

namespace dtsim {

LinearFit fit_line(std::span<const Sample> samples, const std::string& what, bool slope_only) {
  std::set<double> distinct;
  for (const Sample& s : samples) {
    if (!std::isfinite(s.x) || !std::isfinite(s.y)) throw FitError(what + ": a sample is not a finite number");
    distinct.insert(s.x);
  }
  if (samples.size() < 3 || distinct.size() < 2) {
    throw FitError(what + ": needs at least 3 samples at 2 or more sizes, got " + std::to_string(samples.size()) +
                   " at " + std::to_string(distinct.size()));
  }
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, 0) = 1.0;
    a(i, 1) = samples[static_cast<std::size_t>(i)].x;
    b(i) = samples[static_cast<std::size_t>(i)].y;
  }
  const Eigen::Vector2d p = a.colPivHouseholderQr().solve(b);
  LinearFit fit;
  fit.intercept = p(0);
  fit.slope = p(1);
  fit.min_x = *distinct.begin();
  fit.max_x = *distinct.rbegin();
  const Eigen::VectorXd residual = b - a * p;
  const double mean = b.mean();
  const double total = (b.array() - mean).square().sum();
  fit.r_squared = total > 0 ? 1.0 - residual.squaredNorm() / total : 1.0;
  fit.residuals.assign(residual.data(), residual.data() + residual.size());
  std::ostringstream range;
  range << " (x from " << fit.min_x << " to " << fit.max_x << ")";
  // the slope's standard error: a slope below zero by less than twice it is noise around a flat line
  double spread = 0;
  double mean_x = 0;
  for (const Sample& sample : samples)
    mean_x += sample.x / static_cast<double>(n);
  for (const Sample& sample : samples)
    spread += (sample.x - mean_x) * (sample.x - mean_x);
  const double slope_error = std::sqrt(residual.squaredNorm() / static_cast<double>(n - 2) / spread);
  if (!(fit.slope >= -2 * slope_error)) {
    throw FitError(what + ": negative slope " + std::to_string(fit.slope) + range.str() +
                   "; the time must grow with the size: measure longer or over a wider range");
  }
  const double noise = std::sqrt(residual.squaredNorm() / static_cast<double>(n));
  if (slope_only) return fit;
  if (fit.intercept < -3 * noise && fit.intercept < -1e-12) {
    throw FitError(what + ": negative intercept " + std::to_string(fit.intercept) + range.str() +
                   "; a line does not describe these samples: split the range");
  }
  fit.intercept = std::max(fit.intercept, 0.0);
  fit.slope = std::max(fit.slope, 0.0);
  return fit;
}

std::vector<LinearFit> fit_piecewise(std::span<const Sample> samples, const std::vector<double>& breakpoints,
                                     const std::string& what) {
  if (breakpoints.empty()) throw FitError(what + ": no ranges");
  std::vector<LinearFit> fits;
  for (std::size_t r = 0; r < breakpoints.size(); ++r) {
    const double low = breakpoints[r];
    const double high = r + 1 < breakpoints.size() ? breakpoints[r + 1] : INFINITY;
    std::vector<Sample> in;
    for (const Sample& s : samples) {
      if (s.x >= low && s.x < high) in.push_back(s);
    }
    std::ostringstream name;
    name << what << " [" << low << ", " << high << ") bytes";
    fits.push_back(fit_line(in, name.str()));
  }
  return fits;
}

double fit_message_gap(std::vector<Sample> msgrate) {
  if (msgrate.size() < 2) return 0.0;
  std::sort(msgrate.begin(), msgrate.end(), [](const Sample& a, const Sample& b) { return a.x < b.x; });
  const Sample& a = msgrate[msgrate.size() - 2];
  const Sample& b = msgrate.back();
  if (b.x <= a.x) return 0.0;
  return std::max(0.0, (b.y - a.y) / (b.x - a.x));
}

}  // namespace dtsim
