// How far to trust a prediction: the errors dtsim made on published measurements of real runs that no fit has seen
// (the test split of validation/published/measurements.csv and collectives.csv). `dtsim validate --published
// --write-heldout FILE` writes them (validation/published/heldout.json, scenarios/heldout_file.hpp reads it); predict
// and explain turn them into a range around each predicted throughput. The errors are only reported, never fitted.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dtsim {

// The spread of signed errors (predicted / measured - 1) over some held-out rows.
struct ErrorBand {
  int rows = 0;
  double median_abs_error = 0;
  double p10_error = 0;  // 10th and 90th percentiles of the signed error: 80% of the rows lie between them
  double p90_error = 0;
  int min_devices = 0;  // the smallest and largest runs among the rows (devices per run)
  int max_devices = 0;
  std::vector<std::string> models;  // training rows: the dtsim models they train, sorted (empty for collectives)
  bool operator==(const ErrorBand&) const = default;

  // The range of what a run would measure, given dtsim's prediction of a throughput, if its error falls as 80% of
  // these rows' did: [predicted / (1 + p90), predicted / (1 + p10)]. A time reads the other way: use the throughput's.
  double low(double predicted) const;
  double high(double predicted) const;
};

// The band of signed errors, with each row's device count (the same length) and, for training rows, the models they
// train (empty, or the same length again). Percentiles interpolate linearly
// between the sorted values (as validate's medians do). Empty input gives a band of 0 rows.
ErrorBand error_band(const std::vector<double>& signed_errors, const std::vector<int>& devices,
                     const std::vector<std::string>& models = {});

struct HeldoutErrors {
  std::string generated_by;                                  // the command that wrote them
  ErrorBand training;                                        // every predicted held-out training run
  std::vector<std::pair<std::string, ErrorBand>> by_device;  // by dtsim device name, sorted
  ErrorBand pooled_devices;  // held-out runs of parts whose efficiencies no fit saw (pooled from other parts)
  // Speedups: each held-out multi-device run against the held-out one-device run of the same source, part, model,
  // precision, batch and software (predicted speedup / measured speedup - 1; devices: the multi-device run's)
  ErrorBand speedup;
  ErrorBand collectives;  // held-out nccl-tests and rccl-tests runs: bus bandwidth
  std::vector<std::pair<std::string, ErrorBand>> collectives_by_size;  // the same by collective_size_class
  bool operator==(const HeldoutErrors&) const = default;

  // A device's own band where it has at least `min_rows` held-out runs; nullptr otherwise.
  const ErrorBand* device(const std::string& name, int min_rows) const;
};

// The size classes of collectives' errors, by each rank's buffer as nccl-tests counts it: "< 8 KiB", "8 KiB to 1 MiB",
// ">= 1 MiB" (validate --published and predict alike).
const char* collective_size_class(std::uint64_t bytes_per_rank);

// The fewest held-out runs of one part for predict to quote that part's own band rather than all parts'.
inline constexpr int heldout_min_device_rows = 10;

}  // namespace dtsim
