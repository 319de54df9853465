// The compute model (models/compute_model.hpp): its formulas on hand-computed layers, and the properties every
// prediction relies on: more batch never lowers throughput, more FLOPs never shortens a kernel, small kernels are
// dominated by launch and dispatch, fused attention and recomputation move what they should.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "models/compute_model.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/model_file.hpp"

using namespace dtsim;

namespace {

// A device with round figures, so that every expected time below can be worked by hand.
Device round_device() {
  Device d;
  d.name = "round";
  d.set_peak_flops(Precision::fp32, 10e12);
  d.set_peak_flops(Precision::fp16, 100e12);
  d.memory_Bps = 1e12;
  d.memory_bytes = 16e9;
  d.efficiency = 0.5;
  d.tensor_efficiency = 0.8;
  d.memory_efficiency = 0.5;
  d.kernel_launch_s = 2e-6;
  return d;
}

ComputeSettings settings(Precision p, Runtime runtime = Runtime::cuda_graphs) {
  ComputeSettings s;
  s.precision = p;
  s.runtime = runtime;
  return s;
}

// A convolution with batch norm of round figures: 1e6 parameters, 1 GFLOP and 1e5 fp32 bytes kept per sample.
Layer round_conv() {
  Layer conv;
  conv.kind = LayerKind::conv;
  conv.params = 1e6;
  conv.forward_flops = 1e9;
  conv.activation_bytes = 1e5;  // fp32 bytes kept per sample
  conv.kernels = 3;
  return conv;
}

}  // namespace

TEST_CASE("a matrix layer: math or its memory floor, then its memory-bound kernels, then launches") {
  const Device d = round_device();
  const Layer conv = round_conv();
  const double batch = 32;
  // fp32: math 32e9 / (10e12 x 0.5) = 6.4 ms; floor (4e6 + 2 x 3.2e6) / 0.5e12 = 20.8 us; traffic 2 x 3.2e6 / 0.5e12
  const double math = 32e9 / 5e12;
  const double traffic = 2 * 32 * 1e5 / 0.5e12;
  CHECK(forward_seconds(conv, batch, d, settings(Precision::fp32)) == Approx(math + traffic + 3 * 2e-6));
  // backward: 2x the FLOPs, traffic 4x kept, twice the kernels
  CHECK(backward_seconds(conv, batch, d, settings(Precision::fp32)) ==
        Approx(2 * math + 4 * 32 * 1e5 / 0.5e12 + 6 * 2e-6));
  // fp16: tensor_efficiency, and the activations stored in 2 bytes halve the traffic
  CHECK(forward_seconds(conv, batch, d, settings(Precision::fp16)) ==
        Approx(32e9 / (100e12 * 0.8) + traffic / 2 + 3 * 2e-6));
  // half_efficiency_flops: a kernel of F FLOPs runs at F / (F + H) of the achievable rate, H stated at the largest
  // peak (fp16 here) and scaled by a lower peak's fraction of it (fp32: a tenth, the same seconds of work)
  Device sized = d;
  sized.half_efficiency_flops = 32e9;
  CHECK(forward_seconds(conv, batch, sized, settings(Precision::fp16)) ==
        Approx(2 * 32e9 / (100e12 * 0.8) + traffic / 2 + 3 * 2e-6));
  CHECK(forward_seconds(conv, batch, sized, settings(Precision::fp32)) == Approx(1.1 * math + traffic + 3 * 2e-6));
  // a precision the device lacks never reaches the formula
  CHECK_THROWS_WITH(forward_seconds(conv, batch, d, settings(Precision::bf16)),
                    "round has no bf16 math (it has fp32, fp16)");
}

