// The compute model: the seconds of one layer's kernels on one device, as frameworks run them.
//
// A layer runs its matrix kernels (convolution, GEMMs) and then its memory-bound kernels (batch or layer norm,
// activation, residual add, softmax, dropout), one after the other on the device:
//   math     = flop factor x (F + H) / (peak(precision) x efficiency(precision))
//              F: the pass's FLOPs for the batch, H: the device's half_efficiency_flops x peak(precision) / its
//              largest peak (the same seconds of work at every precision). A kernel of F FLOPs reaches
//              F / (F + H) of the achievable rate: a saturating curve, fitted rather than derived from tiles and
//              waves because the published measurements (validation/published) constrain one knee per device, not a
//              tile shape per kernel; efficiency(fp32) is the device's `efficiency`, tensor math (tf32, fp16, bf16,
//              fp8) its `tensor_efficiency`.
//              math is divided by the kernel's rate on a GPU: a convolution's in tensor math the device's
//              conv_tensor_rate (fp16, bf16, fp8) or conv_tf32_rate (tf32), another matrix kernel's in tf32 its
//              gemm_tf32_rate, else 1: cuDNN's convolutions and cuBLAS's GEMMs reach different shares of the peak,
//              and tf32 kernels other shares than 16-bit ones; one value each for all devices, fitted
//              (docs/compute.md). In fp8 an attention layer's score products (score_flops) run in 16 bits, as fp8
//              training runs them (score_precision).
//   matrix   = max(math, (weights + batch x activation bytes) / (bandwidth x memory_efficiency)) / grouped
//              grouped: 1 for an ungrouped convolution or a GEMM; c / (c + grouped_half_channels) for a grouped
//              convolution of c input channels a group (ResNeXt's 3x3s: 4 to 32; a depthwise one: 1). cuDNN runs
//              them as many small GEMMs or direct kernels far below the rate of one large GEMM of the same FLOPs; one
//              curve over c, fitted to published ResNeXt and EfficientNet runs (the device's field)
//   memory   = traffic(kind, pass) x batch x activation bytes / (bandwidth x memory_efficiency)
//              traffic: bytes the layer's memory-bound kernels move per byte of activation it keeps (kernel_traffic);
//              a pooling layer, whose input is larger than what it keeps, moves its input and output bytes instead
//              (kernel_traffic's factors times input + output: a global pool reads its whole map to keep one value a
//              channel)
//   device   = matrix + memory + kernels x kernel_launch
//   layer    = max(device, kernels x the runtime's host time per kernel)   (the host queues kernels ahead of the
//              device: the slower of the two sets the pace)
// F counts a 3x3 stride-1 convolution's FLOPs divided by Winograd's 36/16 fewer multiplies in fp32, where cuDNN runs
// such convolutions by Winograd (on CUDA cores; tensor-core math runs them as implicit GEMMs).
// Layers of a memory-bound kind (norm, activation, pool, elementwise, softmax, embedding) have no matrix part.
// Backward runs backward_flop_factor x the forward FLOPs, twice the kernels and kernel_traffic's backward bytes; full
// recomputation runs the forward again first, selective recomputation (Korthikanti et al. 2022) the attention scores'
// memory-bound kernels. A fused (flash) attention kernel never writes the scores (score_bytes) and recomputes Q K^T in
// backward (half the score FLOPs). A convolution in NCHW layout with 16-bit math adds the transposes of
// layout_transposes (cuDNN runs tensor-core convolutions in NHWC and converts NCHW tensors around them); in fp32 a
// 3x3 stride-1 convolution on a GPU runs its winograd_flops by Winograd. The optimizer streams its per-parameter
// bytes; the runtime adds a per-step cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "models/devices.hpp"
#include "models/model_zoo.hpp"

