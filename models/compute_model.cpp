#include "models/compute_model.hpp"

#include <algorithm>

namespace dtsim {
namespace {

double efficiency_of(const Device& d, Precision p) { return p == Precision::fp32 ? d.efficiency : d.tensor_efficiency; }

// Seconds of `factor` kernels' worth of `flops` FLOPs at the achievable rate, which falls for small kernels where
// half_efficiency_flops is set.
double math_seconds(double factor, double flops, const Device& d, Precision p) {
  if (flops <= 0) return 0;
  // H is stated at the device's largest peak; a precision of a lower peak reaches half its rate at as many seconds'
  // work, so at H x its peak / the largest
  const double largest = d.largest_peak_flops();
  const double knee = largest > 0 ? d.half_efficiency_flops * d.peak_flops(p) / largest : 0;
  return factor * (flops + knee) / (d.peak_flops(p) * efficiency_of(d, p));
}

double memory_rate(const Device& d) { return d.memory_Bps * d.memory_efficiency; }

// Multiplies a direct 3x3 convolution makes per multiply of Winograd's F(2x2, 3x3): 36 for a 2x2 output tile against
// 16 (Lavin and Gray 2016, arXiv:1509.09308), the algorithm cuDNN offers for such convolutions.
constexpr double winograd_reduction = 36.0 / 16.0;

// A layer's forward FLOPs per sample as its math kernels compute them: fp32 convolutions on a GPU (no tensor cores)
// run their 3x3 stride-1 part by Winograd (cuDNN, and MIOpen on AMD parts, offer it); tensor-core math (tf32, fp16,
// bf16, fp8) runs every convolution as an implicit GEMM; CPU libraries (oneDNN) run direct convolutions by default.
double math_flops(const Layer& layer, const Device& d, Precision p) {
  if (p != Precision::fp32 || layer.winograd_flops <= 0 || d.kind != DeviceKind::gpu) return layer.forward_flops;
  return layer.forward_flops - layer.winograd_flops * (1 - 1 / winograd_reduction);
}

// The fraction of an ungrouped convolution's rate a grouped one reaches: c / (c + c_half) for c input channels a group
// (Device::grouped_half_channels, fitted to published measurements of ResNeXt and EfficientNet: docs/compute.md).
double grouped_rate(const Layer& layer, const Device& d) {
  if (layer.channels_per_group <= 0 || d.grouped_half_channels <= 0) return 1;
  return layer.channels_per_group / (layer.channels_per_group + d.grouped_half_channels);
}

// The rate of a matrix kernel's math in tensor precision `p` relative to a 16-bit GEMM's (tensor_efficiency) on a
// GPU: Device::conv_tensor_rate and conv_tf32_rate for a convolution, gemm_tf32_rate for another matrix kernel in
// tf32 (fitted to published measurements: docs/compute.md); 1 for 16- and 8-bit GEMMs, fp32, memory-bound kinds and
// CPUs.
double kernel_rate(const Layer& layer, const Device& d, Precision p) {
  if (d.kind != DeviceKind::gpu || p == Precision::fp32 || memory_bound(layer.kind)) return 1;
  if (layer.kind == LayerKind::conv) return p == Precision::tf32 ? d.conv_tf32_rate : d.conv_tensor_rate;
  return p == Precision::tf32 ? d.gemm_tf32_rate : 1;
}

// The precision of attention's score products (Q K^T and the weighted sum of V) under `p`: fp8 training keeps them in
// 16 bits (bf16 where the part has it), every other precision computes them as the rest.
Precision score_precision(const Device& d, Precision p) {
  if (p != Precision::fp8) return p;
  return d.has(Precision::bf16) ? Precision::bf16 : Precision::fp16;
}

// Activation bytes per sample as stored in `p` (Layer counts fp32 bytes).
double stored(double fp32_bytes, Precision p) { return fp32_bytes * value_bytes(p) / 4.0; }

struct Pass {
  double flop_factor = 1;    // x forward FLOPs
  double weight_reads = 1;   // x weight bytes through memory
  double activation_io = 2;  // x kept activation bytes read or written by the matrix kernels
  double traffic = 0;        // x kept activation bytes moved by memory-bound kernels
  double score_traffic = 0;  // x score bytes moved (selective recomputation)
  double kernels = 1;
  double transpose_bytes = 0;  // fp32 bytes per sample an NCHW layout's transposes move (layout_transposes)
};

// A pass with the layout's transposes added.
Pass with_transposes(Pass pass, double bytes, double kernels) {
  pass.transpose_bytes = bytes;
  pass.kernels += kernels;
  return pass;
}

double pass_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& s,
                    const Pass& pass) {
  require_precision(device, s.precision);
  const RuntimeCosts rt = runtime_costs(s.runtime);
  // recomputation changes what is kept, not what the kernels move; a fused attention kernel never writes the scores;
  // a pool moves its input too (checkpoint_bytes: its input map; 0 for a custom layer, then its output twice)
  const double moved =
      layer.kind == LayerKind::pool
          ? layer.activation_bytes + (layer.checkpoint_bytes > 0 ? layer.checkpoint_bytes : layer.activation_bytes)
          : layer.activation_bytes - (s.flash_attention ? layer.score_bytes : 0.0);
  const double activation = stored(std::max(moved, 0.0), s.precision) * batch;
  const double weights = layer.params * value_bytes(s.precision) * pass.weight_reads;
  const auto math_in = [&](double flops, Precision p) {
    return math_seconds(pass.flop_factor, batch * flops, device, p) / kernel_rate(layer, device, p);
  };
  // fp8 training (Transformer Engine, torchao's float8) runs the projections in fp8 and attention's score products in
  // 16 bits; a fused attention kernel skips the score tiles a causal mask hides
  const double skipped = s.flash_attention ? layer.masked_score_flops : 0.0;
  const double flops = math_flops(layer, device, s.precision) - skipped;
  const double score_flops = layer.score_flops - skipped;
  const Precision scores = score_precision(device, s.precision);
  const double math = scores == s.precision || score_flops <= 0
                          ? math_in(flops, s.precision)
                          : math_in(std::max(flops - score_flops, 0.0), s.precision) + math_in(score_flops, scores);
  const double traffic = pass.traffic * rt.traffic_scale * activation +
                         pass.score_traffic * rt.traffic_scale * stored(layer.score_bytes, s.precision) * batch +
                         rt.traffic_scale * stored(pass.transpose_bytes, s.precision) * batch;
  double device_s = 0;
  if (memory_bound(layer.kind)) {
    device_s = std::max(math, (weights + traffic) / memory_rate(device));
  } else {
    const double matrix = std::max(math, (weights + pass.activation_io * activation) / memory_rate(device));
    device_s = matrix / grouped_rate(layer, device) + traffic / memory_rate(device);
  }
  const double kernels = pass.kernels * rt.kernel_scale;
  device_s += kernels * device.kernel_launch_s;
  return std::max(device_s, kernels * rt.host_s_per_kernel);
}

}  // namespace

