// The model zoo against published parameter and multiply-add counts, the per-layer compute model, and the shipped
// device files.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "models/devices.hpp"
#include "models/model_zoo.hpp"
#include "scenarios/device_file.hpp"

using namespace dtsim;

TEST_CASE("model zoo totals match the published parameter counts and multiply-adds") {
  struct Published {
    const char* name;
    double params;
    double params_tolerance;  // relative
    double gmacs;             // forward multiply-adds per sample, 0 where no figure is published
  };
  // torchvision's model cards (AlexNet 61.1M / 0.71 GMACs, VGG-16 138.4M / 15.47, ResNet-50 25.6M / 4.09,
  // Inception-v3 27.2M with its auxiliary classifier (23.8M without) / 5.71); BERT-large "340M" (Devlin et al.),
  // GPT-2 XL 1558M (Radford et al.); the MLP 784x95 + 95 + 95x10 + 10.
  const Published published[] = {
      {"mlp-784-95-10", 75535, 0, 0},     {"alexnet", 61.1e6, 0.001, 0.71},       {"vgg16", 138.36e6, 0.001, 15.47},
      {"resnet50", 25.56e6, 0.001, 4.09}, {"inception-v3", 23.83e6, 0.001, 5.71}, {"bert-large", 340e6, 0.02, 0},
      {"gpt2-xl", 1558e6, 0.001, 0},
  };
  for (const Published& p : published) {
    CAPTURE(p.name);
    const Model& m = find_model(p.name);
    CHECK(m.params() == Approx(p.params).epsilon(p.params_tolerance));
    if (p.gmacs > 0.01) CHECK(m.forward_flops() / 2 / 1e9 == Approx(p.gmacs).epsilon(0.02));
  }
  CHECK(find_model("mlp-784-95-10").forward_flops() == 2.0 * (784 * 95 + 95 * 10));
  // transformers: about 2 FLOPs per parameter per token outside attention scores (Kaplan et al. 2020)
  const Model& bert = find_model("bert-large");
  CHECK(bert.forward_flops() / (2 * bert.params() * 512) == Approx(1.0).epsilon(0.15));
  CHECK_THROWS_WITH(find_model("resnet51"), Catch::Contains("accepted: mlp-784-95-10, alexnet, vgg16, resnet50"));
}

namespace {

Device builtin_device(const std::string& name) { return load_named_device(name, ".", DTSIM_SOURCE_DIR); }

}  // namespace

TEST_CASE("layer time is the slower of math and memory plus the overhead, backward twice forward") {
  const Device v100 = builtin_device("v100");
  Layer conv;
  conv.params = 1e6;
  conv.forward_flops = 1e9;
  conv.activation_bytes = 1e5;
  const double math = 32 * 1e9 / (15.7e12 * v100.efficiency);
  CHECK(forward_seconds(conv, 32, v100, Precision::fp32) == Approx(math + v100.layer_overhead_s));
  CHECK(backward_seconds(conv, 32, v100, Precision::fp32) == Approx(2 * math + v100.layer_overhead_s));
  Layer pool;  // no math to speak of: memory bound
  pool.forward_flops = 1e3;
  pool.activation_bytes = 1e6;
  CHECK(forward_seconds(pool, 10, v100, Precision::fp32) == Approx(10 * 2 * 1e6 / 900e9 + v100.layer_overhead_s));
  CHECK(forward_seconds(conv, 32, v100, Precision::fp16) ==
        Approx(32 * 1e9 / (125e12 * v100.efficiency) + v100.layer_overhead_s));
  CHECK(optimizer_seconds(1e6, v100, Optimizer::adam) > optimizer_seconds(1e6, v100, Optimizer::sgd));
  // a precision the device lacks never reaches the formula
  CHECK_THROWS_WITH(forward_seconds(conv, 32, v100, Precision::fp8),
                    "v100-sxm2-32gb has no fp8 math (it has fp32, fp16)");

  // half_efficiency_flops: a kernel of F FLOPs runs at F / (F + H) of the achievable rate (backward: 2 such kernels);
  // memory_efficiency scales the bandwidth of memory-bound passes
  Device sized = v100;
  sized.half_efficiency_flops = 32e9;  // = this kernel's FLOPs: half the rate
  CHECK(forward_seconds(conv, 32, sized, Precision::fp32) == Approx(2 * math + v100.layer_overhead_s));
  CHECK(backward_seconds(conv, 32, sized, Precision::fp32) == Approx(4 * math + v100.layer_overhead_s));
  sized.half_efficiency_flops = 0;
  sized.memory_efficiency = 0.5;
  CHECK(forward_seconds(pool, 10, sized, Precision::fp32) == Approx(10 * 2 * 1e6 / 450e9 + v100.layer_overhead_s));
  CHECK(optimizer_seconds(1e6, sized, Optimizer::sgd) ==
        Approx(2 * (optimizer_seconds(1e6, v100, Optimizer::sgd) - v100.layer_overhead_s) + v100.layer_overhead_s));
}

