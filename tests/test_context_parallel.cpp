// Context parallelism (sequences split over ranks, keys and values exchanged around each attention layer) and the
// causal score tiles a fused attention kernel skips.
#include <catch2/catch.hpp>
#include <string>

#include "models/compute_model.hpp"
#include "models/devices.hpp"
#include "models/model_zoo.hpp"
#include "models/parallel.hpp"
#include "models/transformer.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/parallel.hpp"

using namespace dtsim;

namespace {

// Llama 3 8B at `sequence` tokens, as the model file describes it otherwise.
Model llama_at(int sequence) {
  nlohmann::json doc = read_json_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/models/llama-3-8b.json");
  doc["model"]["sequence"] = sequence;
  return parse_model_document(doc);
}

const Layer& first_attention(const Model& m) {
  for (const Layer& l : m.layers) {
    if (l.kind == LayerKind::attention) return l;
  }
  FAIL("no attention layer");
  return m.layers.front();
}

// A scenario of Llama 3 8B at 32k tokens on one DGX H100 node under FSDP, `context` ranks a sequence.
nlohmann::json long_sequence_scenario(int context) {
  nlohmann::json model = read_json_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/models/llama-3-8b.json")["model"];
  model["sequence"] = 32768;
  return {{"scenario",
           {{"name", "cp"},
            {"cluster", "dgx-h100"},
            {"device", "h100-sxm5-80gb"},
            {"model", model},
            {"batch", {{"mode", "strong"}, {"size", 8 / context}}},
            {"precision", "bf16"},
            {"optimizer", "adam"},
            {"flash_attention", true},
            {"accelerators", {8}},
            {"algorithms", "ring"},
            {"parallel", {{"sharding", "fsdp"}, {"context", context}}}}}};
}

}  // namespace

TEST_CASE("a causal attention's fused kernel skips the score tiles past the diagonal and an encoder's has none") {
  const int s = 8192;
  const Model llama = llama_at(s);
  const Layer& causal = first_attention(llama);
  REQUIRE(causal.score_flops > 0);
  // query tile j of 128 rows skips the key tiles past its own: s (s - 128) / 2 of the s^2 scores
  CHECK(causal.masked_score_flops == Approx(causal.score_flops * (s - 128.0) / (2.0 * s)));
  const Model bert = load_named_model("bert-large", ".", DTSIM_SOURCE_DIR);
  CHECK(first_attention(bert).masked_score_flops == 0);
  // a sequence no longer than one tile skips nothing
  const Model short_llama = llama_at(128);
  CHECK(first_attention(short_llama).masked_score_flops == 0);

  const Device h100 = load_named_device("h100-sxm5-80gb", ".", DTSIM_SOURCE_DIR);
  ComputeSettings fused;
  fused.precision = Precision::bf16;
  fused.flash_attention = true;
  Layer unmasked = causal;
  unmasked.masked_score_flops = 0;
  // the fused kernel's passes are shorter by the skipped tiles' math; the unfused attention computes every score
  CHECK(forward_seconds(causal, 2, h100, fused) < forward_seconds(unmasked, 2, h100, fused));
  CHECK(backward_seconds(causal, 2, h100, fused) < backward_seconds(unmasked, 2, h100, fused));
  ComputeSettings unfused = fused;
  unfused.flash_attention = false;
  CHECK(forward_seconds(causal, 2, h100, unfused) == forward_seconds(unmasked, 2, h100, unfused));
  // the projections beside the scores are the same either way
  CHECK(projection_seconds(causal, 2, h100, fused, true) == projection_seconds(unmasked, 2, h100, fused, true));
  // and a tensor rank holds 1/T of the skipped tiles as of the scores
  CHECK(tensor_rank_layer(causal, 4).masked_score_flops == Approx(causal.masked_score_flops / 4));
}

TEST_CASE("a context rank computes 1/C of every layer's per-token work and holds every parameter") {
  const Model m = llama_at(32768);
  const Layer& a = first_attention(m);
  CHECK(a.kv_values == Approx(2.0 * 32768 * 8 * 128));  // K and V of 8 heads of 128 over the sequence
  const Layer r = context_rank_layer(a, 4);
  CHECK(r.params == a.params);
  CHECK(r.param_tensors == a.param_tensors);
  CHECK(r.forward_flops == Approx(a.forward_flops / 4));
  CHECK(r.score_flops == Approx(a.score_flops / 4));
  CHECK(r.masked_score_flops == Approx(a.masked_score_flops / 4));
  CHECK(r.activation_bytes == Approx(a.activation_bytes / 4));
  CHECK(r.kv_values == Approx(a.kv_values / 4));
  CHECK(r.tensor_parallel_values == Approx(a.tensor_parallel_values / 4));
  CHECK(context_rank_layer(a, 1).forward_flops == a.forward_flops);

  ParallelSpec spec;
  spec.context = 4;
  spec.sharding = Sharding::zero3;
  const ParallelLayout l = spec.layout(16);
  CHECK(l.data == 4);
  CHECK(l.replicas() == 16);
  CHECK(l.accelerators() == 16);
  CHECK(l.describe() == "4d x 4c x 1t x 1p, 1 micro-batch, zero3");
  CHECK_THROWS_WITH(spec.layout(6), Catch::Contains("not a multiple of context x tensor x pipeline = 4"));
}