RuntimeCosts runtime_costs(Runtime runtime) {
  switch (runtime) {
    case Runtime::eager: return {8e-6, 1e-3, 1.0, 1.0};
    case Runtime::cuda_graphs: return {0, 50e-6, 1.0, 1.0};
    case Runtime::xla: return {0, 0.5e-3, 0.5, 0.5};
  }
  return {};
}

bool memory_bound(LayerKind kind) {
  switch (kind) {
    case LayerKind::norm:
    case LayerKind::activation:
    case LayerKind::pool:
    case LayerKind::embedding:
    case LayerKind::elementwise:
    case LayerKind::softmax: return true;
    default: return false;
  }
}

KernelTraffic kernel_traffic(LayerKind kind) {
  switch (kind) {
    // conv + batch norm + ReLU keeps the convolution's and the norm's outputs (2 maps): the norm reads one and writes
    // one, ReLU reads and writes one in place (4 maps = 2x kept); backward: ReLU reads the gradient and its output and
    // writes a gradient (3), the norm reads input and gradient twice (statistics, then the gradient) and writes one (5)
    case LayerKind::conv: return {2, 4};
    // a transformer block's norms, dropouts, GELU or SwiGLU, residual adds and biases move about 1.5x the bytes it
    // keeps (Korthikanti et al. 2022's 34 s h: e.g. 2 norms read and write 2 s h each, 3 dropouts read, write and mask)
    case LayerKind::linear:
    case LayerKind::attention:
    case LayerKind::lm_head:
    case LayerKind::moe_router: return {1.5, 3};
    // a memory-bound layer reads its input and writes its output; backward reads the gradient and the input, writes one
    case LayerKind::norm:
    case LayerKind::activation:
    case LayerKind::elementwise:
    case LayerKind::softmax: return {2, 3};
    // a pool reads its input and writes its output; backward reads the output gradient (and, for max, the input) and
    // writes the input gradient: factors of input + output bytes (pass_seconds), not of the kept output alone
    case LayerKind::pool: return {1, 1.5};
    case LayerKind::embedding: return {1, 2};  // a gather writes its rows; backward scatters them
    case LayerKind::other: return {0, 0};      // a custom layer: its numbers as given
  }
  return {};
}

