// The model zoo against published parameter and multiply-add counts, the per-layer compute model, and the shipped
// device files.
// The model files against the former zoo and published parameter and multiply-add counts, the transformer
// generator, and the per-layer compute model.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include "models/compute_model.hpp"
#include "models/model_zoo.hpp"
#include "scenarios/device_file.hpp"

#include "models/devices.hpp"
#include "models/model_zoo.hpp"
#include "models/transformer.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"

using namespace dtsim;

namespace {

Model builtin(const std::string& name) { return load_named_model(name, ".", DTSIM_SOURCE_DIR); }

const Layer* find_layer(const Model& m, std::string_view name) {
  for (const Layer& l : m.layers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the shipped model files reproduce the former built-in zoo layer by layer") {
  // tests/data/zoo-before.json: every layer of the seven networks models/model_zoo.cpp generated in C++ before they
  // became model files ([name, params, forward FLOPs, activation bytes, backward factor, tensor-parallel values])
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/tests/data/zoo-before.json");
  REQUIRE(in);
  const nlohmann::json before = nlohmann::json::parse(in);
  REQUIRE(before.size() == 7);
  for (const auto& [name, old] : before.items()) {
    CAPTURE(name);
    const Model m = builtin(name);
    CHECK(m.name == name);
    CHECK(m.input_bytes == old["input_bytes"].get<double>());
    CHECK(m.params() == old["params"].get<double>());
    CHECK(m.forward_flops() == old["forward_flops"].get<double>());
    CHECK(m.activation_bytes() == Approx(old["activation_bytes"].get<double>()).epsilon(1e-12));
    REQUIRE(m.layers.size() == old["layers"].size());
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      const Layer& l = m.layers[i];
      const nlohmann::json& o = old["layers"][i];
      CAPTURE(i, l.name, o[0].get<std::string>());
      CHECK(l.params == o[1].get<double>());
      CHECK(l.forward_flops == o[2].get<double>());
      // a transformer block's activations are split between its layers as Korthikanti et al. count them (the zoo
      // split them 0.6 / 0.4); totals are checked above
      if (l.kind != LayerKind::attention && !l.name.ends_with(".mlp")) {
        CHECK(l.activation_bytes == Approx(o[3].get<double>()).epsilon(1e-12));
      }
      CHECK(l.backward_flop_factor == o[4].get<double>());
      CHECK(l.tensor_parallel_values == o[5].get<double>());
    }
  }
}

TEST_CASE("model files' totals match the published parameter counts and multiply-adds") {
  struct Published {
    const char* name;
    double params;
    double params_tolerance;  // relative
    double gmacs;             // forward multiply-adds per sample, 0 where no figure is published
  };
  // Sources (docs/models.md; each file's "source"): torchvision's model cards (AlexNet 61.1M / 0.71 GMACs, VGG-16
  // 138.4M / 15.47, ResNet-50 25,557,032 / 4.09, ResNet-101 44,549,160 / 7.80, Inception-v3 23.8M without its
  // auxiliary classifier / 5.71, ViT-B/16 86,567,656 / 17.56 "GFLOPS", a multiply-add count as for ResNet); BERT-large
  // "340M" and BERT-base "110M" (Devlin et al.); GPT-3 "175.0B" (Brown et al. Table 2.1). Where the paper rounds,
  // the count from the official config: GPT-2 XL 1557.6M (the paper says 1542M), Llama-2-7B 6.74B (hub metadata;
  // card "7B"), Llama-2-70B 68.98B (card "70B", 1.5% more), Llama-3-8B 8.03B, Llama-3-70B 70.55B, Mixtral 46.7B
  // (Mistral's figure; the paper's abstract says 47B).
  const Published published[] = {
      {"mlp-784-95-10", 75535, 0, 0},
      {"alexnet", 61.1e6, 0.001, 0.71},
      {"vgg16", 138.36e6, 0.001, 15.47},
      {"resnet50", 25557032, 0, 4.09},
      {"resnet101", 44549160, 0, 7.80},
      {"resnet152", 60192808, 0, 11.51},
      {"inception-v3", 23.83e6, 0.001, 5.71},
      {"vit-b-16", 86567656, 0, 17.56},
      {"vit-l-16", 304326632, 0, 61.55},
      {"vit-s-16", 22050664, 0, 4.61},
      {"bert-large", 340e6, 0.02, 0},
      {"bert-base", 110e6, 0.01, 0},
      {"gpt2-xl", 1557.6e6, 0.001, 0},
      {"gpt3-175b", 175.0e9, 0.01, 0},
      {"llama-2-7b", 6.74e9, 0.01, 0},
      {"llama-2-13b", 13015864320, 0, 0},  // its config's count: 2 x 32000 x 5120 + 40 x 317,204,480 + 5120
      {"llama-2-70b", 68.98e9, 0.01, 0},
      {"llama-3-8b", 8.03e9, 0.01, 0},
      {"llama-3-70b", 70.55e9, 0.01, 0},
      // 126 x (attention 570,425,344 + MLP 2,617,245,696 + norms 32,768) + 2 x 128,256 x 16,384 + 16,384
      {"llama-3.1-405b", 405853388800, 0, 0},
      {"mixtral-8x7b", 46.7e9, 0.01, 0},
      // torchvision's model cards (ResNeXt-50 32x4d 25,028,904 / 4.23; EfficientNet-B0 5,288,548 / 0.39, B4 at 380 px
      // 19,341,616 / 4.39) and timm's (ResNeXt-101 32x4d 44.2M / 8.0); SE-ResNeXt-101 as NVIDIA builds it has no
      // published count: its squeeze-and-excitation parameters are checked below
      {"resnext50-32x4d", 25028904, 0, 4.23},
      {"resnext101-32x4d", 44.18e6, 0.001, 8.0},
      {"se-resnext101-32x4d", 0, 0, 0},
      {"efficientnet-b0", 5288548, 0, 0.39},
      {"efficientnet-b4", 19341616, 0, 4.39},
      // Transformer-XL as NVIDIA's code builds it (no published count of the 512-wide base; the paper's 257M for
      // large is not its code's count): blocks 16 x (Q K V 786,432 + output 262,144 + positions 262,144 + biases
      // 2,048 + norms 2 x 1,024 + MLP 2,099,712) = 54,632,448; the tied embedding 267,735 x 512; the softmax's biases
      // 267,735 and tail logits 3 x 513. Large: blocks 18 x 13,644,800; the adaptive tables 19,997 x 1,024 + 20,000 x
      // 256 + 160,000 x 64 + 67,738 x 16 = 36,920,736 and their projections to 1,024 (1,392,640); the softmax's biases,
      // tail logits 3 x 1,025 and its own first-cluster projection 1,048,576
      {"transformer-xl-base", 191982042, 1e-9, 0},
      {"transformer-xl-large", 285239162, 1e-9, 0},
  };
  CHECK(builtin_models(DTSIM_SOURCE_DIR).size() > 0);
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(DTSIM_SOURCE_DIR) / "scenarios" / "models")) {
    files += entry.path().extension() == ".json" ? 1 : 0;
  }
  CHECK(files == std::size(published));  // every shipped model is checked here
  for (const Published& p : published) {
    CAPTURE(p.name);
    const Model m = builtin(p.name);
    CHECK(m.name == p.name);
    if (p.params > 0) CHECK(m.params() == Approx(p.params).epsilon(p.params_tolerance));
    if (p.gmacs > 0.01) CHECK(m.forward_flops() / 2 / 1e9 == Approx(p.gmacs).epsilon(0.01));
  }
  CHECK(builtin("mlp-784-95-10").forward_flops() == 2.0 * (784 * 95 + 95 * 10));
  // SE-ResNeXt-101 (NVIDIA's): ResNeXt-101 plus, on each block's output of C channels, a squeeze to 16 channels and
  // back, both with biases (C x 16 + 16 + 16 x C + C), and the same convolutions
  const Model resnext = builtin("resnext101-32x4d");
  const Model se = builtin("se-resnext101-32x4d");
  double squeeze_params = 0;
  const int blocks[] = {3, 4, 23, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const double c = 256 << stage;
    squeeze_params += blocks[stage] * (33 * c + 16);
  }
  CHECK(se.params() - resnext.params() == squeeze_params);
  CHECK(se.forward_flops() / resnext.forward_flops() == Approx(1.0).epsilon(0.002));
  // Mixtral: 12.9B of its 46.7B parameters are active per token (top 2 of 8 experts; Mistral's figures)
  const Model mixtral = builtin("mixtral-8x7b");
  double experts = 0;
  for (const Layer& l : mixtral.layers)
    experts += l.name.ends_with(".experts") ? l.params : 0;
  CHECK(mixtral.params() - experts * 6 / 8 == Approx(12.9e9).epsilon(0.01));
  CHECK_THROWS_WITH(builtin("resnet51"), Catch::Contains("built-in: alexnet, bert-base, bert-large"));
}

