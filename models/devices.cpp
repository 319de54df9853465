#include "models/devices.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim {
namespace {

// Memory traffic of one pass: the weights once, the input and output activations of every sample.
double pass_bytes(const Layer& layer, double batch, Precision p) {
  return layer.params * value_bytes(p) + batch * 2.0 * layer.activation_bytes * value_bytes(p) / 4.0;
}

// Seconds of `kernels` kernels of `flops_each` FLOPs at the device's achievable rate, which falls for small kernels
// where half_efficiency_flops is set.
double math_seconds(double kernels, double flops_each, const Device& d, Precision p) {
  const double rate = d.peak_flops(p) * d.efficiency;
  return kernels * (flops_each + d.half_efficiency_flops) / rate;
}

double memory_rate(const Device& d) { return d.memory_Bps * d.memory_efficiency; }

// The device's peak for `p`, which a device lacking the math must never reach the formulas with.
void check_has(const Device& d, Precision p) {
  if (!d.has(p)) {
    throw std::invalid_argument(d.name + " has no " + to_string(p) + " math (it has " + precision_names(d) + ")");
  }
}

}  // namespace

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
      check_has(device, p);
      return p;
    }
  }
  throw std::invalid_argument("expected " + std::string(precision_choices()) + ", got '" + std::string(name) + "'");
}

double forward_seconds(const Layer& layer, double batch, const Device& device, Precision precision) {
  check_has(device, precision);
  const double math = math_seconds(1, batch * layer.forward_flops, device, precision);
  const double memory = pass_bytes(layer, batch, precision) / memory_rate(device);
  return std::max(math, memory) + device.layer_overhead_s;
}

double backward_seconds(const Layer& layer, double batch, const Device& device, Precision precision) {
  check_has(device, precision);
  const double math = math_seconds(layer.backward_flop_factor, batch * layer.forward_flops, device, precision);
  const double memory = 2.0 * pass_bytes(layer, batch, precision) / memory_rate(device);
  return std::max(math, memory) + device.layer_overhead_s;
}

double optimizer_seconds(double params, const Device& device, Optimizer optimizer) {
  // fp32 bytes read and written per parameter: SGD w, g -> w (12); momentum w, g, m -> w, m (20); Adam w, g, m, v ->
  // w, m, v (28)
  const double per_param = optimizer == Optimizer::sgd ? 12.0 : optimizer == Optimizer::momentum ? 20.0 : 28.0;
  return params * per_param / memory_rate(device) + device.layer_overhead_s;
}

double value_bytes(Precision precision) {
  return precision == Precision::fp32 || precision == Precision::tf32 ? 4.0 : 2.0;
}

double optimizer_state_bytes_per_param(Optimizer optimizer, Precision precision) {
  const double state = optimizer == Optimizer::sgd ? 0.0 : optimizer == Optimizer::momentum ? 4.0 : 8.0;
  return state + (value_bytes(precision) < 4.0 ? 4.0 : 0.0);
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
const char* to_string(Optimizer optimizer) {
  return optimizer == Optimizer::sgd ? "sgd" : optimizer == Optimizer::momentum ? "momentum" : "adam";
}
const char* to_string(DeviceKind kind) { return kind == DeviceKind::gpu ? "gpu" : "cpu"; }

}  // namespace dtsim
