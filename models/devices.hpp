// A device of the compute model: its peak math per precision, its memory, and the efficiency parameters that
// models/compute_model.hpp turns into kernel times. Devices are described by device files (scenarios/device_file.hpp,
// docs/devices.md); this header knows no files.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtsim {

// The math of the layers. tf32 keeps fp32 storage; fp16 and bf16 store weights, gradients and activations in 2 bytes
// with fp32 master weights; fp8 is fp8 tensor math on bf16 storage (as Transformer Engine's layers: bf16 in and out,
// fp8 inside the GEMMs), with fp32 master weights.
enum class Precision : std::uint8_t { fp32, tf32, fp16, bf16, fp8 };
inline constexpr std::array<Precision, 5> all_precisions{Precision::fp32, Precision::tf32, Precision::fp16,
                                                         Precision::bf16, Precision::fp8};

enum class DeviceKind : std::uint8_t { gpu, cpu };

// Where a device's efficiency parameters came from, when they were fitted to measurements.
struct DeviceFit {
  std::string by;  // who or what fitted them
  long long rows = 0;
  double median_error = 0;
  bool pooled = false;  // no rows of this device: the parameters pooled from devices that had some
};

class Device {
public:
  std::string name;
  std::string description;
  std::string source;  // where the figures come from
  std::string origin;  // where this description was read (a file, a scenario's inline object, a calibration)
  DeviceKind kind = DeviceKind::gpu;
  double memory_bytes = 0;           // capacity
  double memory_Bps = 0;             // peak memory bandwidth
  double efficiency = 0.5;           // achieved / peak FLOP/s of fp32 math on large training kernels
  double tensor_efficiency = 0.5;    // the same for tensor math: tf32, fp16, bf16, fp8
  double half_efficiency_flops = 0;  // FLOPs of a kernel reaching half the achievable rate; 0: no size dependence
  double memory_efficiency = 1.0;    // achieved / peak bandwidth of memory-bound kernels
  // A grouped convolution of c input channels a group reaches c / (c + this) of the rate an ungrouped one of its FLOPs
  // and bytes reaches (models/compute_model.hpp); 0: the same rate
  double grouped_half_channels = 0;
  // A convolution's math runs at this times the rate tensor_efficiency gives a GEMM of its FLOPs: in 16- and 8-bit
  // tensor math (fp16, bf16, fp8), and in tf32 (cuDNN's implicit-GEMM convolutions against cuBLAS's GEMMs); 1: alike
  double conv_tensor_rate = 1;
  double conv_tf32_rate = 1;
  // Another matrix kernel's math (a GEMM: linear layers, attention, the LM head) in tf32 runs at this times the rate
  // tensor_efficiency gives it in 16- or 8-bit math; 1: alike
  double gemm_tf32_rate = 1;
  double kernel_launch_s = 0;    // device time between two kernels of a stream
  std::optional<DeviceFit> fit;  // absent: datasheet figures and default efficiencies

  // Peak dense FLOP/s of `precision`'s math; 0 where the device lacks it.
  double peak_flops(Precision precision) const { return peak_flops_[static_cast<std::size_t>(precision)]; }
  bool has(Precision precision) const { return peak_flops(precision) > 0; }
  // The largest of the peaks: the precision half_efficiency_flops is stated at.
  double largest_peak_flops() const {
    double peak = 0;
    for (const double p : peak_flops_)
      peak = p > peak ? p : peak;
    return peak;
  }
  void set_peak_flops(Precision precision, double flops_per_s) {
    peak_flops_[static_cast<std::size_t>(precision)] = flops_per_s;
  }
  bool fitted() const { return fit.has_value(); }

private:
  std::array<double, all_precisions.size()> peak_flops_{};
};

// The precisions `device` has, e.g. "fp32, fp16".
std::string precision_names(const Device& device);
// Throws std::invalid_argument naming what the device has when it lacks `precision`'s math.
void require_precision(const Device& device, Precision precision);
// A precision by name: fp32, tf32, fp16, bf16, fp8, or mixed (fp16 where the device has it, else bf16). Throws
// std::invalid_argument naming what is accepted for an unknown name, and what the device has when it lacks the math.
Precision precision_for(std::string_view name, const Device& device);
// The accepted names, "fp32, tf32, fp16, bf16, fp8 or mixed".
const char* precision_choices();

const char* to_string(Precision precision);
const char* to_string(DeviceKind kind);

}  // namespace dtsim
