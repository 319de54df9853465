#include "models/devices.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace dtsim {
namespace {

// Peak figures from the vendors' datasheets (dense, no sparsity). Efficiency and overhead: defaults until calibrated
// (calibrate/ measures them): 0.5 of peak and 20 us per layer and pass on GPUs (kernel launches plus framework
// dispatch, PyTorch eager), 0.5 and 5 us on the CPU.
const std::vector<Device>& catalogue() {
  static const std::vector<Device> devices{
      {"v100",
       "NVIDIA Tesla V100 SXM2 32GB datasheet (2018): 15.7 TFLOP/s fp32, 125 TFLOP/s fp16 tensor, HBM2 900 GB/s",
       15.7e12, 125e12, 900e9, 32e9, 0.5, 20e-6},
      {"a100",
       "NVIDIA A100 SXM4 80GB datasheet (2021): 19.5 TFLOP/s fp32, 312 TFLOP/s fp16/bf16 tensor, HBM2e 2039 GB/s",
       19.5e12, 312e12, 2039e9, 80e9, 0.5, 20e-6},
      {"h100",
       "NVIDIA H100 SXM5 80GB datasheet (2023): 67 TFLOP/s fp32, 989 TFLOP/s fp16/bf16 tensor dense, HBM3 "
       "3.35 TB/s",
       67e12, 989e12, 3350e9, 80e9, 0.5, 20e-6},
      {"rtx3090",
       "NVIDIA GeForce RTX 3090 (GA102 whitepaper, 2020): 35.6 TFLOP/s fp32, 71 TFLOP/s fp16 tensor with "
       "fp16 accumulate (35.6 with fp32 accumulate, used here), GDDR6X 936 GB/s, 24 GB",
       35.6e12, 35.6e12, 936e9, 24e9, 0.5, 20e-6},
      {"xeon-8380",
       "Intel Xeon Platinum 8380 (Ice Lake, 2021): 40 cores x 2.3 GHz x 32 fp32 FLOP/cycle (two AVX-512 "
       "FMA units) = 2.94 TFLOP/s, no fp16 math, 8 channels DDR4-3200 = 204.8 GB/s, 256 GB per socket "
       "as configured",
       2.94e12, 2.94e12, 204.8e9, 256e9, 0.5, 5e-6},
  };
  return devices;
}

double peak(const Device& d, Precision p) { return p == Precision::mixed ? d.mixed_flops_per_s : d.fp32_flops_per_s; }
double value_bytes(Precision p) { return p == Precision::mixed ? 2.0 : 4.0; }

// Memory traffic of one pass: the weights once, the input and output activations of every sample.
double pass_bytes(const Layer& layer, double batch, Precision p) {
  return layer.params * value_bytes(p) + batch * 2.0 * layer.activation_bytes * value_bytes(p) / 4.0;
}

}  // namespace

std::span<const Device> device_catalogue() { return catalogue(); }

std::string device_names() {
  std::string names;
  for (const Device& d : catalogue())
    names += (names.empty() ? "" : ", ") + d.name;
  return names;
}

const Device& find_device(std::string_view name) {
  for (const Device& d : catalogue()) {
    if (d.name == name) return d;
  }
  throw std::invalid_argument("unknown device '" + std::string(name) + "' (accepted: " + device_names() + ")");
}

double forward_seconds(const Layer& layer, double batch, const Device& device, Precision precision) {
  const double math = batch * layer.forward_flops / (peak(device, precision) * device.efficiency);
  const double memory = pass_bytes(layer, batch, precision) / device.memory_Bps;
  return std::max(math, memory) + device.layer_overhead_s;
}

double backward_seconds(const Layer& layer, double batch, const Device& device, Precision precision) {
  const double math =
      batch * layer.forward_flops * layer.backward_flop_factor / (peak(device, precision) * device.efficiency);
  const double memory = 2.0 * pass_bytes(layer, batch, precision) / device.memory_Bps;
  return std::max(math, memory) + device.layer_overhead_s;
}

double optimizer_seconds(double params, const Device& device, Optimizer optimizer) {
  // fp32 bytes read and written per parameter: SGD w, g -> w (12); momentum w, g, m -> w, m (20); Adam w, g, m, v ->
  // w, m, v (28)
  const double per_param = optimizer == Optimizer::sgd ? 12.0 : optimizer == Optimizer::momentum ? 20.0 : 28.0;
  return params * per_param / device.memory_Bps + device.layer_overhead_s;
}

double optimizer_state_bytes_per_param(Optimizer optimizer, Precision precision) {
  const double state = optimizer == Optimizer::sgd ? 0.0 : optimizer == Optimizer::momentum ? 4.0 : 8.0;
  return state + (precision == Precision::mixed ? 4.0 : 0.0);
}

const char* to_string(Precision precision) { return precision == Precision::mixed ? "mixed" : "fp32"; }
const char* to_string(Optimizer optimizer) {
  return optimizer == Optimizer::sgd ? "sgd" : optimizer == Optimizer::momentum ? "momentum" : "adam";
}

}  // namespace dtsim
