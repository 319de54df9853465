#include "models/devices.hpp"

#include <stdexcept>

namespace dtsim {
void require_precision(const Device& d, Precision p) {
  if (!d.has(p)) {
    throw std::invalid_argument(d.name + " has no " + to_string(p) + " math (it has " + precision_names(d) + ")");
  }
}

std::string precision_names(const Device& device) {
  std::string out;
  for (Precision p : all_precisions) {
    if (device.has(p)) out += (out.empty() ? "" : ", ") + std::string(to_string(p));
  }
  return out;
}

const char* precision_choices() { return "fp32, tf32, fp16, bf16, fp8 or mixed"; }

Precision precision_for(std::string_view name, const Device& device) {
  if (name == "mixed") {
    if (device.has(Precision::fp16)) return Precision::fp16;
    if (device.has(Precision::bf16)) return Precision::bf16;
    throw std::invalid_argument(device.name + " has neither fp16 nor bf16 math for mixed (it has " +
                                precision_names(device) + ")");
  }
  for (Precision p : all_precisions) {
    if (name == to_string(p)) {
      require_precision(device, p);
      return p;
    }
  }
  throw std::invalid_argument("expected " + std::string(precision_choices()) + ", got '" + std::string(name) + "'");
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}
const char* to_string(DeviceKind kind) { return kind == DeviceKind::gpu ? "gpu" : "cpu"; }

}  // namespace dtsim