TEST_CASE("a memory-bound layer moves its bytes, and the runtime's host dispatch bounds small layers from below") {
  const Device d = round_device();
  Layer norm;
  norm.kind = LayerKind::norm;
  norm.activation_bytes = 1e6;
  // forward reads and writes (2x kept), backward 3x; one kernel, two in backward
  CHECK(forward_seconds(norm, 10, d, settings(Precision::fp32)) == Approx(2 * 10e6 / 0.5e12 + 2e-6));
  CHECK(backward_seconds(norm, 10, d, settings(Precision::fp32)) == Approx(3 * 10e6 / 0.5e12 + 2 * 2e-6));
  // XLA fuses chains of memory-bound kernels: half the bytes and half the kernels
  CHECK(forward_seconds(norm, 10, d, settings(Precision::fp32, Runtime::xla)) == Approx(10e6 / 0.5e12 + 1e-6));
  // a global pool keeps one value a channel but reads its whole input map (a squeeze-and-excitation's pool): forward
  // reads the input and writes the output, backward 1.5x that
  Layer pool;
  pool.kind = LayerKind::pool;
  pool.activation_bytes = 1e3;
  pool.checkpoint_bytes = 1e6;
  CHECK(forward_seconds(pool, 10, d, settings(Precision::fp32)) == Approx((1e6 + 1e3) * 10 / 0.5e12 + 2e-6));
  CHECK(backward_seconds(pool, 10, d, settings(Precision::fp32)) == Approx(1.5 * (1e6 + 1e3) * 10 / 0.5e12 + 2 * 2e-6));
  // a custom pool without its input's size: its output read and written, as any memory-bound layer
  pool.checkpoint_bytes = 0;
  CHECK(forward_seconds(pool, 10, d, settings(Precision::fp32)) == Approx(2 * 1e3 * 10 / 0.5e12 + 2e-6));
  // a tiny layer in eager PyTorch: the host's dispatch, not the device, sets the pace
  Layer tiny = norm;
  tiny.activation_bytes = 4;
  const RuntimeCosts eager = runtime_costs(Runtime::eager);
  CHECK(eager.host_s_per_kernel > d.kernel_launch_s);
  CHECK(forward_seconds(tiny, 1, d, settings(Precision::fp32, Runtime::eager)) == Approx(eager.host_s_per_kernel));
  CHECK(backward_seconds(tiny, 1, d, settings(Precision::fp32, Runtime::eager)) == Approx(2 * eager.host_s_per_kernel));
  // the optimizer streams its state and pays the runtime's per-step cost
  ComputeSettings adam = settings(Precision::fp32, Runtime::eager);
  adam.optimizer = Optimizer::adam;
  CHECK(optimizer_seconds(1e6, d, adam) == Approx(28e6 / 0.5e12 + 2e-6 + eager.step_s));
  adam.optimizer = Optimizer::sgd;
  CHECK(optimizer_seconds(1e6, d, adam) == Approx(12e6 / 0.5e12 + 2e-6 + eager.step_s));
  // a loop over 200 tensors launches 7 kernels each for Adam: the host's 1,400 launches outlast the streamed bytes
  adam.optimizer = Optimizer::adam;
  CHECK(optimizer_seconds(1e6, d, adam, 200) == Approx(28e6 / 0.5e12 + 2e-6 + eager.step_s));  // (multi_tensor)
  adam.optimizer_loop = OptimizerLoop::per_tensor;
  CHECK(optimizer_seconds(1e6, d, adam, 200) == Approx(1400 * eager.host_s_per_kernel + eager.step_s));
  // many bytes over few tensors: the device's stream and launches set it
  CHECK(optimizer_seconds(1e9, d, adam, 2) == Approx(28e9 / 0.5e12 + 14 * 2e-6 + eager.step_s));
  // more tensors never shorten it; SGD launches fewer kernels than momentum than Adam
  CHECK(optimizer_seconds(1e6, d, adam, 400) > optimizer_seconds(1e6, d, adam, 200));
  CHECK(optimizer_kernels_per_tensor(Optimizer::sgd) < optimizer_kernels_per_tensor(Optimizer::momentum));
  CHECK(optimizer_kernels_per_tensor(Optimizer::momentum) < optimizer_kernels_per_tensor(Optimizer::adam));
  // CUDA graphs replay the loop from one launch: no host time a kernel
  ComputeSettings graphs = adam;
  graphs.runtime = Runtime::cuda_graphs;
  CHECK(optimizer_seconds(1e6, d, graphs, 200) ==
        Approx(28e6 / 0.5e12 + 1400 * 2e-6 + runtime_costs(Runtime::cuda_graphs).step_s));
  CHECK(optimizer_loop_from_string("per_tensor") == OptimizerLoop::per_tensor);
  CHECK_FALSE(optimizer_loop_from_string("foreach").has_value());
}