TEST_CASE("dense LLMs cost 2 FLOPs per parameter per token outside attention, 6 per token to train") {
  // Kaplan et al. 2020 (sec. 2.1): C_forward = 2N + 2 n_layer n_ctx d_attn per token, N the non-embedding
  // parameters; the de-embedding (LM head) adds 2 d_model n_vocab. Attention scores here count Q K^T and their sum
  // of V (Narayanan et al. 2021): 4 n_ctx d_attn per layer and token.
  struct Llm {
    const char* name;
    double sequence, layers, attention_width;
  };
  for (const Llm& llm :
       {Llm{"gpt2-xl", 1024, 48, 1600}, Llm{"gpt3-175b", 2048, 96, 12288}, Llm{"llama-2-7b", 4096, 32, 4096},
        Llm{"llama-2-70b", 4096, 80, 8192}, Llm{"llama-3-8b", 8192, 32, 4096}, Llm{"llama-3-70b", 8192, 80, 8192}}) {
    CAPTURE(llm.name);
    const Model m = builtin(llm.name);
    const Layer* embeddings = find_layer(m, "embeddings");
    const Layer* head = find_layer(m, "final_norm+lm_head");
    REQUIRE(embeddings != nullptr);
    REQUIRE(head != nullptr);
    CHECK(embeddings->kind == LayerKind::embedding);
    CHECK(head->kind == LayerKind::lm_head);
    const double scores = 4 * llm.sequence * llm.attention_width * llm.layers;  // per token
    const double per_token = m.forward_flops() / llm.sequence - scores;
    // matrices that multiply each token: every parameter but the input embedding's, plus a tied LM head's
    const double de_embedding = head->forward_flops / llm.sequence / 2;
    const double multiplied = m.params() - embeddings->params + (head->params < de_embedding ? de_embedding : 0);
    CHECK(per_token == Approx(2 * multiplied).epsilon(0.002));  // biases and norms: FLOPs not counted
    // and training: forward + backward (twice forward) = 6N per token
    double train = 0;
    for (const Layer& l : m.layers)
      train += l.forward_flops * (1 + l.backward_flop_factor);
    CHECK((train / llm.sequence - 3 * scores) == Approx(6 * multiplied).epsilon(0.002));
  }
  // GPT-3's training compute, Brown et al. 2020 Table D.1: 3.14e23 FLOPs for 300B tokens, 6 N D (attention left out)
  const Model gpt3 = builtin("gpt3-175b");
  CHECK(6 * gpt3.params() * 300e9 == Approx(3.14e23).epsilon(0.01));
  double train = 0;
  for (const Layer& l : gpt3.layers)
    train += l.forward_flops * (1 + l.backward_flop_factor);
  // with the attention scores (n_ctx 2048) counted, 3% more
  CHECK(train / 2048 * 300e9 / 3.14e23 == Approx(1.03).epsilon(0.01));
}