namespace dtsim {

enum class Optimizer : std::uint8_t { sgd, momentum, adam };
// How the optimizer's update is launched: multi_tensor (the whole model in a few kernels: apex's fused optimizers,
// PyTorch's foreach implementations, XLA) or per_tensor (a loop over the parameter tensors, each update's kernels
// launched by the host: PyTorch's optimizers before foreach became their default in 2.0, a scripted function a tensor).
enum class OptimizerLoop : std::uint8_t { multi_tensor, per_tensor };
// Kernels one tensor's update launches in a per-tensor loop: SGD 1 (p += -lr g), momentum 3 (the buffer scaled and
// added to, p updated), Adam 7 (two moments scaled and added to, the denominator's square root and epsilon, p updated).
double optimizer_kernels_per_tensor(Optimizer optimizer);

// How the framework issues kernels: eager (PyTorch without graphs: every kernel dispatched by the host), CUDA graphs
// (the whole step replayed from one launch), XLA (TensorFlow or JAX compiled: memory-bound chains fused).
enum class Runtime : std::uint8_t { eager, cuda_graphs, xla };
// Activation recomputation: none; selective (Korthikanti et al. 2022: the attention scores' memory-bound kernels run
// again, the scores not kept); selective_op (torchtitan's per-op policy: a transformer block keeps the outputs of its
// matrix products and attention but every second product, counted in forward order, and runs those and the
// memory-bound kernels again in backward: Layer::op_recompute_flops); full (each layer's forward again, its input
// kept).
enum class Recompute : std::uint8_t { none, selective, selective_op, full };
// How image tensors are laid out: nhwc (channels last: what cuDNN's tensor-core convolutions read) or nchw (PyTorch's
// default: in 16-bit math each convolution's tensors are transposed to NHWC and back around the kernel).
enum class MemoryFormat : std::uint8_t { nhwc, nchw };

struct RuntimeCosts {
  double host_s_per_kernel = 0;  // host time to issue one kernel
  double step_s = 0;             // per step: optimizer bookkeeping, gradient zeroing, the Python loop
  double traffic_scale = 1;      // memory-bound bytes relative to unfused kernels
  double kernel_scale = 1;       // kernels relative to eager
};
// The presets, with their sources in docs/compute.md.
RuntimeCosts runtime_costs(Runtime runtime);

// What the step computes, per accelerator.
struct ComputeSettings {
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::momentum;
  OptimizerLoop optimizer_loop = OptimizerLoop::multi_tensor;
  Runtime runtime = Runtime::eager;
  Recompute recompute = Recompute::none;
  bool flash_attention = false;
  MemoryFormat memory_format = MemoryFormat::nhwc;
};

// Bytes moved by a layer's memory-bound kernels per byte of activation it keeps, forward and backward.
struct KernelTraffic {
  double forward = 0;
  double backward = 0;
};
KernelTraffic kernel_traffic(LayerKind kind);
// The transposes around a convolution whose tensors are NCHW in 16-bit math on a GPU: fp32 bytes per sample read and
// written (stored at the precision's bytes, like kept activations) and kernels, per pass; none in other layouts,
// precisions, layer kinds or on CPUs.
struct LayoutTransposes {
  double forward_bytes = 0;
  double backward_bytes = 0;
  double forward_kernels = 0;
  double backward_kernels = 0;
};
LayoutTransposes layout_transposes(const Layer& layer, const Device& device, const ComputeSettings& settings);
// Kernels a layer launches in its forward pass (its own count, else its kind's).
double forward_kernels(const Layer& layer);
bool memory_bound(LayerKind kind);

// Seconds of one layer's forward and backward pass for `batch` samples on `device`. Throws std::invalid_argument when
// the device lacks the precision's math.
double forward_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& settings);
double backward_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& settings);
// Seconds of the matrix products of a layer's projections (every product but attention's score products), forward or
// backward (backward_flop_factor x the forward's FLOPs), at the rate forward_seconds gives them: what asynchronous
// tensor parallelism can overlap its collectives with. 0 for a memory-bound layer.
double projection_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& settings,
                          bool forward);
// The optimizer update of `params` parameters held in `tensors` tensors plus the runtime's per-step cost. A
// per-tensor loop launches optimizer_kernels_per_tensor kernels a tensor: the update takes at least their host time
// (eager: nothing runs ahead of it, the step having waited for the loss).
double optimizer_seconds(double params, const Device& device, const ComputeSettings& settings, double tensors = 0);
// Activation bytes per sample a layer keeps for backward under `settings` (fp32 units, as Layer counts them).
double kept_activation_bytes(const Layer& layer, const ComputeSettings& settings);
// Their sum over the model's layers.
double kept_activation_bytes(const Model& model, const ComputeSettings& settings);
// Bytes of one stored value (weight copy, gradient, activation): 4 in fp32 and tf32, 2 otherwise.
double value_bytes(Precision precision);
// Bytes per parameter the optimizer keeps beyond the weights and gradients (momentum 4, Adam 8; fp16, bf16 and fp8
// add 4 for fp32 master weights).
double optimizer_state_bytes_per_param(Optimizer optimizer, Precision precision);

const char* to_string(Optimizer optimizer);
const char* to_string(OptimizerLoop loop);
std::optional<OptimizerLoop> optimizer_loop_from_string(std::string_view name);
const char* to_string(Runtime runtime);
const char* to_string(Recompute recompute);
const char* to_string(MemoryFormat format);
std::optional<Runtime> runtime_from_string(std::string_view name);
std::optional<Recompute> recompute_from_string(std::string_view name);
std::optional<MemoryFormat> memory_format_from_string(std::string_view name);

}  // namespace dtsim
