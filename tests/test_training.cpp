// The training-step simulation: compute from the device model, bucketed allreduce overlapping backward, the input
// pipeline, and scaling.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <numeric>

#include "algorithms/registry.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/flow_executor.hpp"
#include "sim/predict.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

ClusterSpec builtin_cluster(const std::string& name) {
  return load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/" + name + ".json");
}

TrainingSetup setup_for(const std::string& model, const std::string& device, int batch) {
  TrainingSetup s;
  s.model = load_named_model(model, ".", DTSIM_SOURCE_DIR);
  s.device = load_named_device(device, ".", DTSIM_SOURCE_DIR);
  s.batch = batch;
  apply_preset(s, FrameworkPreset::ddp);
  return s;
}

}  // namespace

TEST_CASE("one accelerator's step is the sum of its layer times and the optimizer") {
  const TrainingSetup s = setup_for("resnet50", "v100", 32);
  const Prediction p = predict_step(s, builtin_cluster("v100-nvlink-edr"), 1, "ring");
  double sum = 0;
  for (const Layer& layer : s.model.layers) {
    sum += forward_seconds(layer, 32, s.device, s.compute) + backward_seconds(layer, 32, s.device, s.compute);
  }
  sum += optimizer_seconds(s.model.params(), s.device, s.compute);
  CHECK(p.step.step_s == Approx(sum).epsilon(1e-9));
  CHECK(p.step.exposed_comm_s == 0);
  CHECK(p.samples_per_s == Approx(32 / sum));
}

TEST_CASE("with infinite bandwidth and zero latency weak scaling is linear") {
  ClusterSpec c = builtin_cluster("v100-nvlink-edr");
  for (LinkSpec* link : {&c.node.intra, &c.node.pcie, &c.node.cpu_link, &c.node.nic, &c.fabric.link}) {
    *link = LinkSpec{1e18, 0.0};
  }
  c.node.reduce_Bps = 1e18;
  const TrainingSetup s = setup_for("resnet50", "v100", 32);
  const Prediction one = predict_step(s, c, 1, "ring");
  for (int n : {4, 16}) {
    Prediction p = predict_step(s, c, n, "ring");
    compare_to_baseline(p, one);
    CAPTURE(n);
    CHECK(p.efficiency == Approx(1.0).epsilon(1e-6));
    CHECK(p.speedup == Approx(n).epsilon(1e-6));
  }
}

TEST_CASE("without overlap the exposed communication is the allreduce, and overlap shortens the step") {
  const ClusterSpec c = builtin_cluster("v100-nvlink-edr");
  TrainingSetup s = setup_for("resnet50", "v100", 32);
  apply_preset(s, FrameworkPreset::none);
  const Prediction serial = predict_step(s, c, 16, "ring");
  // the same allreduce alone on the same cluster
  ClusterSpec four = c;
  four.nodes = 4;
  const Topology topology(four);
  SimGridOptions sg;
  sg.topology = &topology;
  sg.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  const auto bytes = static_cast<std::uint64_t>(std::llround(s.model.params() * 4));
  const double allreduce = run_simgrid(find_algorithm("ring").build(16, bytes, AlgorithmOptions{}), sg).time_s;
  CHECK(serial.step.exposed_comm_s == Approx(allreduce).epsilon(1e-6));
  CHECK(serial.step.comm_s == Approx(allreduce).epsilon(1e-6));

  apply_preset(s, FrameworkPreset::ddp);
  const Prediction overlapped = predict_step(s, c, 16, "ring");
  CHECK(overlapped.step.step_s < serial.step.step_s);
  CHECK(overlapped.step.exposed_comm_s < 0.5 * serial.step.exposed_comm_s);
  apply_preset(s, FrameworkPreset::horovod);
  const Prediction fused = predict_step(s, c, 16, "ring");
  CHECK(fused.step.step_s < serial.step.step_s);
}