LayoutTransposes layout_transposes(const Layer& layer, const Device& device, const ComputeSettings& settings) {
  if (layer.kind != LayerKind::conv || settings.memory_format != MemoryFormat::nchw ||
      value_bytes(settings.precision) >= 4 || device.kind != DeviceKind::gpu)
    return {};
  // Forward transposes the input to NHWC and the output back (each read and written); backward the output gradient,
  // the input again for the weight gradient, and the input gradient back. cuDNN documents the NCHW-to-NHWC
  // transformations it makes to run tensor-core convolutions (docs/compute.md, "Memory format"). A layer without its
  // own maps (a custom one) counts its kept bytes as its output.
  const double out = layer.output_bytes > 0 ? layer.output_bytes : layer.activation_bytes;
  const double in = layer.checkpoint_bytes > 0 ? layer.checkpoint_bytes : out;
  return {2 * (in + out), 2 * (out + 2 * in), 2, 3};
}

double forward_kernels(const Layer& layer) {
  if (layer.kernels > 0) return layer.kernels;
  switch (layer.kind) {
    case LayerKind::conv:
    case LayerKind::linear: return 2;  // the matrix kernel and its bias or activation
    case LayerKind::attention: return 12;
    case LayerKind::lm_head: return 3;
    case LayerKind::moe_router: return 4;
    case LayerKind::embedding: return 3;
    default: return 1;
  }
}

double kept_activation_bytes(const Layer& layer, const ComputeSettings& s) {
  double kept = layer.activation_bytes;
  if (s.flash_attention || s.recompute == Recompute::selective || s.recompute == Recompute::selective_op)
    kept -= layer.score_bytes;
  // per-op: the outputs of every second product and of the memory-bound kernels are not kept; an estimate, half of
  // what the block keeps without its scores, never less than its input
  if (s.recompute == Recompute::selective_op && layer.op_recompute_flops > 0)
    kept = std::max(0.5 * kept, layer.checkpoint_bytes);
  if (s.recompute == Recompute::full && layer.checkpoint_bytes > 0) kept = std::min(kept, layer.checkpoint_bytes);
  return std::max(kept, 0.0);
}

double kept_activation_bytes(const Model& model, const ComputeSettings& settings) {
  double kept = 0;
  for (const Layer& layer : model.layers)
    kept += kept_activation_bytes(layer, settings);
  return kept;
}

