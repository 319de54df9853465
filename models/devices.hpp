// The device catalogue and the compute model of one training step on one accelerator.
//
// A layer takes max(FLOPs / (peak x efficiency), bytes moved / memory bandwidth) + a fixed per-layer overhead
// (kernel launches and framework work); backward takes the layer's backward factor (2 unless it says otherwise) times
// the forward FLOPs and twice its bytes; the optimizer update streams its per-parameter bytes through memory.
// Efficiency and overhead have documented defaults per device and can be replaced by calibration.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "models/model_zoo.hpp"

namespace dtsim {

enum class Precision : std::uint8_t { fp32, mixed };  // mixed: fp16/bf16 tensor-core math, fp32 master weights

struct Device {
  std::string name;
  std::string source;
  double fp32_flops_per_s = 0;   // peak, dense
  double mixed_flops_per_s = 0;  // peak, dense fp16/bf16 tensor math (fp32 peak where there is none)
  double memory_Bps = 0;         // peak memory bandwidth
  double memory_bytes = 0;       // capacity
  double efficiency = 0.5;       // achieved / peak FLOP/s on training layers (default before calibration)
  double layer_overhead_s = 0;   // fixed time per layer and pass
};

std::span<const Device> device_catalogue();
// Throws std::invalid_argument listing the catalogue when the name is unknown.
const Device& find_device(std::string_view name);
std::string device_names();

enum class Optimizer : std::uint8_t { sgd, momentum, adam };

// What the step computes, per accelerator.
struct ComputeSettings {
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::momentum;
};

// Seconds of one layer's forward and backward pass for `batch` samples on `device`.
double forward_seconds(const Layer& layer, double batch, const Device& device, Precision precision);
double backward_seconds(const Layer& layer, double batch, const Device& device, Precision precision);
// The optimizer update of `params` parameters.
double optimizer_seconds(double params, const Device& device, Optimizer optimizer);
// Bytes per parameter the optimizer keeps beyond the weights and gradients (momentum 4, Adam 8; mixed precision adds
// 4 for fp32 master weights).
double optimizer_state_bytes_per_param(Optimizer optimizer, Precision precision);

const char* to_string(Precision precision);
const char* to_string(Optimizer optimizer);

}  // namespace dtsim
