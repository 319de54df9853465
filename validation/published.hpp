// dtsim's predictions of the published measurements (validation/published/measurements.csv): each row mapped to a
// device, a model, a precision, a framework and (for more than one device) a cluster, predicted by the same step
// simulation as `dtsim predict`, and compared with what was measured. Rows dtsim cannot model yet (no such model or
// device, a throughput in tokens of a model without a sequence) are kept and say why.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/training.hpp"
#include "scenarios/published_file.hpp"

namespace dtsim {

struct PublishedCase {
  PublishedRow row;
  std::string device;  // the dtsim device and model it was predicted with ("" when not modelled)
  std::string model;
  std::string not_modelled;  // why not, when it is not
  bool fits = true;          // whether dtsim's memory model says the batch fits the device (measured runs did)
  bool grouped = false;      // the model has grouped (or depthwise) convolutions
  // the model has convolutions and runs them in tensor math: 16- or 8-bit (conv_tensor_rate) or tf32 (conv_tf32_rate)
  bool tensor_convs = false;
  bool tf32_convs = false;
  bool tf32 = false;         // tf32 math (gemm_tf32_rate)
  bool cpu_input = false;    // the run decoded real images on the host's CPU cores (cpu_loader_of)
  bool autoaugment = false;  // ... with AutoAugment
  double predicted = 0;      // in the row's unit
  double error = 0;          // (predicted - measured) / measured
};

struct ErrorStats {
  int rows = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
};

// The rows and the median and 90th percentile of absolute errors.
ErrorStats error_stats(const std::vector<double>& abs_errors);

struct PublishedResult {
  std::vector<PublishedCase> cases;
  ErrorStats overall;
  std::vector<std::pair<std::string, ErrorStats>> by_device;
  std::vector<std::pair<std::string, ErrorStats>> by_model;
};

// How a row is turned into a training setup; `device_of` maps the row's device name to a dtsim Device (throws
// std::invalid_argument for none), so that a fit can try parameters without files.
enum class PublishedLibrary { none, nccl_after_backward, nccl };

struct PublishedMapping {
  std::function<Device(const std::string& dtsim_device)> device_of;
  // Samples a CPU core decodes and augments a second in the runs that load real images on the CPU (cpu_loader_of):
  // plain (random crop and flip) and with AutoAugment; 0: the input pipeline is not modelled.
  double decode_per_core = 0;
  double decode_per_core_autoaugment = 0;
  // A row whose gradients are reduced once after its last backward is predicted as its one-device step plus the
  // reduction's seconds, kept per row (for the whole process) after its first full prediction: exact, since nothing
  // overlaps the reduction, and what lets a fit predict such rows on hundreds of GPUs hundreds of times. false: every
  // row's step is simulated whole.
  bool reuse_reductions = true;
  // The collective library the multi-GPU rows' gradients are reduced through where the cluster file names none (the
  // built-in DGX files), as `--library` names it:
  //   nccl                 every such row: what each ran (a ring a NIC in NCCL's protocols, the GPU's generation);
  //   nccl_after_backward  the rows whose reduction overlaps nothing (after the last backward: their reduction's
  //                        seconds are simulated once per row, reuse_reductions); plain messages for the rest, where
  //                        NCCL's rings on hundreds of GPUs, simulated at every step of a fit, cost it most of an hour;
  //   none                 plain messages, each node boundary crossed through one NIC.
  PublishedLibrary multi_gpu_library = PublishedLibrary::nccl_after_backward;
};
PublishedMapping default_published_mapping(const std::string& data_dir);

// Predicts every row whose split is `split` ("fit", "test" or "all"). `data_dir` holds scenarios/clusters.
PublishedResult predict_published(const std::vector<PublishedRow>& rows, const std::string& split,
                                  const PublishedMapping& mapping, const std::string& data_dir);

// Fills result's overall, by_device and by_model from its predicted cases (those with a device).
void summarize_published(PublishedResult& result);

// The dtsim device name a row's device maps to, or "" (exposed for tests and the fit).
std::string published_device_name(const PublishedRow& row);

}  // namespace dtsim