namespace {

// cuDNN's autotuner (cudnn.benchmark in PyTorch, on in NVIDIA's and Lambda's training scripts; TensorFlow's default)
// times every algorithm it has for a convolution and runs the fastest, fp32 CUDA-core kernels among them when tf32
// math is allowed: so a tf32 convolution is never slower than the same one in fp32. It matters where tf32 tensor
// math is no faster than fp32 (GeForce and workstation Ampere and Ada parts: RTX 3090 35.6 TFLOP/s either way).
bool tf32_conv_may_run_fp32(const Layer& layer, const Device& device, const ComputeSettings& settings) {
  return layer.kind == LayerKind::conv && settings.precision == Precision::tf32 && device.kind == DeviceKind::gpu &&
         device.has(Precision::fp32);
}

ComputeSettings in_fp32(ComputeSettings settings) {
  settings.precision = Precision::fp32;
  return settings;
}

double forward_seconds_as_given(const Layer& layer, double batch, const Device& device,
                                const ComputeSettings& settings) {
  const KernelTraffic t = kernel_traffic(layer.kind);
  const LayoutTransposes transposes = layout_transposes(layer, device, settings);
  Pass pass;
  pass.traffic = t.forward;
  pass.kernels = forward_kernels(layer);
  return pass_seconds(layer, batch, device, settings,
                      with_transposes(pass, transposes.forward_bytes, transposes.forward_kernels));
}

double backward_seconds_as_given(const Layer& layer, double batch, const Device& device,
                                 const ComputeSettings& settings) {
  const KernelTraffic t = kernel_traffic(layer.kind);
  Pass pass;
  pass.flop_factor = layer.backward_flop_factor;
  pass.weight_reads = 2;  // read the weights, write their gradient
  pass.activation_io = 4;
  pass.traffic = t.backward;
  pass.kernels = 2 * forward_kernels(layer);
  double extra_flops = 0;
  if (settings.flash_attention && layer.score_flops > 0)  // Q K^T again, in the tiles the mask leaves
    extra_flops = (layer.score_flops - layer.masked_score_flops) / 2;
  // the scores' memory-bound kernels again, where an unfused attention wrote them (per-op: its products are saved,
  // the softmax and dropout between them are not)
  if ((settings.recompute == Recompute::selective || settings.recompute == Recompute::selective_op) &&
      !settings.flash_attention)
    pass.score_traffic = t.forward;
  const LayoutTransposes transposes = layout_transposes(layer, device, settings);
  const Precision scores = score_precision(device, settings.precision);
  double seconds = pass_seconds(layer, batch, device, settings,
                                with_transposes(pass, transposes.backward_bytes, transposes.backward_kernels)) +
                   math_seconds(1, batch * extra_flops, device, scores) / kernel_rate(layer, device, scores);
  if (settings.recompute == Recompute::full) seconds += forward_seconds(layer, batch, device, settings);
  if (settings.recompute == Recompute::selective_op && layer.op_recompute_flops > 0 && layer.forward_flops > 0) {
    // the products it did not keep and the memory-bound kernels (norms, activations, rotations) again: their FLOPs,
    // the forward's memory traffic and half its kernels; weights read once more
    Pass again;
    again.flop_factor = layer.op_recompute_flops / layer.forward_flops;
    again.activation_io = 2 * again.flop_factor;
    again.traffic = t.forward;
    again.kernels = forward_kernels(layer) / 2;
    ComputeSettings scores_apart = settings;  // (an unfused attention's scores are counted above, score_traffic)
    scores_apart.flash_attention = true;
    Layer products = layer;  // (op_recompute_flops are products of the projections: no score tiles to skip)
    products.masked_score_flops = 0;
    seconds += pass_seconds(products, batch, device, scores_apart, again);
  }
  return seconds;
}

}  // namespace

double forward_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& settings) {
  if (tf32_conv_may_run_fp32(layer, device, settings)) {
    return std::min(forward_seconds_as_given(layer, batch, device, in_fp32(settings)),
                    forward_seconds_as_given(layer, batch, device, settings));
  }
  return forward_seconds_as_given(layer, batch, device, settings);
}