TEST_CASE("context parallelism: the same step work split C ways, keys and values exchanged, FSDP over D x C") {
  const Scenario one = parse_scenario(long_sequence_scenario(1), ".", DTSIM_SOURCE_DIR);
  const Scenario four = parse_scenario(long_sequence_scenario(4), ".", DTSIM_SOURCE_DIR);
  REQUIRE(four.parallel);
  CHECK(four.parallel->context == 4);
  TrainingSetup roomy = one.setup;
  roomy.device.memory_bytes = 1e15;  // (the 8-way data-parallel layout needs more memory than an H100 has)
  const ParallelLayout flat = one.parallel->layout(8);
  const ParallelLayout split = four.parallel->layout(8);
  REQUIRE(split.data == 2);
  const ParallelPrediction d = predict_parallel(roomy, one.cluster, flat, "ring");
  TrainingSetup roomy_four = four.setup;
  roomy_four.device.memory_bytes = 1e15;
  const ParallelPrediction c = predict_parallel(roomy_four, four.cluster, split, "ring");
  REQUIRE(d.fits);
  REQUIRE(c.fits);
  CHECK(d.global_batch == 8);
  CHECK(c.global_batch == 2);
  // a sequence's work a rank: a quarter of the 8-way layout's, which runs a whole sequence a rank
  CHECK(c.compute_s == Approx(d.compute_s / 4).epsilon(0.01));
  CHECK(d.context_comm_s == 0);
  CHECK(c.context_comm_s > 0);
  const double parts = c.compute_s + c.tensor_comm_s + c.expert_comm_s + c.context_comm_s + c.bubble_s +
                       c.data_exposed_s + c.input_stall_s + c.optimizer_s;
  CHECK(parts == Approx(c.step_s).epsilon(1e-6));
  // the bytes: per attention layer, 2 all-gathers in which a rank sends its K and V to the 3 others
  const CommVolume v = comm_volume(roomy, split, 1, 0);
  const double value = gradient_bytes_per_param(roomy.compute.precision);
  const double kv = first_attention(roomy.model).kv_values / 4;
  CHECK(v.context_bytes == Approx(32 * 2 * 3 * kv * value));
  CHECK(comm_volume(roomy, flat, 1, 0).context_bytes == 0);
  // FSDP shards over all 8 ranks in both layouts; each context rank keeps a quarter of a sequence's activations
  const MemoryUse md = parallel_memory(roomy, flat, 1, 0);
  const MemoryUse mc = parallel_memory(roomy, split, 1, 0);
  CHECK(mc.weights_bytes == Approx(md.weights_bytes));
  CHECK(mc.optimizer_bytes == Approx(md.optimizer_bytes));
  CHECK(mc.activation_bytes == Approx(md.activation_bytes / 4));
  // a context group across nodes exchanges over the NICs: slower than inside one node
  ParallelLayout wide = split;
  wide.context = 16;
  wide.data = 1;
  TrainingSetup global = roomy_four;
  global.batch = 1;
  const ParallelPrediction across = predict_parallel(global, four.cluster, wide, "ring");
  REQUIRE(across.fits);
  CHECK(across.context_comm_s > c.context_comm_s);
}

TEST_CASE("a scenario's parallel.context: read, and refused where it cannot split, naming its JSON path") {
  nlohmann::json doc = long_sequence_scenario(2);
  const auto refused = [&](const nlohmann::json& d, const std::string& path, const std::string& why) {
    CAPTURE(why);
    CHECK_THROWS_WITH(parse_scenario(d, ".", DTSIM_SOURCE_DIR), Catch::Contains(path) && Catch::Contains(why));
  };
  CHECK(parse_scenario(doc, ".", DTSIM_SOURCE_DIR).parallel->context == 2);
  nlohmann::json three = doc;
  three["scenario"]["parallel"]["context"] = 3;
  refused(three, "scenario.accelerators", "not a multiple of context x tensor x pipeline = 3");
  nlohmann::json zero = doc;
  zero["scenario"]["parallel"]["context"] = 0;
  refused(zero, "scenario.parallel.context", "[1, 1024]");
  nlohmann::json search = doc;
  search["scenario"]["parallel"]["search"] = "true";
  refused(search, "scenario.parallel.context", "not with search");
  nlohmann::json cnn = doc;
  cnn["scenario"]["model"] = "resnet50";
  cnn["scenario"].erase("flash_attention");
  refused(cnn, "scenario.parallel.context", "no attention layers");
}
