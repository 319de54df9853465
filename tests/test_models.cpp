// The model zoo against published parameter and multiply-add counts, and the per-layer compute model.
#include <catch2/catch.hpp>

#include "models/devices.hpp"
#include "models/model_zoo.hpp"

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

TEST_CASE("layer time is the slower of math and memory plus the overhead, backward twice forward") {
  const Device& v100 = find_device("v100");
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
  CHECK(forward_seconds(conv, 32, v100, Precision::mixed) < forward_seconds(conv, 32, v100, Precision::fp32));
  CHECK(optimizer_seconds(1e6, v100, Optimizer::adam) > optimizer_seconds(1e6, v100, Optimizer::sgd));
  CHECK_THROWS_WITH(find_device("tpu"), Catch::Contains("accepted: v100, a100, h100, rtx3090, xeon-8380"));
}