TEST_CASE("docs/models.md carries the model field reference the loader uses") {
  std::ifstream file(std::string(DTSIM_SOURCE_DIR) + "/docs/models.md");
  const std::string committed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_THAT(committed, Catch::Contains(model_fields_markdown()));
}

TEST_CASE("every layer has a kind: convolutions, pooling, linear layers, attention, routers") {
  for (const char* cnn : {"alexnet", "vgg16", "resnet50", "resnet101", "inception-v3"}) {
    CAPTURE(cnn);
    for (const Layer& l : builtin(cnn).layers) {
      CAPTURE(l.name);
      CHECK((l.kind == LayerKind::conv || l.kind == LayerKind::pool || l.kind == LayerKind::linear));
      const std::string last = l.name.substr(l.name.rfind('.') + 1);  // "pool5", "avgpool", not "branch_pool"
      CHECK((l.kind == LayerKind::pool) ==
            (last.starts_with("pool") || last.starts_with("maxpool") || last.starts_with("avgpool")));
    }
  }
  const Model mixtral = builtin("mixtral-8x7b");
  int routers = 0;
  int attention = 0;
  for (const Layer& l : mixtral.layers) {
    routers += l.kind == LayerKind::moe_router ? 1 : 0;
    attention += l.kind == LayerKind::attention ? 1 : 0;
  }
  CHECK(routers == 32);
  CHECK(attention == 32);
  CHECK(builtin("vit-b-16").layers.front().kind == LayerKind::conv);  // the patch embedding
  for (LayerKind k : {LayerKind::conv, LayerKind::moe_router, LayerKind::other}) {
    CHECK(layer_kind_from_string(to_string(k)) == k);
  }
  CHECK_FALSE(layer_kind_from_string("gemm").has_value());
}