TEST_CASE("models count their parameter tensors as frameworks hold them") {
  // torchvision's ResNet-50: 53 convolutions' weights, their batch norms' scales and shifts, the classifier's weight
  // and bias (161); Hugging Face's BERT-large: 5 embedding tensors, 16 a block, the pooler's 2 (391)
  CHECK(load_named_model("resnet50", ".", DTSIM_SOURCE_DIR).param_tensors() == 161);
  CHECK(load_named_model("bert-large", ".", DTSIM_SOURCE_DIR).param_tensors() == 391);
  // Llama-2-7B: the embedding, 9 a block (Q K V O, gate up down, 2 RMSNorms), the final norm and the head (291)
  CHECK(load_named_model("llama-2-7b", ".", DTSIM_SOURCE_DIR).param_tensors() == 291);
}

TEST_CASE("monotone: more batch never lowers samples per second, more FLOPs never shortens a layer") {
  const Device a100 = load_named_device("a100-sxm4-80gb", ".", DTSIM_SOURCE_DIR);
  for (const char* name : {"resnet50", "bert-large", "gpt2-xl", "mlp-784-95-10", "vit-b-16"}) {
    CAPTURE(name);
    const Model m = load_named_model(name, ".", DTSIM_SOURCE_DIR);
    for (Runtime runtime : {Runtime::eager, Runtime::cuda_graphs, Runtime::xla}) {
      for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16}) {
        const ComputeSettings s = settings(p, runtime);
        double last_rate = 0;
        for (double batch : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0}) {
          double step = optimizer_seconds(m.params(), a100, s);
          for (const Layer& l : m.layers)
            step += forward_seconds(l, batch, a100, s) + backward_seconds(l, batch, a100, s);
          const double rate = batch / step;
          CAPTURE(batch, to_string(p), to_string(runtime));
          CHECK(rate >= last_rate * (1 - 1e-12));
          last_rate = rate;
        }
        for (const Layer& l : m.layers) {
          Layer bigger = l;
          bigger.forward_flops *= 1.5;
          CHECK(forward_seconds(bigger, 32, a100, s) >= forward_seconds(l, 32, a100, s));
          CHECK(backward_seconds(bigger, 32, a100, s) >= backward_seconds(l, 32, a100, s));
        }
      }
    }
  }
}

