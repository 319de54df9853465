// The fit of the devices' efficiency parameters to the fit split of the published measurements
// (validation/published/measurements.csv, split column "fit"): what `dtsim calibrate --published` runs. Test rows
// never enter it.
//
// Per device d with fit rows: efficiency (fp32 math), tensor_efficiency, memory_efficiency, in log space; shared by
// all: the knee t_half of the saturating kernel curve (half_efficiency_flops = t_half x the device's largest peak: a
// kernel that would take t_half at peak runs at half the achievable rate), and grouped_half_channels (a grouped
// convolution of c channels a group runs at c / (c + it) of an ungrouped one's rate), searched on the fit rows of
// networks with grouped convolutions, the only ones it changes, and conv_tensor_rate, conv_tf32_rate and gemm_tf32_rate
// (a convolution's math rate in 16-/8-bit tensor math and in tf32, another matrix kernel's in tf32, against a 16-bit
// GEMM's: cuDNN's kernels and cuBLAS's, and tf32 and 16-bit ones, reach different shares of the peak), each searched on
// the fit rows it changes (convolutional networks in that math; every tf32 row). Minimised:
//   sum over fit rows of log(predicted / measured)^2 + prior_weight x sum over devices and parameters of
//   (log parameter - pooled log parameter)^2
// where the pooled value of a parameter is its mean over the devices fitted. The prior keeps a device with one or two
// rows near the others instead of bending to a single measurement; devices with no fit rows get the pooled values.
// The search is deterministic coordinate descent: golden-section search of each parameter in turn, a fixed number of
// sweeps, so the same table gives the same parameters. The input pipelines' rates are searched once more after the
// sweeps, against the device parameters written (grid_search, Flat::first: their cost is flat above the rate at which
// no row waits for its input).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scenarios/input_rates_file.hpp"
#include "validation/published.hpp"

namespace dtsim {

// What grid_search does where its least is flat: refine it all the same, or keep the first grid point of the flat
// stretch (the next point within a relative 1e-9 of the least), not whichever point rounding favours.
enum class Flat : std::uint8_t { refine, first };

// The minimum of `f` over [lo, hi]: the first least of 25 evenly spaced points, then a golden-section search between
// its neighbours (deterministic), unless `flat` keeps the point. The shared values' search (in log space).
double grid_search(const std::function<double(double)>& f, double lo, double hi, Flat flat);

struct EfficiencyParams {
  double efficiency = 0.5;
  double tensor_efficiency = 0.5;
  double memory_efficiency = 1.0;
};

struct DeviceFitResult {
  EfficiencyParams params;
  int rows = 0;             // fit rows of this device predicted (0: pooled)
  double median_error = 0;  // of the fitted model on those rows (on all fit rows for a pooled device)
};

// The rates every device shares: a convolution's in 16-/8-bit tensor math and in tf32, another matrix kernel's in
// tf32, each against a 16-bit GEMM's.
struct KernelRates {
  double conv_tensor = 1;
  double conv_tf32 = 1;
  double gemm_tf32 = 1;
};

struct PublishedFitOptions {
  double prior_weight = 1.0;  // one row's squared log error per squared log deviation from the pooled value
  int sweeps = 4;
};

struct PublishedFit {
  double t_half_s = 0;
  double grouped_half_channels = 0;  // shared by all devices, fitted on the rows of networks with grouped convolutions
  int grouped_rows = 0;              // those fit rows (0: not fitted, left at 0)
  // shared by all devices: a convolution's rate in 16-/8-bit tensor math and in tf32, and another matrix kernel's in
  // tf32, relative to a 16-bit GEMM's, each fitted on the rows it changes (1 where there are none)
  KernelRates rates;
  int conv_tensor_rows = 0;
  int conv_tf32_rows = 0;
  int tf32_rows = 0;
  // the input pipelines' rates (PublishedMapping) and the rows they were fitted on, those that load on CPU
  // (generated_by left empty: the writer of the file names itself)
  PublishedInputRates input;
  EfficiencyParams pooled;
  std::map<std::string, DeviceFitResult> devices;  // every device the mapping can load, fitted or pooled
  ErrorStats before;                               // the fit split with the parameters the mapping gave
  ErrorStats after;                                // the fit split with the fitted parameters
};

// Applies fitted parameters to a device: efficiencies, half_efficiency_flops = t_half x its largest peak, the
// grouped convolutions' half-rate channels and the kernel rates in tensor math.
void apply_fit(Device& device, const EfficiencyParams& params, double t_half_s, double grouped_half_channels,
               const KernelRates& rates);

// Fits on the rows whose split is "fit". `devices` names every device to write (those without fit rows get pooled
// values). Throws std::invalid_argument when no fit row can be predicted.
PublishedFit fit_published(const std::vector<PublishedRow>& rows, const std::vector<std::string>& devices,
                           const PublishedMapping& mapping, const std::string& data_dir,
                           const PublishedFitOptions& options = {});

}  // namespace dtsim