TEST_CASE("Transformer-XL's memory and relative positions and adaptive softmax follow its hyperparameters") {
  TransformerSpec t;
  t.name = "tiny-xl";
  t.layers = 1;
  t.hidden = 64;
  t.heads = 4;
  t.kv_heads = 4;
  t.head_dim = 16;
  t.ffn_hidden = 256;
  t.ffn = FfnKind::relu;
  t.vocab = 10000;
  t.sequence = 32;
  t.biases = false;
  t.position = PositionKind::none;
  t.final_norm = false;
  const Model plain = transformer_model(t);
  // the MLP of a ReLU model costs what a GELU one does: two matrices
  CHECK(plain.layers[2].params == 2 * 64 * 256 + 2 * 64);
  t.memory = 48;
  t.position = PositionKind::relative;
  const Model xl = transformer_model(t);
  const Layer& a = xl.layers[1];
  // Q, K, V over the 80 tokens of memory and segment, the output over the 32; Q K^T, Q R^T and the weighted V over 80
  // keys a query; the positions' projection adds 64 x 64 parameters
  CHECK(a.forward_flops == 2 * 80 * (64 * 64 + 2 * 64 * 64) + 2 * 32 * 64 * 64 + 6 * 32 * 80 * 64);
  CHECK(a.score_flops == 6 * 32 * 80 * 64);
  CHECK(a.params == plain.layers[1].params + 64 * 64);
  CHECK(a.activation_bytes > plain.layers[1].activation_bytes);
  // the softmax over 10,000 words: every token's logits over the first 2,000 words and one per tail cluster, a tail's
  // logits only for its Zipf share of the tokens
  const double full_head = plain.layers.back().forward_flops;
  CHECK(full_head == 32 * 2 * 64 * 10000);
  t.tied_embeddings = true;
  t.adaptive = AdaptiveSpec{{2000, 6000}, 1};
  const Model adaptive = transformer_model(t);
  const double head_share = zipf_share(0, 2000, 10000);
  const double tail1 = zipf_share(2000, 6000, 10000);
  const double tail2 = zipf_share(6000, 10000, 10000);
  CHECK(head_share + tail1 + tail2 == Approx(1).epsilon(1e-12));
  CHECK(head_share == Approx(0.8356).epsilon(1e-3));  // H(2000) / H(10000) = 8.1784 / 9.7876
  CHECK(adaptive.layers.back().forward_flops ==
        Approx(32 * 2 * 64 * (2002 + tail1 * 4000 + tail2 * 4000)).epsilon(1e-12));
  CHECK(adaptive.layers.back().forward_flops < full_head / 2);
  CHECK(adaptive.layers.back().params == 10000 + 2 * 65);  // tied: the output biases and the tails' logit rows
  CHECK(adaptive.layers.front().params == 10000 * 64);     // div_val 1: one table
  // div_val 2: narrower tables projected to hidden, every cluster's projection in the input, the first in the head
  t.adaptive->div_val = 2;
  const Model narrow = transformer_model(t);
  CHECK(narrow.layers.front().params == 2000 * 64 + 4000 * 32 + 4000 * 16 + (64 + 32 + 16) * 64);
  CHECK(narrow.layers.back().params == 10000 + 2 * 65 + 64 * 64);
}