TEST_CASE("precisions: mixed is fp16 where the device has it, else bf16, and a missing one names what the device has") {
  const Device v100 = builtin_device("v100");
  const Device a100 = builtin_device("a100");
  const Device xeon = builtin_device("xeon-8380");
  CHECK(precision_for("mixed", v100) == Precision::fp16);
  CHECK(precision_for("mixed", a100) == Precision::fp16);
  CHECK(precision_for("bf16", a100) == Precision::bf16);
  CHECK(precision_for("tf32", a100) == Precision::tf32);
  Device bf16_only = xeon;
  bf16_only.set_peak_flops(Precision::bf16, 10e12);
  CHECK(precision_for("mixed", bf16_only) == Precision::bf16);
  CHECK_THROWS_WITH(precision_for("fp8", v100), "v100-sxm2-32gb has no fp8 math (it has fp32, fp16)");
  CHECK_THROWS_WITH(precision_for("tf32", v100), "v100-sxm2-32gb has no tf32 math (it has fp32, fp16)");
  CHECK_THROWS_WITH(precision_for("mixed", xeon),
                    "xeon-platinum-8380 has neither fp16 nor bf16 math for mixed (it has fp32)");
  CHECK_THROWS_WITH(precision_for("fp64", a100), "expected fp32, tf32, fp16, bf16, fp8 or mixed, got 'fp64'");
  // storage: 4 bytes in fp32 and tf32 (no master copy), 2 otherwise with fp32 master weights
  CHECK(value_bytes(Precision::tf32) == 4);
  CHECK(value_bytes(Precision::fp8) == 2);
  CHECK(optimizer_state_bytes_per_param(Optimizer::adam, Precision::tf32) == 8);
  CHECK(optimizer_state_bytes_per_param(Optimizer::adam, Precision::bf16) == 12);
}

TEST_CASE("every shipped device file loads, is named as its file, cites a source, and no tensor peak is below fp32") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DTSIM_SOURCE_DIR) + "/scenarios/devices")) {
    CAPTURE(entry.path().string());
    REQUIRE(entry.path().extension() == ".json");
    const Device d = load_device_file(entry.path().string());
    ++files;
    CHECK(d.name == entry.path().stem().string());
    CHECK_THAT(d.source, Catch::Contains("(https://"));
    CHECK(d.description != "(none)");
    CHECK(d.has(Precision::fp32));
    for (Precision p : {Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8}) {
      CAPTURE(to_string(p));
      if (d.has(p)) CHECK(d.peak_flops(Precision::fp32) <= d.peak_flops(p));
    }
    CHECK(d.memory_bytes >= 16e9);
    CHECK(d.memory_Bps >= 200e9);
    CHECK(d.efficiency == 0.5);
    CHECK(d.layer_overhead_s == (d.kind == DeviceKind::gpu ? 20e-6 : 5e-6));
    CHECK(!d.fitted());
    // a built-in name loads the same file
    CHECK(builtin_device(d.name).peak_flops(Precision::fp32) == d.peak_flops(Precision::fp32));
  }
  CHECK(files >= 16);
  CHECK_THROWS_WITH(builtin_device("tpu"), Catch::Contains("unknown device 'tpu' (built-in: a10, a100-pcie-80gb"));
  CHECK_THROWS_WITH(builtin_device("tpu"), Catch::Contains("old names: v100 = v100-sxm2-32gb, a100 = a100-sxm4-80gb"));
}

TEST_CASE("docs/devices.md carries the device file reference the loader uses") {
  std::ifstream file(std::string(DTSIM_SOURCE_DIR) + "/docs/devices.md");
  const std::string committed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_THAT(committed, Catch::Contains(device_fields_markdown()));
}

TEST_CASE("the old built-in names are aliases of device files with the figures dtsim had") {
  struct Before {
    const char* alias;
    const char* file;
    double fp32;
    double fp16;  // the old "mixed" peak
    double memory_Bps;
    double memory_bytes;
    double launch_s;
  };
  // dtsim's catalogue before device files, except where the research showed a figure wrong: the RTX 3090's fp16 with
  // fp32 accumulate is 71 TFLOP/s dense (GA102 whitepaper; the catalogue had 35.6), the Xeon 8380's fp32 peak is 64
  // FLOP/cycle (2 AVX-512 FMA units x 16 lanes x 2: 5.888 TFLOP/s; the catalogue had 32, the fp64 rate), and H100's
  // dense fp16 is the datasheet's 1,979 / 2 = 989.5 (the catalogue rounded to 989)
  const Before before[] = {
      {"v100", "v100-sxm2-32gb", 15.7e12, 125e12, 900e9, 32e9, 20e-6},
      {"a100", "a100-sxm4-80gb", 19.5e12, 312e12, 2039e9, 80e9, 20e-6},
      {"h100", "h100-sxm5-80gb", 67e12, 989.5e12, 3350e9, 80e9, 20e-6},
      {"rtx3090", "rtx-3090", 35.6e12, 71e12, 936e9, 24e9, 20e-6},
      {"xeon-8380", "xeon-platinum-8380", 5.888e12, 0, 204.8e9, 256e9, 5e-6},
  };
  for (const Before& b : before) {
    CAPTURE(b.alias);
    const Device d = builtin_device(b.alias);
    CHECK(d.name == b.file);
    CHECK(d.origin == std::string("scenarios/devices/") + b.file + ".json");
    CHECK(d.peak_flops(Precision::fp32) == b.fp32);
    CHECK(d.peak_flops(Precision::fp16) == b.fp16);
    CHECK(d.memory_Bps == b.memory_Bps);
    CHECK(d.memory_bytes == b.memory_bytes);
    CHECK(d.efficiency == 0.5);
    CHECK(d.layer_overhead_s == b.launch_s);
    CHECK(d.half_efficiency_flops == 0);
    CHECK(d.memory_efficiency == 1);
  }
}