TEST_CASE("buckets that wait for backward (overlap false) expose every reduction, run one after another") {
  const ClusterSpec c = builtin_cluster("v100-nvlink-edr");
  TrainingSetup s = setup_for("resnet50", "v100", 32);
  const Prediction overlapped = predict_step(s, c, 16, "ring");
  s.overlap = false;
  const Prediction waiting = predict_step(s, c, 16, "ring");
  CHECK(waiting.step.forward_s == Approx(overlapped.step.forward_s).epsilon(1e-9));
  CHECK(waiting.step.backward_s == Approx(overlapped.step.backward_s).epsilon(1e-9));
  // nothing hides any bucket: the step waits for all of them, back to back
  CHECK(waiting.step.exposed_comm_s == Approx(waiting.step.comm_s).epsilon(1e-6));
  CHECK(waiting.step.exposed_comm_s > 2 * overlapped.step.exposed_comm_s);
  CHECK(waiting.step.step_s ==
        Approx(overlapped.step.step_s - overlapped.step.exposed_comm_s + waiting.step.exposed_comm_s).epsilon(1e-6));
  // the same buckets as DDP's (not preset none's one allreduce of everything)
  CHECK(waiting.reductions.size() == overlapped.reductions.size());
  REQUIRE(!waiting.reductions.empty());
  CHECK(waiting.reductions.front().buckets == overlapped.reductions.front().buckets);
  CHECK(waiting.reductions.front().buckets > 1);
}

TEST_CASE("an input pipeline slower than compute caps throughput at its rate") {
  TrainingSetup s = setup_for("resnet50", "v100", 32);
  s.input.enabled = true;
  s.input.storage_Bps = 10e9;
  s.input.sample_bytes = 110e3;
  s.input.decode_samples_per_s_per_core = 100;  // 4 cores: 400 images/s per node, far below 4 V100s
  s.input.cores = 4;
  s.steps = 4;
  const Prediction p = predict_step(s, builtin_cluster("v100-nvlink-edr"), 4, "ring");
  CHECK(p.samples_per_s == Approx(400).epsilon(1e-3));
  CHECK(p.step.input_stall_s > 0);
  CHECK_THAT(p.bottleneck, Catch::StartsWith("input pipeline"));
  s.input.decode_samples_per_s_per_core = 1e6;  // a fast pipeline is hidden by prefetching
  const Prediction fast = predict_step(s, builtin_cluster("v100-nvlink-edr"), 4, "ring");
  CHECK(fast.step.input_stall_s == Approx(0).margin(1e-12));
}

TEST_CASE("strong scaling of the 784-95-10 MLP at a global batch of 20 gets slower with more accelerators") {
  TrainingSetup s = setup_for("mlp-784-95-10", "xeon-8380", 20);
  s.scaling = ScalingMode::strong;
  const ClusterSpec c = builtin_cluster("cpu-10gbe");
  double previous = 0;
  std::vector<double> rates;
  for (int n : {1, 2, 4, 5, 10, 20}) {
    const Prediction p = predict_step(s, c, n, "ring");
    rates.push_back(p.samples_per_s);
    previous = p.step.step_s;
  }
  CHECK(previous > 0);
  // the per-step allreduce latency (2 (P-1) messages of 10 us and more) exceeds the compute it saves
  CHECK(rates.back() < rates[1]);
  CHECK(rates.back() < rates.front());
  CHECK_THROWS_WITH(predict_step(s, c, 3, "ring"), Catch::Contains("does not split evenly over 3"));
}

TEST_CASE("a configuration that does not fit in memory is reported with what it lacks, not simulated") {
  TrainingSetup s = setup_for("gpt2-xl", "v100", 8);
  s.compute.optimizer = Optimizer::adam;
  const Prediction p = predict_step(s, builtin_cluster("v100-nvlink-edr"), 4, "ring");
  CHECK_FALSE(p.fits);
  CHECK(p.step.step_s == 0);
  CHECK_THAT(p.bottleneck, Catch::StartsWith("memory: needs"));
  CHECK_THAT(p.bottleneck, Catch::Contains("has 32.0 GB (lacks"));
  // weights, gradients and Adam state alone: 1.56e9 x (4 + 4 + 8) bytes
  CHECK(p.memory.weights_bytes + p.memory.gradient_bytes + p.memory.optimizer_bytes == Approx(s.model.params() * 16));
}

TEST_CASE("docs/predict.md carries the scenario field reference the loader uses") {
  std::ifstream file(std::string(DTSIM_SOURCE_DIR) + "/docs/predict.md");
  const std::string committed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_THAT(committed, Catch::Contains(scenario_fields_markdown()));
}