TEST_CASE("fused attention and recomputation change what is kept and what is run again") {
  const Device h100 = load_named_device("h100-sxm5-80gb", ".", DTSIM_SOURCE_DIR);
  const Model bert = load_named_model("bert-large", ".", DTSIM_SOURCE_DIR);
  const Layer* attention = nullptr;
  const Layer* mlp = nullptr;
  for (const Layer& l : bert.layers) {
    if (!attention && l.kind == LayerKind::attention) attention = &l;
    if (!mlp && l.kind == LayerKind::linear && l.name.ends_with(".mlp")) mlp = &l;
  }
  REQUIRE(attention);
  REQUIRE(mlp);
  // BERT-large at 512 tokens: 16 heads x 512^2 scores, 5 bytes each at 16 bits (softmax output, dropout mask and
  // output), counted in fp32 units as twice that
  CHECK(attention->score_bytes == Approx(2 * 5.0 * 16 * 512 * 512));
  CHECK(attention->score_flops == Approx(512 * 4.0 * 512 * 1024));
  ComputeSettings plain = settings(Precision::fp16);
  ComputeSettings flash = plain;
  flash.flash_attention = true;
  ComputeSettings selective = plain;
  selective.recompute = Recompute::selective;
  ComputeSettings full = plain;
  full.recompute = Recompute::full;
  CHECK(kept_activation_bytes(*attention, flash) == Approx(attention->activation_bytes - attention->score_bytes));
  CHECK(kept_activation_bytes(*attention, selective) == kept_activation_bytes(*attention, flash));
  CHECK(kept_activation_bytes(*attention, full) == Approx(512 * 1024 * 4.0));  // the layer's input
  CHECK(kept_activation_bytes(*mlp, flash) == mlp->activation_bytes);          // no scores in an MLP
  // flash never writes the scores: its forward is faster at 512 tokens; recomputation costs backward time
  CHECK(forward_seconds(*attention, 8, h100, flash) < forward_seconds(*attention, 8, h100, plain));
  CHECK(backward_seconds(*attention, 8, h100, selective) > backward_seconds(*attention, 8, h100, plain));
  CHECK(backward_seconds(*attention, 8, h100, full) ==
        Approx(backward_seconds(*attention, 8, h100, plain) + forward_seconds(*attention, 8, h100, plain)));
  CHECK(backward_seconds(*mlp, 8, h100, selective) == backward_seconds(*mlp, 8, h100, plain));
}

TEST_CASE("per-op selective recomputation runs every second product of a block and its memory-bound kernels again") {
  const Device h100 = load_named_device("h100-sxm5-80gb", ".", DTSIM_SOURCE_DIR);
  const Model llama = load_named_model("llama-3-8b", ".", DTSIM_SOURCE_DIR);
  const Layer* attention = nullptr;
  const Layer* mlp = nullptr;
  for (const Layer& l : llama.layers) {
    if (!attention && l.kind == LayerKind::attention) attention = &l;
    if (!mlp && l.kind == LayerKind::linear && l.name.ends_with(".mlp")) mlp = &l;
  }
  REQUIRE(attention);
  REQUIRE(mlp);
  // Llama 3 8B at 8192 tokens: K (4096 x 1024) and the output projection (4096 x 4096) of Q, K, V, O; the up
  // projection (4096 x 14336) of gate, up and down: 36.5% of the block's product FLOPs (docs/compute.md)
  const double s = 8192, h = 4096, kv = 1024, f = 14336;
  CHECK(attention->op_recompute_flops == Approx(2 * s * h * kv + 2 * s * h * h));
  CHECK(mlp->op_recompute_flops == Approx(2 * s * h * f));
  const double products = (attention->forward_flops - attention->score_flops) + mlp->forward_flops;
  CHECK((attention->op_recompute_flops + mlp->op_recompute_flops) / products == Approx(0.365).margin(0.001));
  for (bool fused : {true, false}) {
    CAPTURE(fused);
    std::map<Recompute, double> backward, kept;
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::selective_op, Recompute::full}) {
      ComputeSettings c = settings(Precision::bf16);
      c.flash_attention = fused;
      c.recompute = r;
      backward[r] = backward_seconds(*attention, 1, h100, c) + backward_seconds(*mlp, 1, h100, c);
      kept[r] = kept_activation_bytes(*attention, c) + kept_activation_bytes(*mlp, c);
    }
    // more recomputation: more backward time and less memory, per-op between selective and full
    CHECK(backward[Recompute::selective] >= backward[Recompute::none]);
    CHECK(backward[Recompute::selective_op] > backward[Recompute::selective]);
    CHECK(backward[Recompute::full] > backward[Recompute::selective_op]);
    CHECK(kept[Recompute::selective_op] < kept[Recompute::selective]);
    CHECK(kept[Recompute::full] <= kept[Recompute::selective_op]);
  }
  // layers without products to recompute (an embedding, a norm) are run as without recomputation
  ComputeSettings op = settings(Precision::bf16);
  op.recompute = Recompute::selective_op;
  const Layer& embedding = llama.layers.front();
  CHECK(embedding.op_recompute_flops == 0);
  CHECK(backward_seconds(embedding, 1, h100, op) == backward_seconds(embedding, 1, h100, settings(Precision::bf16)));
}

