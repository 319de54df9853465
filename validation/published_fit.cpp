#include "validation/published_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>

#include "models/golden_section.hpp"
#include "validation/validate.hpp"

namespace dtsim {
namespace {

constexpr int golden_steps = 18;
constexpr double lowest_efficiency = 0.02;
constexpr double shortest_knee_s = 1e-7;
// In the saturating curve a kernel of almost no work still costs t_half / efficiency on the device, and tiny kernels
// take a few microseconds on real GPUs (their launch), so the knee stays under 2 us. Left free, the published table
// pushes it up to where it stands for a per-kernel overhead (19 us at a 20 us bound: docs/validation.md), which would
// make a tiny model's kernels outlast their dispatch.
constexpr double longest_knee_s = 2e-6;
// log-spaced points searched before the golden section (the knee's cost has several minima)
constexpr int knee_grid = 24;
// The range of grouped_half_channels searched: from a penalty only depthwise convolutions feel (0.05: 95% of the rate
// at one channel a group) to one that slows even 32 channels a group ninefold.
constexpr double lowest_grouped_half = 0.05;
constexpr double highest_grouped_half = 256;
// The range of the kernel rates in tensor math searched: from a quarter to four times a 16-bit GEMM's (the device
// files' range).
constexpr double lowest_kernel_rate = 0.25;
constexpr double highest_kernel_rate = 4;
// The range of an input pipeline's samples a core a second searched: from a pipeline no run here could have kept up
// with to one that never binds.
constexpr double lowest_decode_rate = 10;
constexpr double highest_decode_rate = 10000;

// The minimum of `f` over [lo, hi] by golden-section search (f unimodal enough; deterministic either way).
double golden_search(const std::function<double(double)>& f, double lo, double hi) {
  return golden_section(f, lo, hi, golden_steps).best();
}

double knee_search(const std::function<double(double)>& f, double lo, double hi) {
  return grid_search(f, lo, hi, Flat::refine);
}

double lowest_of_least(const std::function<double(double)>& f, double lo, double hi) {
  return grid_search(f, lo, hi, Flat::first);
}

using LogParams = std::array<double, 3>;  // log efficiency, log tensor_efficiency, log memory_efficiency

LogParams to_log(const EfficiencyParams& p) {
  return {std::log(p.efficiency), std::log(p.tensor_efficiency), std::log(p.memory_efficiency)};
}
EfficiencyParams from_log(const LogParams& l) { return {std::exp(l[0]), std::exp(l[1]), std::exp(l[2])}; }

}  // namespace

double grid_search(const std::function<double(double)>& f, double lo, double hi, Flat flat) {
  const double step = (hi - lo) / knee_grid;
  std::array<double, knee_grid + 1> cost{};
  for (int i = 0; i <= knee_grid; ++i)
    cost[static_cast<std::size_t>(i)] = f(lo + i * step);
  const double least = *std::min_element(cost.begin(), cost.end());
  const double tie = flat == Flat::first ? least + 1e-9 * std::fabs(least) : least;
  int i = 0;
  while (cost[static_cast<std::size_t>(i)] > tie)
    ++i;
  if (flat == Flat::first && (i == knee_grid || cost[static_cast<std::size_t>(i + 1)] <= tie)) return lo + i * step;
  const double x = golden_search(f, lo + std::max(i - 1, 0) * step, lo + std::min(i + 1, knee_grid) * step);
  return f(x) < cost[static_cast<std::size_t>(i)] ? x : lo + i * step;
}

void apply_fit(Device& device, const EfficiencyParams& params, double t_half_s, double grouped_half_channels,
               const KernelRates& rates) {
  device.efficiency = params.efficiency;
  device.tensor_efficiency = params.tensor_efficiency;
  device.memory_efficiency = params.memory_efficiency;
  device.half_efficiency_flops = t_half_s * device.largest_peak_flops();
  device.grouped_half_channels = grouped_half_channels;
  device.conv_tensor_rate = rates.conv_tensor;
  device.conv_tf32_rate = rates.conv_tf32;
  device.gemm_tf32_rate = rates.gemm_tf32;
}

PublishedFit fit_published(const std::vector<PublishedRow>& rows, const std::vector<std::string>& devices,
                           const PublishedMapping& mapping, const std::string& data_dir,
                           const PublishedFitOptions& options) {
  std::vector<PublishedRow> fit_rows;
  for (const PublishedRow& row : rows) {
    if (row.split == "fit") fit_rows.push_back(row);
  }
  PublishedFit fit;
  // every search starts from the datasheet defaults, whatever the device files hold now, so that fitting again from
  // fitted files gives the same parameters
  const EfficiencyParams start;
  constexpr double start_knee_s = 1e-5;
  // each device file read once: the search predicts its rows thousands of times
  std::map<std::string, Device> base;
  auto base_device = [&](const std::string& name) -> const Device& {
    auto it = base.find(name);
    if (it == base.end()) it = base.emplace(name, mapping.device_of(name)).first;
    return it->second;
  };
  PublishedMapping defaults = mapping;  // (its collective library; no input pipeline until searched)
  defaults.decode_per_core = 0;
  defaults.decode_per_core_autoaugment = 0;
  defaults.device_of = [&](const std::string& name) {
    Device d = base_device(name);
    apply_fit(d, start, 0, 0, KernelRates{});
    return d;
  };
  const PublishedResult before = predict_published(fit_rows, "fit", defaults, data_dir);
  fit.before = before.overall;
  // the predictable fit rows of each device, and those of networks with grouped convolutions
  std::map<std::string, std::vector<PublishedRow>> by_device;
  std::vector<PublishedRow> grouped_rows, tensor_conv_rows, tf32_conv_rows, tf32_rows, input_rows, autoaugment_rows;
  for (const PublishedCase& c : before.cases) {
    if (c.device.empty()) continue;
    by_device[c.device].push_back(c.row);
    if (c.grouped) grouped_rows.push_back(c.row);
    if (c.tensor_convs) tensor_conv_rows.push_back(c.row);
    if (c.tf32_convs) tf32_conv_rows.push_back(c.row);
    if (c.tf32) tf32_rows.push_back(c.row);
    if (c.cpu_input) (c.autoaugment ? autoaugment_rows : input_rows).push_back(c.row);
  }
  if (by_device.empty()) throw std::invalid_argument("no fit row of the published table can be predicted");

  std::map<std::string, LogParams> theta;
  for (const auto& [name, device_rows] : by_device)
    theta[name] = to_log(start);
  double log_knee = std::log(start_knee_s);
  double grouped_half = 0;  // (no grouped penalty until its first search)
  KernelRates rates;
  double decode_rate = 0, autoaugment_rate = 0;  // (not modelled until their first search)
  LogParams pooled{};

  auto fitted_mapping = [&](double knee_s) {
    PublishedMapping m = mapping;
    m.decode_per_core = decode_rate;
    m.decode_per_core_autoaugment = autoaugment_rate;
    m.device_of = [&, knee_s](const std::string& name) {
      Device d = base_device(name);
      const auto it = theta.find(name);
      apply_fit(d, from_log(it == theta.end() ? pooled : it->second), knee_s, grouped_half, rates);
      return d;
    };
    return m;
  };
  auto squared_log_errors = [&](const std::vector<PublishedRow>& subset, double knee_s) {
    const PublishedResult r = predict_published(subset, "fit", fitted_mapping(knee_s), data_dir);
    double sum = 0;
    for (const PublishedCase& c : r.cases) {
      if (!c.device.empty()) sum += std::pow(std::log(c.predicted / c.row.throughput), 2);
    }
    return sum;
  };
  auto update_pooled = [&] {
    pooled = {0, 0, 0};
    for (const auto& [name, t] : theta) {
      for (std::size_t k = 0; k < t.size(); ++k)
        pooled[k] += t[k] / static_cast<double>(theta.size());
    }
  };
  update_pooled();
  const double lo = std::log(lowest_efficiency);
  // a value shared by all devices, searched in log space on the rows it changes (none: left as it is)
  const auto fit_shared = [&](double& value, const std::vector<PublishedRow>& subset, double lowest, double highest,
                              const auto& search) {
    if (subset.empty()) return;
    value = std::exp(search(
        [&](double x) {
          const double keep = value;
          value = std::exp(x);
          const double cost = squared_log_errors(subset, std::exp(log_knee));
          value = keep;
          return cost;
        },
        std::log(lowest), std::log(highest)));
  };
  for (int sweep = 0; sweep < options.sweeps; ++sweep) {
    fit_shared(grouped_half, grouped_rows, lowest_grouped_half, highest_grouped_half, knee_search);
    fit_shared(rates.conv_tensor, tensor_conv_rows, lowest_kernel_rate, highest_kernel_rate, golden_search);
    fit_shared(rates.conv_tf32, tf32_conv_rows, lowest_kernel_rate, highest_kernel_rate, golden_search);
    fit_shared(rates.gemm_tf32, tf32_rows, lowest_kernel_rate, highest_kernel_rate, golden_search);
    fit_shared(decode_rate, input_rows, lowest_decode_rate, highest_decode_rate, knee_search);
    fit_shared(autoaugment_rate, autoaugment_rows, lowest_decode_rate, highest_decode_rate, knee_search);
    log_knee = knee_search([&](double x) { return squared_log_errors(fit_rows, std::exp(x)); },
                           std::log(shortest_knee_s), std::log(longest_knee_s));
    for (auto& entry : theta) {  // not a structured binding: clang 14 cannot capture one in the lambda below
      LogParams& t = entry.second;
      const std::vector<PublishedRow>& subset = by_device.at(entry.first);
      for (std::size_t k = 0; k < t.size(); ++k) {
        t[k] = golden_search(
            [&](double x) {
              const double keep = t[k];
              t[k] = x;
              const double cost =
                  squared_log_errors(subset, std::exp(log_knee)) + options.prior_weight * std::pow(x - pooled[k], 2);
              t[k] = keep;
              return cost;
            },
            lo, 0.0);
      }
    }
    update_pooled();
  }
  // the input rates once more, against the device parameters written: above the rate at which no row waits for its
  // input the cost is flat, and this keeps the lowest grid rate of its least cost (a rate searched before the last
  // sweep moved the devices, or by golden sections on that flat stretch, can sit anywhere on it)
  fit_shared(decode_rate, input_rows, lowest_decode_rate, highest_decode_rate, lowest_of_least);
  fit_shared(autoaugment_rate, autoaugment_rows, lowest_decode_rate, highest_decode_rate, lowest_of_least);

  fit.t_half_s = std::exp(log_knee);
  fit.grouped_half_channels = grouped_half;
  fit.grouped_rows = static_cast<int>(grouped_rows.size());
  fit.rates = rates;
  fit.conv_tensor_rows = static_cast<int>(tensor_conv_rows.size());
  fit.conv_tf32_rows = static_cast<int>(tf32_conv_rows.size());
  fit.tf32_rows = static_cast<int>(tf32_rows.size());
  fit.input = {"", decode_rate, autoaugment_rate, static_cast<int>(input_rows.size()),
               static_cast<int>(autoaugment_rows.size())};
  fit.pooled = from_log(pooled);
  const PublishedResult after = predict_published(fit_rows, "fit", fitted_mapping(fit.t_half_s), data_dir);
  fit.after = after.overall;
  std::map<std::string, std::vector<double>> errors;
  for (const PublishedCase& c : after.cases) {
    if (!c.device.empty()) errors[c.device].push_back(std::fabs(c.error));
  }
  for (const std::string& name : devices) {
    DeviceFitResult r;
    const auto it = theta.find(name);
    if (it == theta.end()) {
      r.params = fit.pooled;
      r.median_error = fit.after.median_abs_error;
    } else {
      r.params = from_log(it->second);
      r.rows = static_cast<int>(errors[name].size());
      r.median_error = percentile(errors[name], 0.5);
    }
    fit.devices[name] = r;
  }
  return fit;
}

}  // namespace dtsim
