// What a data-parallel training run is: a model on a device, a batch and how it scales, the framework's gradient
// bucketing, and the input pipeline; and the memory it needs per accelerator. Plain values; sim/predict.cpp simulates.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/calibration.hpp"
#include "models/compute_model.hpp"
#include "models/measured_profile.hpp"
#include "models/model_zoo.hpp"
#include "models/variability.hpp"

namespace dtsim {

enum class ScalingMode : std::uint8_t { weak, strong };  // weak: batch per accelerator fixed; strong: global batch
enum class FrameworkPreset : std::uint8_t { ddp, horovod, none };

const char* to_string(ScalingMode mode);
const char* to_string(FrameworkPreset preset);

// The input pipeline of a node, shared by its accelerators: storage read bandwidth, decoding on CPU cores, and a
// prefetch queue per accelerator.
struct InputPipeline {
  bool enabled = false;
  double storage_Bps = 0;
  double sample_bytes = 0;  // one sample as stored (e.g. a JPEG)
  double decode_samples_per_s_per_core = 0;
  int cores = 1;
  int prefetch = 2;  // batches
};

struct TrainingSetup {
  Model model;
  Device device;
  ComputeSettings compute;
  ScalingMode scaling = ScalingMode::weak;
  int batch = 32;  // weak: per accelerator; strong: global
  // Gradient accumulation: micro-batches per optimizer step. Each accelerator runs forward and backward this many
  // times on its share of the batch (weak: `batch` each time; strong: batch / accelerators / accumulation), the
  // gradients are reduced once, during the last micro-batch's backward (DDP's no_sync, Horovod's
  // backward_passes_per_step), and the optimizer steps once.
  int accumulation = 1;
  FrameworkPreset framework = FrameworkPreset::ddp;
  double bucket_bytes = 25e6;     // DDP 25 MB, Horovod 64 MB
  double first_bucket_bytes = 0;  // DDP: the first bucket's limit (PyTorch: 1 MiB); 0: as bucket_bytes
  // false: no bucket's reduction starts before backward has ended, as under PyTorch DDP with
  // find_unused_parameters=True when a parameter registered after the layers is used by the first of them (its buckets
  // keep reverse registration order, DDP::_rebuild_buckets being skipped, and are reduced strictly in sequence, so the
  // first waits for that parameter's gradient: Transformer-XL's shared relative-position biases)
  bool overlap = true;
  double fusion_cycle_s = 0;  // Horovod's cycle time
  // The dtype gradients are reduced in across data-parallel replicas (allreduce, or ZeRO's reduce-scatter): absent,
  // the training precision's (2 bytes in 16-bit and fp8 training, 4 in fp32 and tf32); fp32 where the framework
  // reduces fp32 gradients (torchtitan's FSDP: mixed_precision_reduce "float32"; PyTorch's autocast keeps fp32
  // parameters, whose gradients DDP allreduces as they are).
  std::optional<Precision> reduce_precision;
  InputPipeline input;
  int steps = 3;
  std::vector<FactorRange> network_factors;  // from a calibration: piecewise latency and bandwidth corrections
  // Compute measured on one device (a scenario's "profile"): its layers' times replace the device model's, at the
  // batch it was measured at only; `model` is then model_of(*profile).
  std::optional<MeasuredProfile> profile;
  // Jitter, slow nodes and background traffic (a scenario's "variability"); the background load is already applied
  // to the cluster's bandwidths, the rest applies per rank in the step (sim/step_sampler.hpp).
  Variability variability;
};

// Framework presets: DDP 25 MB buckets in reverse layer order, overlapped; Horovod tensor fusion 64 MB with a 5 ms
// cycle; none: one allreduce of all gradients after backward.
void apply_preset(TrainingSetup& setup, FrameworkPreset preset);

// Whether gradient reductions start while backward still runs: not under preset none (one allreduce after
// backward), nor with buckets that wait for backward (TrainingSetup::overlap false).
inline bool reductions_overlap_backward(const TrainingSetup& setup) {
  return setup.framework != FrameworkPreset::none && setup.overlap;
}

struct MemoryUse {
  double weights_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_bytes = 0;
  double activation_bytes = 0;
  double total_bytes() const { return weights_bytes + gradient_bytes + optimizer_bytes + activation_bytes; }
};

// Bytes of one gradient (and one working copy of a weight): 4 in fp32 and tf32, 2 in fp16, bf16 and fp8 (whose
// gradients are bf16).
double gradient_bytes_per_param(Precision precision);
// The dtype the replicas reduce gradients in: TrainingSetup::reduce_precision, else the training precision.
inline Precision reduced_precision(const TrainingSetup& setup) {
  return setup.reduce_precision.value_or(setup.compute.precision);
}
// Bytes of one gradient as the replicas reduce it (reduced_precision's).
double reduce_bytes_per_param(const TrainingSetup& setup);
// A reduce precision by name (scenario.framework.reduce_precision, --reduce-precision): "precision" (nothing: the
// training precision's), "fp32", "bf16" or "fp16" into `out`; false for any other name, `out` unchanged.
bool parse_reduce_precision(std::string_view name, std::optional<Precision>& out);
inline constexpr const char* reduce_precision_choices = "precision, fp32, bf16 or fp16";

// Memory one accelerator needs for `local_batch` samples.
MemoryUse memory_use(const TrainingSetup& setup, int local_batch);

}  // namespace dtsim