TEST_CASE("fp8 runs a layer's projections in fp8 and attention's score products in 16 bits") {
  Device d = round_device();
  d.set_peak_flops(Precision::bf16, 100e12);
  d.set_peak_flops(Precision::fp8, 200e12);
  Layer attention;
  attention.kind = LayerKind::attention;
  attention.forward_flops = 8e9;  // per sample: 6 GFLOP of projections, 2 of scores
  attention.score_flops = 2e9;
  attention.kernels = 1;
  // (no bytes: the math alone, plus one launch) projections at 200 x 0.8, scores at bf16's 100 x 0.8
  CHECK(forward_seconds(attention, 10, d, settings(Precision::fp8)) == Approx(60e9 / 160e12 + 20e9 / 80e12 + 2e-6));
  // a layer without scores (an MLP) runs every product in fp8
  Layer mlp = attention;
  mlp.kind = LayerKind::linear;
  mlp.score_flops = 0;
  CHECK(forward_seconds(mlp, 10, d, settings(Precision::fp8)) == Approx(80e9 / 160e12 + 2e-6));
  // fused attention recomputes Q K^T in backward, in 16 bits too
  ComputeSettings flash = settings(Precision::fp8);
  flash.flash_attention = true;
  CHECK(backward_seconds(attention, 10, d, flash) - backward_seconds(attention, 10, d, settings(Precision::fp8)) ==
        Approx(10e9 / 80e12));
}

TEST_CASE("runtime and recompute names round-trip and unknown ones are refused") {
  for (Runtime r : {Runtime::eager, Runtime::cuda_graphs, Runtime::xla})
    CHECK(runtime_from_string(to_string(r)) == r);
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::selective_op, Recompute::full})
    CHECK(recompute_from_string(to_string(r)) == r);
  CHECK(!runtime_from_string("jit"));
  CHECK(!recompute_from_string("some"));
}

TEST_CASE("NCHW tensors cost 16-bit convolutions their transposes, and nothing elsewhere") {
  const Device d = round_device();
  Layer conv = round_conv();
  conv.output_bytes = 0.5e5;      // the convolution's output, half of what it keeps with its norm's
  conv.checkpoint_bytes = 0.8e5;  // its input
  const double batch = 32;
  ComputeSettings nhwc = settings(Precision::fp16);
  ComputeSettings nchw = nhwc;
  nchw.memory_format = MemoryFormat::nchw;
  // forward: input and output read and written again (2 x 1.3e5 fp32 bytes a sample, stored in 2 bytes), 2 kernels
  CHECK(forward_seconds(conv, batch, d, nchw) - forward_seconds(conv, batch, d, nhwc) ==
        Approx(2 * 1.3e5 / 2 * batch / 0.5e12 + 2 * 2e-6));
  // backward: the output gradient, the input for the weight gradient and the input gradient (2 x 2.1e5), 3 kernels
  CHECK(backward_seconds(conv, batch, d, nchw) - backward_seconds(conv, batch, d, nhwc) ==
        Approx(2 * 2.1e5 / 2 * batch / 0.5e12 + 3 * 2e-6));
  // a CPU does not run cuDNN's tensor-core convolutions
  Device cpu = d;
  cpu.kind = DeviceKind::cpu;
  CHECK(forward_seconds(conv, batch, cpu, nchw) == forward_seconds(conv, batch, cpu, nhwc));
  // fp32 convolutions and non-convolution layers do not transpose
  ComputeSettings fp32_nchw = settings(Precision::fp32);
  fp32_nchw.memory_format = MemoryFormat::nchw;
  CHECK(forward_seconds(conv, batch, d, fp32_nchw) == forward_seconds(conv, batch, d, settings(Precision::fp32)));
  Layer linear = conv;
  linear.kind = LayerKind::linear;
  CHECK(forward_seconds(linear, batch, d, nchw) == forward_seconds(linear, batch, d, nhwc));
  CHECK(memory_format_from_string(to_string(MemoryFormat::nchw)) == MemoryFormat::nchw);
  CHECK(memory_format_from_string(to_string(MemoryFormat::nhwc)) == MemoryFormat::nhwc);
  CHECK(!memory_format_from_string("NCHW"));
}