TEST_CASE("the flow executor times training steps as SimGrid does: overlap, fusion, input pipeline, every algorithm") {
  ClusterSpec cluster = builtin_cluster("v100-nvlink-edr");
  TrainingSetup s = setup_for("resnet50", "v100", 32);
  s.input.enabled = true;
  s.input.storage_Bps = 2e9;
  s.input.sample_bytes = 110e3;
  s.input.decode_samples_per_s_per_core = 250;
  s.input.cores = 8;  // slow enough to stall the step
  for (const std::string algorithm : {"ring", "tree", "butterfly", "ps", "hierarchical"}) {
    for (int accelerators : {4, 16}) {
      for (const bool fused : {false, true}) {
        CAPTURE(algorithm, accelerators, fused);
        TrainingSetup t = s;
        if (fused) t.fusion_cycle_s = 0.005;
        const Prediction sg = predict_step(t, cluster, accelerators, algorithm, nullptr, Backend::simgrid);
        const Prediction flow = predict_step(t, cluster, accelerators, algorithm, nullptr, Backend::flow);
        CHECK(flow.backend == Backend::flow);
        CHECK(flow.step.step_s == Approx(sg.step.step_s).epsilon(0.01));
        CHECK(flow.step.exposed_comm_s == Approx(sg.step.exposed_comm_s).epsilon(0.01).margin(1e-6));
        CHECK(flow.step.input_stall_s == Approx(sg.step.input_stall_s).epsilon(1e-6).margin(1e-9));
        CHECK(flow.step.comm_s == Approx(sg.step.comm_s).epsilon(0.01));
      }
    }
  }
}

TEST_CASE("a configuration beyond the memory available is refused before it is simulated, with the estimate") {
  const TrainingSetup s = setup_for("resnet50", "v100", 32);
  const ClusterSpec c = builtin_cluster("v100-nvlink-edr");
  // ps with one server per node: its schedules grow as accelerators x servers
  std::string small, large;
  try {
    predict_step(s, c, 64, "ps", nullptr, Backend::flow, 1);
  } catch (const InsufficientMemory& e) {
    small = e.what();
  }
  try {
    predict_step(s, c, 1024, "ps", nullptr, Backend::flow, 1);
  } catch (const InsufficientMemory& e) {
    large = e.what();
  }
  CHECK_THAT(small, Catch::Contains("ps needs about") && Catch::Contains("use fewer accelerators"));
  CHECK_THAT(large, Catch::Contains("gradient buckets of"));
  const auto estimate = [](const std::string& m) {
    const std::string amount = m.substr(m.find("about ") + 6);
    return std::stod(amount) * (amount.find(" GB") < amount.find(" MB") ? 1e9 : 1e6);
  };
  CHECK(estimate(large) > 5 * estimate(small));  // 36 MB and 207 MB (measured peaks of the runs: 37 MB, 206 MB)
  // with room enough it runs (the estimate is below the budget)
  const Prediction p = predict_step(s, c, 64, "ps", nullptr, Backend::flow, std::uint64_t{1} << 40);
  CHECK(p.step.step_s > 0);
}

TEST_CASE(
    "gradient accumulation: every micro-batch computes, the gradients are reduced once, the optimizer steps once") {
  const ClusterSpec cluster = builtin_cluster("dgx-a100");
  TrainingSetup s = setup_for("bert-large", "a100", 8);
  s.compute.precision = Precision::fp16;
  s.compute.optimizer = Optimizer::adam;
  const Prediction plain = predict_step(s, cluster, 16, "ring", nullptr, Backend::flow);
  s.accumulation = 4;
  const Prediction accumulated = predict_step(s, cluster, 16, "ring", nullptr, Backend::flow);
  CHECK(accumulated.global_batch == 4 * 8 * 16);
  CHECK(accumulated.local_batch == 8);
  CHECK(accumulated.step.forward_s == Approx(4 * plain.step.forward_s));
  CHECK(accumulated.step.backward_s == Approx(4 * plain.step.backward_s));
  CHECK(accumulated.step.optimizer_s == Approx(plain.step.optimizer_s));
  // the gradients move once, overlapped with the last micro-batch's backward as without accumulation
  CHECK(accumulated.step.exposed_comm_s == Approx(plain.step.exposed_comm_s).epsilon(1e-6));
  CHECK(accumulated.step.step_s == Approx(plain.step.step_s + 3 * (plain.step.forward_s + plain.step.backward_s)));
  CHECK(accumulated.samples_per_s > plain.samples_per_s);  // communication and optimizer amortised
  // strong scaling splits the global batch over accelerators x micro-batches
  s.scaling = ScalingMode::strong;
  s.batch = 512;
  CHECK(predict_step(s, cluster, 16, "ring", nullptr, Backend::flow).local_batch == 8);
  s.batch = 16 * 4 * 8 + 16;
  CHECK_THROWS_WITH(predict_step(s, cluster, 16, "ring", nullptr, Backend::flow),
                    Catch::Contains("does not split evenly over 16 accelerators x 4 micro-batches"));
}