TEST_CASE("a transformer's layers follow its hyperparameters: GQA, SwiGLU, MoE, tied heads") {
  TransformerSpec t;
  t.name = "tiny";
  t.layers = 2;
  t.hidden = 64;
  t.heads = 8;
  t.kv_heads = 2;
  t.head_dim = 8;
  t.ffn_hidden = 128;
  t.ffn = FfnKind::swiglu;
  t.vocab = 1000;
  t.sequence = 16;
  t.positions = 16;
  t.biases = false;
  t.norm = NormKind::rmsnorm;
  t.position = PositionKind::rope;
  const Model m = transformer_model(t);
  REQUIRE(m.layers.size() == 1 + 2 * 2 + 1);
  const Layer& attention = m.layers[1];
  // Q and O 64 x 64, K and V 64 x 16 (2 heads of 8), an RMSNorm of 64
  CHECK(attention.params == 2 * 64 * 64 + 2 * 64 * 16 + 64);
  CHECK(attention.forward_flops == 16 * (2 * (2 * 64 * 64 + 2 * 64 * 16) + 4 * 16 * 64));
  CHECK(attention.tensor_parallel_values == 16 * 64);
  CHECK(m.layers[2].params == 3 * 64 * 128 + 64);  // gate, up, down
  CHECK(m.layers[2].forward_flops == 16 * 6 * 64 * 128);
  CHECK(m.layers[0].params == 1000 * 64);  // rope: no position table
  CHECK(m.layers.back().params == 64 + 1000 * 64);
  t.tied_embeddings = true;
  CHECK(transformer_model(t).layers.back().params == 64);
  t.moe = MoeSpec{4, 1, 32};
  const Model moe = transformer_model(t);
  REQUIRE(moe.layers.size() == 1 + 3 * 2 + 1);
  CHECK(moe.layers[2].kind == LayerKind::moe_router);
  CHECK(moe.layers[2].params == 64 * 4 + 64);
  CHECK(moe.layers[3].params == 4 * 3 * 64 * 32);              // all experts' parameters
  CHECK(moe.layers[3].forward_flops == 16 * 1 * 6 * 64 * 32);  // one expert's FLOPs per token
  CHECK(moe.layers[3].tensor_parallel_values == 16 * 64);
  CHECK(moe.layers[3].experts == 4);
  CHECK(moe.layers[3].dispatch_values == 16 * 1 * 64);  // each token's hidden values to its one expert
  // a capacity factor of 1.25 pads every expert's buffer: its FLOPs, activations and all-to-alls grow, not its weights
  t.moe->capacity_factor = 1.25;
  const Model padded = transformer_model(t);
  CHECK(padded.layers[3].params == moe.layers[3].params);
  CHECK(padded.layers[3].forward_flops == Approx(1.25 * moe.layers[3].forward_flops));
  CHECK(padded.layers[3].dispatch_values == Approx(1.25 * moe.layers[3].dispatch_values));
  CHECK(padded.layers[3].activation_bytes > moe.layers[3].activation_bytes);
  CHECK(padded.layers[1].forward_flops == moe.layers[1].forward_flops);  // attention unchanged
}

namespace {

Device builtin_device(const std::string& name) { return load_named_device(name, ".", DTSIM_SOURCE_DIR); }

}  // namespace

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
    CHECK(d.kernel_launch_s == (d.kind == DeviceKind::gpu ? 3e-6 : 1e-6));
    if (d.fitted()) {  // by dtsim calibrate --published: its rows (pooled ones too) and their error recorded
      CHECK(d.fit->rows > 0);
      CHECK(d.fit->median_error > 0);
      CHECK_THAT(d.fit->by, Catch::Contains("dtsim calibrate --published"));
    } else {
      CHECK(d.efficiency == 0.5);
      CHECK(d.tensor_efficiency == 0.5);
    }
    // a built-in name loads the same file
    CHECK(builtin_device(d.name).peak_flops(Precision::fp32) == d.peak_flops(Precision::fp32));
  }
  CHECK(files >= 16);
  CHECK_THROWS_WITH(builtin_device("tpu"),
                    Catch::Contains("unknown device 'tpu' (built-in: a10, a100-pcie-40gb, a100-pcie-80gb"));
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
  };
  // dtsim's catalogue before device files, except where the research showed a figure wrong: the RTX 3090's fp16 with
  // fp32 accumulate is 71 TFLOP/s dense (GA102 whitepaper; the catalogue had 35.6), the Xeon 8380's fp32 peak is 64
  // FLOP/cycle (2 AVX-512 FMA units x 16 lanes x 2: 5.888 TFLOP/s; the catalogue had 32, the fp64 rate), and H100's
  // dense fp16 is the datasheet's 1,979 / 2 = 989.5 (the catalogue rounded to 989)
  const Before before[] = {
      {"v100", "v100-sxm2-32gb", 15.7e12, 125e12, 900e9, 32e9},
      {"a100", "a100-sxm4-80gb", 19.5e12, 312e12, 2039e9, 80e9},
      {"h100", "h100-sxm5-80gb", 67e12, 989.5e12, 3350e9, 80e9},
      {"rtx3090", "rtx-3090", 35.6e12, 71e12, 936e9, 24e9},
      {"xeon-8380", "xeon-platinum-8380", 5.888e12, 0, 204.8e9, 256e9},
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
  }
}

TEST_CASE("a model file's fields the loader keeps unread, such as its description, are held to their types") {
  nlohmann::json doc = read_json_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/models/llama-3-8b.json");
  CHECK_NOTHROW(parse_model_document(doc));
  for (const nlohmann::json& bad : {nlohmann::json(5), nlohmann::json::array({1, 2}), nlohmann::json{{"a", 1}}}) {
    doc["model"]["description"] = bad;
    CHECK_THROWS_WITH(parse_model_document(doc), Catch::StartsWith("model.description: expected a string"));
  }
}