TEST_CASE("fp32 convolutions run their Winograd part with 36/16 fewer multiplies, tensor-core math does not") {
  Device d = round_device();
  d.set_peak_flops(Precision::tf32, 50e12);
  Layer conv;
  conv.kind = LayerKind::conv;
  conv.forward_flops = 1e9;
  conv.kernels = 1;
  Layer winograd = conv;
  winograd.winograd_flops = 0.5e9;  // half the layer's FLOPs are 3x3 stride-1
  const double batch = 32;
  // fp32: math (1e9 - 0.5e9 x (1 - 16/36)) x 32 / 5e12
  const double fewer = 0.5e9 * (1 - 16.0 / 36.0);
  CHECK(forward_seconds(conv, batch, d, settings(Precision::fp32)) -
            forward_seconds(winograd, batch, d, settings(Precision::fp32)) ==
        Approx(fewer * batch / 5e12));
  CHECK(backward_seconds(conv, batch, d, settings(Precision::fp32)) -
            backward_seconds(winograd, batch, d, settings(Precision::fp32)) ==
        Approx(2 * fewer * batch / 5e12));
  for (Precision p : {Precision::tf32, Precision::fp16})
    CHECK(forward_seconds(winograd, batch, d, settings(p)) == forward_seconds(conv, batch, d, settings(p)));
  Device cpu = d;  // CPU libraries convolve directly by default
  cpu.kind = DeviceKind::cpu;
  CHECK(forward_seconds(winograd, batch, cpu, settings(Precision::fp32)) ==
        forward_seconds(conv, batch, cpu, settings(Precision::fp32)));
  // the layer lists mark 3x3 stride-1 ungrouped convolutions only
  const Model resnet = load_named_model("resnet50", DTSIM_SOURCE_DIR, DTSIM_SOURCE_DIR);
  int marked = 0;
  for (const Layer& l : resnet.layers) {
    if (l.winograd_flops > 0) {
      ++marked;
      CHECK(l.winograd_flops == l.forward_flops);
      CHECK(l.name.ends_with("conv2"));  // the bottlenecks' 3x3 convolutions
    }
  }
  CHECK(marked == 13);  // 16 bottlenecks, 3 of which stride their 3x3 convolution
}

