#include "models/training.hpp"

#include "models/ddp_buckets.hpp"

namespace dtsim {

const char* to_string(ScalingMode mode) { return mode == ScalingMode::weak ? "weak" : "strong"; }
const char* to_string(FrameworkPreset preset) {
  return preset == FrameworkPreset::ddp ? "ddp" : preset == FrameworkPreset::horovod ? "horovod" : "none";
}

void apply_preset(TrainingSetup& setup, FrameworkPreset preset) {
  setup.framework = preset;
  setup.fusion_cycle_s = 0;
  setup.first_bucket_bytes = 0;
  if (preset == FrameworkPreset::ddp) {  // torch.nn.parallel.DistributedDataParallel (models/ddp_buckets.hpp)
    setup.bucket_bytes = static_cast<double>(ddp_bucket_cap_bytes);
    setup.first_bucket_bytes = static_cast<double>(ddp_first_bucket_bytes);
  }
  if (preset == FrameworkPreset::horovod) {
    setup.bucket_bytes = 64e6;    // HOROVOD_FUSION_THRESHOLD default, 64 MiB in Horovod's docs (taken as 64 MB here)
    setup.fusion_cycle_s = 5e-3;  // HOROVOD_CYCLE_TIME default
  }
}

double gradient_bytes_per_param(Precision precision) { return value_bytes(precision); }

double reduce_bytes_per_param(const TrainingSetup& setup) { return gradient_bytes_per_param(reduced_precision(setup)); }

bool parse_reduce_precision(std::string_view name, std::optional<Precision>& out) {
  if (name == "precision") {
    out.reset();
    return true;
  }
  for (const Precision p : {Precision::fp32, Precision::bf16, Precision::fp16}) {
    if (name == to_string(p)) {
      out = p;
      return true;
    }
  }
  return false;
}

MemoryUse memory_use(const TrainingSetup& setup, int local_batch) {
  const double params = setup.model.params();
  const double value = gradient_bytes_per_param(setup.compute.precision);
  MemoryUse m;
  m.weights_bytes = params * value;
  m.gradient_bytes = params * value;
  m.optimizer_bytes = params * optimizer_state_bytes_per_param(setup.compute.optimizer, setup.compute.precision);
  m.activation_bytes = kept_activation_bytes(setup.model, setup.compute) * local_batch * value / 4.0;
  return m;
}

}  // namespace dtsim
