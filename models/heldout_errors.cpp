#include "models/heldout_errors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dtsim {
namespace {

double interpolated(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = static_cast<std::size_t>(std::ceil(at));
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

// predicted / (1 + error): what was measured when dtsim erred by `error` (an error of -100% or less cannot occur for a
// positive prediction; such a band has no upper end).
double measured_given(double predicted, double error) {
  return 1 + error > 0 ? predicted / (1 + error) : predicted * 1e300;
}

}  // namespace

double ErrorBand::low(double predicted) const { return measured_given(predicted, p90_error); }
double ErrorBand::high(double predicted) const { return measured_given(predicted, p10_error); }

ErrorBand error_band(const std::vector<double>& signed_errors, const std::vector<int>& devices,
                     const std::vector<std::string>& models) {
  if (signed_errors.size() != devices.size() || (!models.empty() && models.size() != devices.size())) {
    throw std::invalid_argument("error_band: " + std::to_string(signed_errors.size()) + " errors but " +
                                std::to_string(devices.size()) + " device counts and " + std::to_string(models.size()) +
                                " models");
  }
  ErrorBand band;
  band.rows = static_cast<int>(signed_errors.size());
  if (signed_errors.empty()) return band;
  std::vector<double> sorted = signed_errors;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> abs_sorted(sorted.size());
  std::transform(sorted.begin(), sorted.end(), abs_sorted.begin(), [](double e) { return std::abs(e); });
  std::sort(abs_sorted.begin(), abs_sorted.end());
  band.median_abs_error = interpolated(abs_sorted, 0.5);
  band.p10_error = interpolated(sorted, 0.1);
  band.p90_error = interpolated(sorted, 0.9);
  band.min_devices = *std::min_element(devices.begin(), devices.end());
  band.max_devices = *std::max_element(devices.begin(), devices.end());
  band.models = models;
  std::sort(band.models.begin(), band.models.end());
  band.models.erase(std::unique(band.models.begin(), band.models.end()), band.models.end());
  return band;
}

const char* collective_size_class(std::uint64_t bytes_per_rank) {
  if (bytes_per_rank < 8192) return "< 8 KiB";
  if (bytes_per_rank < (1U << 20)) return "8 KiB to 1 MiB";
  return ">= 1 MiB";
}

const ErrorBand* HeldoutErrors::device(const std::string& name, int min_rows) const {
  for (const auto& [device_name, band] : by_device) {
    if (device_name == name) return band.rows >= min_rows ? &band : nullptr;
  }
  return nullptr;
}

}  // namespace dtsim