TEST_CASE("grouped convolutions run their matrix part at c / (c + grouped_half_channels) of an ungrouped one's rate") {
  Device d = round_device();
  const Layer conv = round_conv();
  Layer grouped = conv;
  grouped.channels_per_group = 4;  // a ResNeXt 3x3 of the first stage
  Layer depthwise = conv;
  depthwise.channels_per_group = 1;
  const double batch = 32;
  const ComputeSettings fp32 = settings(Precision::fp32);
  // without the device's figure a group runs like the ungrouped layer of its FLOPs and bytes
  CHECK(forward_seconds(grouped, batch, d, fp32) == forward_seconds(conv, batch, d, fp32));
  d.grouped_half_channels = 4;
  const double math = 32e9 / 5e12;  // the matrix part: math-bound (the first test)
  CHECK(forward_seconds(grouped, batch, d, fp32) - forward_seconds(conv, batch, d, fp32) == Approx(math));  // half
  CHECK(backward_seconds(grouped, batch, d, fp32) - backward_seconds(conv, batch, d, fp32) == Approx(2 * math));
  CHECK(forward_seconds(depthwise, batch, d, fp32) - forward_seconds(conv, batch, d, fp32) == Approx(4 * math));  // 1/5
  CHECK(forward_seconds(conv, batch, d, fp32) ==
        Approx(math + 2 * 32 * 1e5 / 0.5e12 + 3 * 2e-6));  // ungrouped: as before
  // the model files mark grouped convolutions with their channels a group: ResNeXt's 3x3s, EfficientNet's depthwise
  const Model resnext = load_named_model("resnext50-32x4d", DTSIM_SOURCE_DIR, DTSIM_SOURCE_DIR);
  int grouped_layers = 0;
  for (const Layer& l : resnext.layers) {
    if (l.channels_per_group > 0) {
      ++grouped_layers;
      CHECK(l.name.ends_with("conv2"));
      CHECK((l.channels_per_group == 4 || l.channels_per_group == 8 || l.channels_per_group == 16 ||
             l.channels_per_group == 32));
    }
  }
  CHECK(grouped_layers == 16);
  const Model efficientnet = load_named_model("efficientnet-b0", DTSIM_SOURCE_DIR, DTSIM_SOURCE_DIR);
  int depthwise_layers = 0;
  for (const Layer& l : efficientnet.layers)
    depthwise_layers += l.channels_per_group == 1 ? 1 : 0;
  CHECK(depthwise_layers == 16);  // one a mobile inverted bottleneck
  const Model resnet = load_named_model("resnet50", DTSIM_SOURCE_DIR, DTSIM_SOURCE_DIR);
  for (const Layer& l : resnet.layers)
    CHECK(l.channels_per_group == 0);
}

TEST_CASE("tensor math runs at the device's kernel rates: convolutions' in 16-bit and tf32, GEMMs' in tf32") {
  Device d = round_device();
  d.set_peak_flops(Precision::tf32, 50e12);
  const Layer conv = round_conv();
  Layer linear = conv;
  linear.kind = LayerKind::linear;
  const double batch = 64;  // math-bound in every precision here
  std::map<Precision, double> conv_s, linear_s;
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::fp16}) {
    conv_s[p] = forward_seconds(conv, batch, d, settings(p));
    linear_s[p] = forward_seconds(linear, batch, d, settings(p));
  }
  d.conv_tensor_rate = 2;
  d.conv_tf32_rate = 0.5;
  const double fp16_math = 64e9 / (100e12 * 0.8), tf32_math = 64e9 / (50e12 * 0.8);
  // fp16: the math half as long; tf32: twice as long; the memory-bound kernels and launches unchanged
  CHECK(conv_s[Precision::fp16] - forward_seconds(conv, batch, d, settings(Precision::fp16)) == Approx(fp16_math / 2));
  CHECK(forward_seconds(conv, batch, d, settings(Precision::tf32)) - conv_s[Precision::tf32] == Approx(tf32_math));
  Device unit_rates = d;
  unit_rates.conv_tensor_rate = unit_rates.conv_tf32_rate = 1;
  CHECK(backward_seconds(conv, batch, d, settings(Precision::tf32)) -
            backward_seconds(conv, batch, unit_rates, settings(Precision::tf32)) ==
        Approx(2 * tf32_math));  // backward: twice the forward's FLOPs, at half the rate
  CHECK(forward_seconds(conv, batch, d, settings(Precision::fp32)) == conv_s[Precision::fp32]);
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::fp16})
    CHECK(forward_seconds(linear, batch, d, settings(p)) == linear_s[p]);
  // gemm_tf32_rate: the other matrix kernels in tf32 only
  const double conv_tf32_s = forward_seconds(conv, batch, d, settings(Precision::tf32));
  d.gemm_tf32_rate = 2;
  CHECK(linear_s[Precision::tf32] - forward_seconds(linear, batch, d, settings(Precision::tf32)) ==
        Approx(tf32_math / 2));
  CHECK(forward_seconds(linear, batch, d, settings(Precision::fp16)) == linear_s[Precision::fp16]);
  CHECK(forward_seconds(conv, batch, d, settings(Precision::tf32)) == conv_tf32_s);
  Layer norm = conv;
  norm.kind = LayerKind::norm;
  Device plain = d;
  plain.gemm_tf32_rate = 1;
  CHECK(forward_seconds(norm, batch, d, settings(Precision::tf32)) ==
        forward_seconds(norm, batch, plain, settings(Precision::tf32)));  // memory-bound kinds keep their rate
  // a CPU's convolutions are not cuDNN's
  Device cpu = d;
  cpu.kind = DeviceKind::cpu;
  Device cpu_plain = cpu;
  cpu_plain.conv_tensor_rate = cpu_plain.conv_tf32_rate = 1;
  CHECK(forward_seconds(conv, batch, cpu, settings(Precision::fp16)) ==
        forward_seconds(conv, batch, cpu_plain, settings(Precision::fp16)));
}