TEST_CASE("gradient accumulation runs the earlier micro-batches as one compute only where that is exact") {
  TrainingSetup s = setup_for("resnet50", "v100", 16);
  s.accumulation = 5;
  TrainingProgram program = make_program(s, 8, 16, "ring", AlgorithmOptions{}, 8);  // on a star
  FlowOptions fo;
  fo.cost.bandwidth_Bps = 10e9;
  const TrainingResult folded = run_flow_training(program, 8, fo);
  ComputeNoise none;  // variability that draws nothing: every micro-batch runs one by one
  program.noise = &none;
  const TrainingResult each = run_flow_training(program, 8, fo);
  CHECK(folded.step_s == Approx(each.step_s).epsilon(1e-9));
  CHECK(folded.exposed_comm_s == Approx(each.exposed_comm_s).margin(1e-12));
  // all five micro-batches counted, in the step and in its parts
  CHECK(folded.forward_s == Approx(5 * std::accumulate(program.forward_s.begin(), program.forward_s.end(), 0.0)));
  CHECK(folded.step_s >= folded.forward_s + folded.backward_s + folded.optimizer_s);
}

TEST_CASE("a scenario's batch.accumulation: read, printed, and refused where it cannot apply") {
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/training/";
  nlohmann::json doc = read_json_file(dir + "bert-large-dgx-a100.json");
  doc["scenario"]["batch"]["accumulation"] = 8;
  const Scenario sc = parse_scenario(doc, dir, DTSIM_SOURCE_DIR);
  CHECK(sc.setup.accumulation == 8);
  doc["scenario"]["batch"]["accumulation"] = 0;
  CHECK_THROWS_WITH(parse_scenario(doc, dir, DTSIM_SOURCE_DIR), Catch::Contains("scenario.batch.accumulation"));
  doc["scenario"]["batch"]["accumulation"] = 2;
  doc["scenario"]["batch"]["mode"] = "strong";
  doc["scenario"]["batch"]["size"] = 96;  // over 64 accelerators x 2 micro-batches it does not split
  CHECK_THROWS_WITH(parse_scenario(doc, dir, DTSIM_SOURCE_DIR), Catch::Contains("x 2 micro-batches"));
}

TEST_CASE("bucket_reductions groups the buckets by algorithm and protocol and channels in order of first use") {
  std::vector<Schedule> buckets(4);
  buckets[0].algorithm = "chain-dbtree";
  buckets[0].protocol = Protocol::ll128;
  buckets[0].channels = 8;
  buckets[1] = buckets[0];
  buckets[2].algorithm = "ring";
  buckets[2].protocol = Protocol::simple;
  buckets[2].channels = 8;
  buckets[3] = buckets[0];
  buckets[3].protocol = Protocol::ll;  // same algorithm, another protocol: a group of its own
  const std::vector<BucketReduction> groups = bucket_reductions(buckets, {2'000'000, 30'000'000, 60'000'000, 500});
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].algorithm == "chain-dbtree");
  CHECK(groups[0].buckets == 2);
  CHECK(groups[0].smallest_bytes == 2'000'000);
  CHECK(groups[0].largest_bytes == 30'000'000);
  CHECK(groups[1].algorithm == "ring");
  CHECK(groups[1].protocol == Protocol::simple);
  CHECK(groups[1].channels == 8);
  CHECK(groups[1].buckets == 1);
  CHECK(groups[2].protocol == Protocol::ll);
  CHECK(groups[2].largest_bytes == 500);
  CHECK_THROWS_AS(bucket_reductions(buckets, {1, 2}), std::logic_error);
}

TEST_CASE("a global batch beyond 32 bits is counted whole: samples per second and speedup stay positive") {
  TrainingSetup s = setup_for("mlp-784-95-10", "v100", 16777216);  // the largest batch a scenario accepts
  s.device.memory_bytes = 1e18;
  const ClusterSpec c = builtin_cluster("v100-nvlink-edr");
  const Prediction one = predict_step(s, c, 1, "ring", nullptr, Backend::flow);
  const Prediction many = predict_step(s, c, 256, "ring", nullptr, Backend::flow);
  CHECK(many.global_batch == 16777216LL * 256);
  CHECK(many.samples_per_s > 0);
  CHECK(many.samples_per_s == Approx(many.global_batch / many.step.step_s));
  CHECK(many.samples_per_s > one.samples_per_s);
}