double backward_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& settings) {
  if (tf32_conv_may_run_fp32(layer, device, settings)) {
    return std::min(backward_seconds_as_given(layer, batch, device, in_fp32(settings)),
                    backward_seconds_as_given(layer, batch, device, settings));
  }
  return backward_seconds_as_given(layer, batch, device, settings);
}

double projection_seconds(const Layer& layer, double batch, const Device& device, const ComputeSettings& settings,
                          bool forward) {
  if (memory_bound(layer.kind)) return 0;
  require_precision(device, settings.precision);
  const double flops = std::max(math_flops(layer, device, settings.precision) - layer.score_flops, 0.0);
  return math_seconds(forward ? 1.0 : layer.backward_flop_factor, batch * flops, device, settings.precision) /
         kernel_rate(layer, device, settings.precision);
}

double optimizer_kernels_per_tensor(Optimizer optimizer) {
  return optimizer == Optimizer::sgd ? 1.0 : optimizer == Optimizer::momentum ? 3.0 : 7.0;
}

double optimizer_seconds(double params, const Device& device, const ComputeSettings& settings, double tensors) {
  // fp32 bytes read and written per parameter: SGD w, g -> w (12); momentum w, g, m -> w, m (20); Adam w, g, m, v ->
  // w, m, v (28)
  const Optimizer o = settings.optimizer;
  const double per_param = o == Optimizer::sgd ? 12.0 : o == Optimizer::momentum ? 20.0 : 28.0;
  const RuntimeCosts rt = runtime_costs(settings.runtime);
  const double streamed = params * per_param / memory_rate(device);
  if (settings.optimizer_loop == OptimizerLoop::multi_tensor || tensors <= 0) {
    return streamed + device.kernel_launch_s + rt.step_s;
  }
  const double kernels = tensors * optimizer_kernels_per_tensor(o) * rt.kernel_scale;
  return std::max(streamed + kernels * device.kernel_launch_s, kernels * rt.host_s_per_kernel) + rt.step_s;
}

double value_bytes(Precision precision) {
  return precision == Precision::fp32 || precision == Precision::tf32 ? 4.0 : 2.0;
}

double optimizer_state_bytes_per_param(Optimizer optimizer, Precision precision) {
  const double state = optimizer == Optimizer::sgd ? 0.0 : optimizer == Optimizer::momentum ? 4.0 : 8.0;
  return state + (value_bytes(precision) < 4.0 ? 4.0 : 0.0);
}

const char* to_string(Optimizer optimizer) {
  return optimizer == Optimizer::sgd ? "sgd" : optimizer == Optimizer::momentum ? "momentum" : "adam";
}
const char* to_string(OptimizerLoop loop) {
  return loop == OptimizerLoop::multi_tensor ? "multi_tensor" : "per_tensor";
}
std::optional<OptimizerLoop> optimizer_loop_from_string(std::string_view name) {
  for (OptimizerLoop l : {OptimizerLoop::multi_tensor, OptimizerLoop::per_tensor}) {
    if (name == to_string(l)) return l;
  }
  return std::nullopt;
}
const char* to_string(Runtime runtime) {
  return runtime == Runtime::eager ? "eager" : runtime == Runtime::cuda_graphs ? "cuda_graphs" : "xla";
}
const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::selective_op: return "selective_op";
    case Recompute::full: return "full";
  }
  return "none";
}
const char* to_string(MemoryFormat format) { return format == MemoryFormat::nhwc ? "nhwc" : "nchw"; }
std::optional<MemoryFormat> memory_format_from_string(std::string_view name) {
  for (MemoryFormat f : {MemoryFormat::nhwc, MemoryFormat::nchw}) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}
std::optional<Runtime> runtime_from_string(std::string_view name) {
  for (Runtime r : {Runtime::eager, Runtime::cuda_graphs, Runtime::xla}) {
    if (name == to_string(r)) return r;
  }
  return std::nullopt;
}
std::optional<Recompute> recompute_from_string(std::string_view name) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::selective_op, Recompute::full}) {
    if (name == to_string(r)) return r;
  }
  return std::nullopt;
}

}  // namespace dtsim