TEST_CASE("a tf32 convolution runs as fast as the same one in fp32 where tf32 math is no faster (cuDNN's autotuner)") {
  // a GeForce-like part: tf32 tensor math at the fp32 rate; the tf32 convolutions' kernel rate halves it again
  Device d = round_device();
  d.set_peak_flops(Precision::tf32, 10e12);
  d.conv_tf32_rate = 0.5;  // tf32 math 10e12 x 0.8 x 0.5 = 4e12 against fp32's 10e12 x 0.5 = 5e12
  Layer conv = round_conv();
  conv.winograd_flops = 0.5e9;  // the fp32 kernels it may run take Winograd's fewer multiplies too
  Layer linear = round_conv();
  linear.kind = LayerKind::linear;
  const double batch = 64;
  const ComputeSettings tf32 = settings(Precision::tf32), fp32 = settings(Precision::fp32);
  CHECK(forward_seconds(conv, batch, d, tf32) == forward_seconds(conv, batch, d, fp32));
  CHECK(backward_seconds(conv, batch, d, tf32) == backward_seconds(conv, batch, d, fp32));
  // tf32 math alone would have taken longer: the difference is the math's (memory-bound kernels alike)
  Device tf32_only = d;
  tf32_only.set_peak_flops(Precision::fp32, 1e9);  // (an fp32 path too slow to be chosen)
  const double tf32_math = 64e9 / 4e12;
  const double fp32_math = 64 * (1e9 - 0.5e9 * (1 - 16.0 / 36.0)) / 5e12;
  CHECK(forward_seconds(conv, batch, tf32_only, tf32) - forward_seconds(conv, batch, d, tf32) ==
        Approx(tf32_math - fp32_math));
  // where tf32 math is faster (an A100: 8 times fp32's peak) the tf32 kernels run
  Device a100_like = d;
  a100_like.set_peak_flops(Precision::tf32, 80e12);
  CHECK(forward_seconds(conv, batch, a100_like, tf32) < forward_seconds(conv, batch, a100_like, fp32));
  Device a100_slow_fp32 = a100_like;
  a100_slow_fp32.set_peak_flops(Precision::fp32, 1e9);
  CHECK(forward_seconds(conv, batch, a100_like, tf32) == forward_seconds(conv, batch, a100_slow_fp32, tf32));
  // other matrix kernels (cuBLAS GEMMs) are not autotuned: a linear layer stays in tf32 math, slower or not
  d.gemm_tf32_rate = 0.5;
  CHECK(forward_seconds(linear, batch, d, tf32) > forward_seconds(linear, batch, d, fp32));
  // the shipped RTX 3090 file: ResNet-50's convolutions in tf32 take what they take in fp32
  const Device rtx3090 = load_named_device("rtx-3090", DTSIM_SOURCE_DIR, DTSIM_SOURCE_DIR);
  const Model resnet = load_named_model("resnet50", DTSIM_SOURCE_DIR, DTSIM_SOURCE_DIR);
  for (const Layer& l : resnet.layers) {
    if (l.kind != LayerKind::conv) continue;
    CHECK(forward_seconds(l, 224, rtx3090, tf32) <= forward_seconds(l, 224, rtx3090, fp32));
  }
}
