// Variability (issue 30): jitter and slow nodes as per-rank inputs of the one step program, the Monte Carlo samplers
// against order statistics and against each other, reproducible draws, and the refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "calibrate/microbench.hpp"
#include "models/variability.hpp"
#include "run_dtsim.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "scenarios/units.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/predict.hpp"
#include "sim/step_sampler.hpp"

namespace {

using dtsim::test::run_dtsim;

const std::string default_scenario = std::string(DTSIM_SOURCE_DIR) + "/scenarios/training/resnet50-v100.json";

dtsim::Scenario scenario_with(const nlohmann::json& variability) {
  std::ifstream in(default_scenario);
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["scenario"].erase("input");
  if (!variability.is_null()) doc["scenario"]["variability"] = variability;
  return dtsim::parse_scenario(doc, std::string(DTSIM_SOURCE_DIR) + "/scenarios/training", DTSIM_SOURCE_DIR);
}

std::string write_scenario(const std::string& name, const nlohmann::json& variability) {
  std::ifstream in(default_scenario);
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["scenario"]["variability"] = variability;
  doc["scenario"]["cluster"] = "v100-nvlink-edr";
  doc["scenario"]["accelerators"] = {1, 8};
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("dtsim-test-variability-" + name);
  std::ofstream(path) << doc.dump();
  return path.string();
}

// A program of one compute of `compute_s` per rank and one bucket of gradients reduced in `reduce_s` after it.
dtsim::TrainingProgram one_bucket_program(double compute_s) {
  dtsim::TrainingProgram p;
  p.forward_s = {0.0};
  p.backward_s = {compute_s};
  p.bucket_ready_after = {0};
  p.buckets.emplace_back();
  return p;
}

}  // namespace

TEST_CASE("with iid normal jitter the sampled step is the expected largest of P draws (order statistics)") {
  for (const int ranks : {8, 64, 512}) {
    INFO(ranks << " ranks");
    const double compute_s = 0.1;
    const double reduce_s = 0.02;
    const dtsim::TrainingProgram program = one_bucket_program(compute_s);
    dtsim::Variability v;
    v.jitter.distribution = dtsim::JitterDistribution::normal;
    v.jitter.sigma = 0.05;
    dtsim::SamplingRequest request;
    request.samples = 2000;
    request.seed = 11;
    request.variability = &v;
    const std::vector<double> steps = dtsim::sample_steps_fast(program, ranks, {reduce_s}, request);
    const dtsim::StepDistribution d = dtsim::summarize_steps(steps);
    // every rank waits for the slowest to release the bucket, then for the reduction
    const double expected = compute_s * (1 + v.jitter.sigma * dtsim::expected_max_standard_normal(ranks)) + reduce_s;
    CHECK(d.mean_s == Approx(expected).epsilon(0.02));
    CHECK(d.mean_s > compute_s + reduce_s);  // the slowest of P draws is slower than the mean draw
    CHECK(d.p50_s <= d.p90_s);
    CHECK(d.p90_s <= d.p99_s);
  }
  // the numerical order statistics themselves: E[max of 2 standard normals] = 1/sqrt(pi)
  CHECK(dtsim::expected_max_standard_normal(2) == Approx(1 / std::sqrt(M_PI)).epsilon(1e-6));
  CHECK(dtsim::expected_max_standard_normal(1) == Approx(0).margin(1e-9));
}

TEST_CASE("replayed step times keep the ranks' times of one moment together") {
  // two moments: every rank at its usual speed, then every rank twice as slow (a machine that slowed all at once)
  const std::vector<std::vector<double>> times = {{1, 2}, {1, 2}, {1, 2}, {1, 2}};
  dtsim::Variability v;
  v.jitter.distribution = dtsim::JitterDistribution::replay;
  v.jitter.rank_factors = dtsim::replay_factors(times);
  REQUIRE(v.jitter.rank_factors[0][0] == Approx(1 / 1.5));  // over the mean of all times
  CHECK(v.jitter.describe() == "replay of 4 ranks x 2 measured times per step");
  const double compute_s = 0.1, reduce_s = 0.02;
  const dtsim::TrainingProgram program = one_bucket_program(compute_s);
  dtsim::SamplingRequest request;
  request.samples = 2;
  request.variability = &v;
  const dtsim::StepDistribution replayed =
      dtsim::summarize_steps(dtsim::sample_steps_fast(program, 4, {reduce_s}, request));
  CHECK(replayed.min_s == Approx(compute_s / 1.5 + reduce_s));
  CHECK(replayed.max_s == Approx(2 * compute_s / 1.5 + reduce_s));
  CHECK(replayed.median_s == Approx(0.5 * (replayed.min_s + replayed.max_s)));
  // the same times drawn independently: a step waits for its slowest of 4 draws, slow in 15 of 16 steps
  v.jitter.distribution = dtsim::JitterDistribution::empirical;
  v.jitter.factors = dtsim::empirical_factors({1, 2, 1, 2, 1, 2, 1, 2});
  request.samples = 400;
  const dtsim::StepDistribution drawn =
      dtsim::summarize_steps(dtsim::sample_steps_fast(program, 4, {reduce_s}, request));
  CHECK(drawn.median_s == Approx(replayed.max_s));
  CHECK(drawn.mean_s > replayed.mean_s + 0.3 * (replayed.max_s - replayed.mean_s));
  // a rank beyond the rows takes row r mod rows; nothing is drawn, so the seed changes nothing
  v.jitter.distribution = dtsim::JitterDistribution::replay;
  v.jitter.rank_factors = dtsim::replay_factors({{1, 3}, {2, 2}});
  CHECK(dtsim::jitter_factor(v.jitter, 1, 0, 5, 0, 0) == Approx(1.0));  // rank 5: row 1, column 0
  CHECK(dtsim::jitter_factor(v.jitter, 9, 1, 4, 0, 0) == Approx(1.5));  // rank 4: row 0, column 1
  CHECK(dtsim::jitter_factor(v.jitter, 9, 1, 4, 1, 0) == Approx(0.5));  // its next step: column 0 again
  CHECK_THROWS_WITH(dtsim::replay_factors({{1, 2}, {1}}), Catch::Contains("rank 1 has 1 times, rank 0 2"));
  CHECK_THROWS_WITH(dtsim::replay_factors({{1, -2}}), Catch::Contains("positive and finite"));
  CHECK_THROWS(dtsim::replay_factors({}));
}

TEST_CASE("without jitter every sample is the step simulated without it, exactly") {
  const dtsim::Scenario sc = scenario_with(nullptr);
  for (const dtsim::Backend backend : {dtsim::Backend::simgrid, dtsim::Backend::flow}) {
    const dtsim::Prediction plain = dtsim::predict_step(sc.setup, sc.cluster, 16, "ring", nullptr, backend);
    dtsim::StepSampling sampling;
    sampling.samples = 5;
    const dtsim::Prediction sampled =
        dtsim::predict_step(sc.setup, sc.cluster, 16, "ring", nullptr, backend, std::nullopt, true, sampling);
    CHECK(sampled.step.step_s == plain.step.step_s);
    REQUIRE(sampled.distribution.samples == 5);
    CHECK(sampled.distribution.min_s == Approx(plain.step.step_s).epsilon(1e-9));
    CHECK(sampled.distribution.max_s == Approx(plain.step.step_s).epsilon(1e-9));
    CHECK(sampled.samples_per_s == Approx(plain.samples_per_s).epsilon(1e-9));
  }
}

TEST_CASE("the fast sampler matches the exact one (every rank's step simulated again) within 2%") {
  const dtsim::Scenario sc = scenario_with({{"jitter", {{"distribution", "normal"}, {"sigma", 0.05}}}});
  for (const std::string algorithm : {"ring", "tree", "ps"}) {
    INFO(algorithm);
    dtsim::StepSampling sampling;
    sampling.samples = 40;
    sampling.seed = 3;
    sampling.sampler = dtsim::Sampler::exact;
    const dtsim::Prediction exact = dtsim::predict_step(sc.setup, sc.cluster, 16, algorithm, nullptr,
                                                        dtsim::Backend::flow, std::nullopt, true, sampling);
    sampling.sampler = dtsim::Sampler::fast;
    const dtsim::Prediction fast = dtsim::predict_step(sc.setup, sc.cluster, 16, algorithm, nullptr,
                                                       dtsim::Backend::flow, std::nullopt, true, sampling);
    CHECK(fast.distribution.mean_s == Approx(exact.distribution.mean_s).epsilon(0.02));
    CHECK(fast.distribution.p90_s == Approx(exact.distribution.p90_s).epsilon(0.03));
    CHECK(exact.distribution.mean_s > exact.step.step_s);  // jitter costs a synchronous step time
  }
}

TEST_CASE("per-rank noise without jitter or slow nodes leaves the step as it was (classes of ranks or not)") {
  const dtsim::Scenario sc = scenario_with(nullptr);
  dtsim::Scenario slow1 = sc;
  slow1.setup.variability.slow.nodes = {0};
  slow1.setup.variability.slow.slowdown = 1.0;  // inactive: exactly the plain step
  const dtsim::Prediction a = dtsim::predict_step(sc.setup, sc.cluster, 32, "ring", nullptr, dtsim::Backend::flow);
  const dtsim::Prediction b =
      dtsim::predict_step(slow1.setup, slow1.cluster, 32, "ring", nullptr, dtsim::Backend::flow);
  CHECK(a.step.step_s == b.step.step_s);
}

TEST_CASE("a slow node slows every synchronous step by its share of compute") {
  const dtsim::Scenario sc = scenario_with(nullptr);
  const dtsim::Scenario slow = scenario_with({{"slow_nodes", {{"nodes", {1}}, {"slowdown", 1.5}}}});
  for (const dtsim::Backend backend : {dtsim::Backend::simgrid, dtsim::Backend::flow}) {
    const dtsim::Prediction even = dtsim::predict_step(sc.setup, sc.cluster, 16, "ring", nullptr, backend);
    const dtsim::Prediction straggling = dtsim::predict_step(slow.setup, slow.cluster, 16, "ring", nullptr, backend);
    const double compute = even.step.forward_s + even.step.backward_s + even.step.optimizer_s;
    // the slow node's ranks compute 1.5x as long and everyone waits for their last bucket
    CHECK(straggling.step.step_s > even.step.step_s + 0.4 * compute);
    CHECK(straggling.step.step_s < even.step.step_s + 0.5 * compute + 1e-9);
    // a node outside the configuration (4 GPUs: node 0 only) changes nothing
    const dtsim::Prediction small = dtsim::predict_step(slow.setup, slow.cluster, 4, "ring", nullptr, backend);
    CHECK(small.step.step_s == dtsim::predict_step(sc.setup, sc.cluster, 4, "ring", nullptr, backend).step.step_s);
  }
}

TEST_CASE("draws are counters: the same seed gives the same numbers, another seed others") {
  dtsim::ComputeJitter j;
  j.distribution = dtsim::JitterDistribution::lognormal;
  j.sigma = 0.1;
  CHECK(dtsim::jitter_factor(j, 5, 1, 2, 3, 4) == dtsim::jitter_factor(j, 5, 1, 2, 3, 4));
  CHECK(dtsim::jitter_factor(j, 5, 1, 2, 3, 4) != dtsim::jitter_factor(j, 6, 1, 2, 3, 4));
  double sum = 0;  // lognormal factors have mean 1
  for (int i = 0; i < 20000; ++i)
    sum += dtsim::jitter_factor(j, 9, 0, static_cast<std::uint64_t>(i), 0, 0);
  CHECK(sum / 20000 == Approx(1.0).epsilon(0.005));
  const std::vector<double> scale = dtsim::rank_slowdowns({0.25, {}, 2.0}, 32, 4, 1, 0);
  CHECK(std::count(scale.begin(), scale.end(), 2.0) == 8);  // 2 of the 8 nodes, 4 ranks each
  CHECK(scale == dtsim::rank_slowdowns({0.25, {}, 2.0}, 32, 4, 1, 0));
}

TEST_CASE("predict --samples: the same seed prints the same bytes, and the distribution is in the JSON", "[cli]") {
  const std::string file = write_scenario("normal.json", {{"jitter", {{"distribution", "normal"}, {"sigma", 0.03}}}});
  const std::string command = "predict " + file + " --algorithm ring,tree --samples 30 --seed ";
  const auto a = run_dtsim(command + "4");
  const auto b = run_dtsim(command + "4");
  const auto c = run_dtsim(command + "5");
  REQUIRE(a.exit_code == 0);
  CHECK(a.output == b.output);
  CHECK(a.output != c.output);
  // the JSON too, but for what each simulation cost in wall time (sim_wall_s)
  const auto without_wall_time = [](const std::string& text) {
    nlohmann::json doc = nlohmann::json::parse(text);
    for (nlohmann::json& r : doc["results"])
      r.erase("sim_wall_s");
    return doc;
  };
  const auto json_a = run_dtsim(command + "4 --json");
  const auto json_b = run_dtsim(command + "4 --json");
  REQUIRE(json_a.exit_code == 0);
  CHECK(without_wall_time(json_a.output) == without_wall_time(json_b.output));
  const nlohmann::json doc = nlohmann::json::parse(json_a.output);
  const nlohmann::json& eight = doc["results"][1];
  REQUIRE(eight["accelerators"] == 8);
  const nlohmann::json& d = eight["step_distribution"];
  CHECK(d["samples"] == 30);
  CHECK(d["seed"] == 4);
  CHECK(d["mean_s"].get<double>() > eight["step_time_s"].get<double>());
  CHECK(d["p99_s"].get<double>() >= d["p50_s"].get<double>());
  int counted = 0;
  for (const nlohmann::json& bin : d["histogram"])
    counted += bin["count"].get<int>();
  CHECK(counted == 30);
  CHECK(a.output.find("p99") != std::string::npos);
}

TEST_CASE("impossible variability is refused with exit 2 naming the field") {
  struct Case {
    nlohmann::json variability;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{{"jitter", {{"distribution", "normal"}, {"sigma", -0.1}}}}, "scenario.variability.jitter.sigma"},
      {{{"jitter", {{"distribution", "normal"}}}}, "scenario.variability.jitter.sigma"},
      {{{"jitter", {{"distribution", "empirical"}, {"times", nlohmann::json::array()}}}},
       "scenario.variability.jitter.times"},
      {{{"jitter", {{"distribution", "empirical"}, {"times", {0.1, -1}}}}}, "scenario.variability.jitter.times[1]"},
      // (1e308 s: the mean overflowed, and each step was reported as 8 ms against 175 ms simulated)
      {{{"jitter", {{"distribution", "empirical"}, {"times", {1e308, 1e308}}}}},
       "scenario.variability.jitter.times[0]: expected a positive number of seconds up to 1e9, got 1e+308"},
      {{{"slow_nodes", {{"fraction", 1.5}, {"slowdown", 2}}}}, "scenario.variability.slow_nodes.fraction"},
      {{{"slow_nodes", {{"nodes", {2}}}}}, "scenario.variability.slow_nodes.slowdown"},
      {{{"background_load", 1}}, "scenario.variability.background_load"},
      {{{"jitter", {{"distribution", "gamma"}}}}, "scenario.variability.jitter.distribution"},
      {{{"jitter", {{"distribution", "replay"}}}}, "scenario.variability.jitter.rank_times: replay needs"},
      {{{"jitter", {{"distribution", "empirical"}, {"times", {0.1, 0.2}}, {"rank_times", {{0.1}}}}}},
       "scenario.variability.jitter.rank_times: only for distribution replay"},
      {{{"jitter", {{"distribution", "replay"}, {"per", "kernel"}, {"rank_times", {{0.1}}}}}},
       "scenario.variability.jitter.per: replay scales a rank's whole step; accepted: step"},
      {{{"jitter", {{"distribution", "replay"}, {"rank_times", {{0.1, 0.2}, {0.1}}}}}},
       "scenario.variability.jitter.rank_times[1]: has 1 times, scenario.variability.jitter.rank_times[0] 2"},
      {{{"jitter", {{"distribution", "replay"}, {"rank_times", {{0.1, "x"}}}}}},
       "scenario.variability.jitter.rank_times[0][1]: expected a positive number of seconds"},
      {{{"jitter", {{"distribution", "replay"}, {"rank_times", 0.1}}}},
       "scenario.variability.jitter.rank_times: expected a list per rank"},
      // nodes the run does not have (8 accelerators of v100-nvlink-edr: 2 nodes), or named twice
      {{{"slow_nodes", {{"nodes", {0, 2}}, {"slowdown", 2}}}},
       "scenario.variability.slow_nodes.nodes[1]: node 2, but the largest size (scenario.accelerators: 8 "
       "accelerators) has 2 nodes, numbered from 0"},
      {{{"slow_nodes", {{"nodes", {1, 1}}, {"slowdown", 2}}}},
       "scenario.variability.slow_nodes.nodes[1]: node 1 is listed twice"},
      {{{"devices", {{{"device", "a100"}, {"nodes", {5}}}}}}, "scenario.variability.devices[0].nodes[0]: node 5"},
      {{{"devices", {{{"device", "a100"}, {"fraction", 0.7}}, {{"device", "h100"}, {"fraction", 0.6}}}}},
       "scenario.variability.devices[1].fraction: the devices' fractions add up to 1.3"},
      {{{"devices", {{{"device", "a100"}, {"nodes", {1}}}, {{"device", "h100"}, {"nodes", {0, 1}}}}}},
       "scenario.variability.devices[1].nodes[1]: node 1 already has a device from an earlier entry"},
  };
  for (const Case& c : cases) {
    INFO(c.variability.dump());
    const auto r = run_dtsim("predict " + write_scenario("bad.json", c.variability));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(c.names) != std::string::npos);
  }
  const std::string ok = write_scenario("ok.json", {{"jitter", {{"distribution", "normal"}, {"sigma", 0.01}}}});
  for (const std::string flags : {"--samples 0", "--samples x", "--seed -1", "--sampler slow"}) {
    const auto r = run_dtsim("predict " + ok + " " + flags);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(flags.substr(0, flags.find(' '))) != std::string::npos);
  }
  // the sizes a flag sets are checked too: at 4 accelerators (one node) there is no node 1
  const std::string second = write_scenario("second.json", {{"slow_nodes", {{"nodes", {1}}, {"slowdown", 2}}}});
  const auto one_node = run_dtsim("predict " + second + " --accelerators 1,4");
  CHECK(one_node.exit_code == 2);
  CHECK(one_node.output.find("scenario.variability.slow_nodes.nodes[0]: node 1, but the largest size "
                             "(--accelerators: 4 accelerators) has 1 node") != std::string::npos);
  CHECK(run_dtsim("predict " + second + " --accelerators 1,8").exit_code == 0);
  // a size listed twice would print the same row twice
  nlohmann::json twice = nlohmann::json::parse(std::ifstream(ok));
  twice["scenario"]["accelerators"] = {1, 8, 8};
  const std::string twice_file =
      (std::filesystem::temp_directory_path() / "dtsim-test-variability-twice.json").string();
  std::ofstream(twice_file) << twice.dump();
  const auto repeated = run_dtsim("predict " + twice_file);
  CHECK(repeated.exit_code == 2);
  CHECK(repeated.output.find("scenario.accelerators: 8 is listed twice") != std::string::npos);
  const auto repeated_flag = run_dtsim("predict " + ok + " --accelerators 1,8,1");
  CHECK(repeated_flag.exit_code == 2);
  CHECK(repeated_flag.output.find("--accelerators: '1,8,1' lists the same value twice") != std::string::npos);
  CHECK_THROWS_AS(dtsim::parse_rate_per_h("0.5"), std::invalid_argument);
  CHECK(dtsim::parse_rate_per_h("24/day") == Approx(1.0));
  CHECK(dtsim::parse_long_seconds("2h") == Approx(7200));
}

TEST_CASE("a scenario replays each rank's measured step times", "[cli]") {
  // 8 accelerators (2 nodes of v100-nvlink-edr); 2 rows: ranks 0, 2, 4, 6 take the first, the others the second
  const std::string file = write_scenario(
      "replay.json", {{"jitter", {{"distribution", "replay"}, {"rank_times", {{0.30, 0.30}, {0.30, 0.60}}}}}});
  const dtsim::Scenario sc = dtsim::load_scenario_file(file, DTSIM_SOURCE_DIR);
  REQUIRE(sc.setup.variability.jitter.rank_factors.size() == 2);
  CHECK(sc.setup.variability.jitter.rank_factors[1][1] == Approx(0.60 / 0.375));
  const auto r = run_dtsim("predict " + file + " --samples 2 --json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json eight = nlohmann::json::parse(r.output)["results"][1];
  REQUIRE(eight["accelerators"] == 8);
  const nlohmann::json& d = eight["step_distribution"];
  // one moment with every rank at 0.8x its mean compute, one with half of them at 1.6x: two different steps
  CHECK(d["max_s"].get<double>() > 1.3 * d["min_s"].get<double>());
}

TEST_CASE("background load leaves the job the rest of the fabric's bandwidth") {
  const dtsim::Scenario idle = scenario_with(nullptr);
  const dtsim::Scenario busy = scenario_with({{"background_load", 0.5}});
  CHECK(busy.cluster.node.nic.bandwidth_Bps == Approx(idle.cluster.node.nic.bandwidth_Bps * 0.5));
  CHECK(busy.cluster.node.intra.bandwidth_Bps == idle.cluster.node.intra.bandwidth_Bps);  // NVLink is the job's
  const dtsim::Prediction a = dtsim::predict_step(idle.setup, idle.cluster, 16, "ring");
  const dtsim::Prediction b = dtsim::predict_step(busy.setup, busy.cluster, 16, "ring");
  CHECK(b.step.comm_s > 1.5 * a.step.comm_s);
}

TEST_CASE("a node of a slower device paces a synchronous step, a faster one does not speed it up", "[cli]") {
  const dtsim::Scenario plain = scenario_with(nullptr);  // V100 nodes
  const dtsim::Scenario slower =
      scenario_with({{"devices", nlohmann::json::array({{{"device", "p100-sxm2-16gb"}, {"nodes", {1}}}})}});
  const dtsim::Scenario faster =
      scenario_with({{"devices", nlohmann::json::array({{{"device", "h100-sxm5-80gb"}, {"nodes", {1}}}})}});
  const double even = dtsim::predict_step(plain.setup, plain.cluster, 16, "ring").step.step_s;
  const dtsim::Prediction p100 = dtsim::predict_step(slower.setup, slower.cluster, 16, "ring");
  const dtsim::Prediction h100 = dtsim::predict_step(faster.setup, faster.cluster, 16, "ring");
  CHECK(p100.step.step_s > 1.3 * even);  // a P100 takes far longer than a V100 for ResNet-50
  CHECK(p100.bottleneck.find("stragglers") != std::string::npos);
  CHECK(h100.step.step_s == Approx(even).epsilon(0.02));  // the V100s still set the pace
  // the same node count, but 4 GPUs (node 0 only): no P100 in it
  CHECK(dtsim::predict_step(slower.setup, slower.cluster, 4, "ring").step.step_s ==
        dtsim::predict_step(plain.setup, plain.cluster, 4, "ring").step.step_s);
  const auto r = run_dtsim(
      "predict " + write_scenario("device-bad.json", {{"devices", nlohmann::json::array({{{"device", "v999"}}})}}));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("scenario.variability.devices[0].device") != std::string::npos);
}

TEST_CASE("bursts of other traffic lengthen the reductions that start inside them") {
  const dtsim::Scenario idle = scenario_with(nullptr);
  const dtsim::Scenario always = scenario_with({{"bursts", {{"load", 0.5}, {"period", "1s"}, {"duration", "1s"}}}});
  const dtsim::Scenario rare = scenario_with({{"bursts", {{"load", 0.5}, {"period", "100s"}, {"duration", "1us"}}}});
  dtsim::StepSampling sampling;
  sampling.samples = 20;
  const auto mean = [&](const dtsim::Scenario& sc) {
    return dtsim::predict_step(sc.setup, sc.cluster, 32, "ring", nullptr, dtsim::Backend::flow, std::nullopt, true,
                               sampling)
        .distribution.mean_s;
  };
  const dtsim::Prediction plain = dtsim::predict_step(idle.setup, idle.cluster, 32, "ring", nullptr,
                                                      dtsim::Backend::flow, std::nullopt, true, sampling);
  CHECK(mean(always) > plain.distribution.mean_s + 0.5 * plain.step.exposed_comm_s);
  CHECK(mean(rare) == Approx(plain.distribution.mean_s).epsilon(1e-9));
  sampling.sampler = dtsim::Sampler::exact;
  CHECK_THROWS_AS(dtsim::predict_step(always.setup, always.cluster, 32, "ring", nullptr, dtsim::Backend::flow,
                                      std::nullopt, true, sampling),
                  std::invalid_argument);
}

TEST_CASE("collective and compare --samples: ranks arriving apart, reproducible, never faster than together", "[cli]") {
  const std::string command = "collective --algorithm ring --ranks 16 --bytes 1MB --backend flow --json";
  const auto together = run_dtsim(command);
  const auto a = run_dtsim(command + " --samples 30 --arrival normal:20us --seed 3");
  const auto b = run_dtsim(command + " --samples 30 --arrival normal:20us --seed 3");
  REQUIRE(together.exit_code == 0);
  REQUIRE(a.exit_code == 0);
  const nlohmann::json ja = nlohmann::json::parse(a.output), jb = nlohmann::json::parse(b.output);
  const nlohmann::json& d = ja["time_distribution"];
  CHECK(d == jb["time_distribution"]);
  CHECK(d["samples"] == 30);
  const double base = nlohmann::json::parse(together.output)["time_s"].get<double>();
  CHECK(d["min_s"].get<double>() >= base);  // a late rank never speeds the ring up
  CHECK(d["mean_s"].get<double>() > base);
  CHECK(d["max_s"].get<double>() < base + 5 * 20e-6 + 1e-9);  // nor delays it by more than the latest arrival
  const auto compared = run_dtsim(
      "compare --algorithms ring,butterfly --ranks 16 --bytes 1KB --backend analytical --samples 10 --arrival "
      "uniform:50us");
  CHECK(compared.exit_code == 0);
  CHECK(compared.output.find("the mean of 10 runs") != std::string::npos);
  for (const std::string bad : {"--samples 10", "--arrival normal:1us", "--samples 5 --arrival gamma:1us",
                                "--samples 5 --arrival normal", "--samples 0 --arrival normal:1us"}) {
    INFO(bad);
    const auto r = run_dtsim("collective --ranks 4 " + bad);
    CHECK(r.exit_code == 2);
    CHECK((r.output.find("--samples") != std::string::npos || r.output.find("--arrival") != std::string::npos));
  }
}

TEST_CASE("with_arrivals: a late rank starts the collective late, and the schedule still verifies") {
  const dtsim::Schedule ring = dtsim::find_algorithm("ring").build(8, 1 << 20, {});
  REQUIRE(ring.compact());
  std::vector<double> flops(8, 0.0);
  flops[3] = 1e-4 * dtsim::NetworkCost{}.compute_flops_per_s;  // rank 3 arrives 100 us late
  const dtsim::Schedule late = dtsim::with_arrivals(ring, flops);
  CHECK(dtsim::verify(late).ok);
  dtsim::FlowOptions o;
  const double on_time = dtsim::run_flow(ring, o).time_s;
  const double delayed = dtsim::run_flow(late, o).time_s;
  CHECK(delayed > on_time + 0.5e-4);
  CHECK(delayed <= on_time + 1e-4 + 1e-9);
  CHECK(dtsim::run_analytical(dtsim::expand(late), dtsim::AnalyticalOptions{}).time_s ==
        Approx(dtsim::run_analytical(late, dtsim::AnalyticalOptions{}).time_s));
}

TEST_CASE("calibrate's step times become an empirical jitter, and a run's failure rates need units", "[cli]") {
  const std::vector<double> times = dtsim::measure_step_times(16, 20);
  REQUIRE(times.size() == 20);
  for (const double t : times)
    CHECK(t > 0);
  // a calibration file that has them, and a scenario that draws from them
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/scenarios/calibrations/epyc-2core-2026-11-22.json");
  nlohmann::json calibration = nlohmann::json::parse(in);
  calibration["calibration"]["compute"]["step_times"] = {{"batch", 16}, {"seconds", times}};
  const auto dir = std::filesystem::temp_directory_path();
  std::ofstream(dir / "dtsim-test-variability-calibration.json") << calibration.dump();
  const std::string file = write_scenario("empirical.json", {{"jitter", {{"distribution", "empirical"}}}});
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  doc["scenario"]["calibration"] = "dtsim-test-variability-calibration.json";
  std::ofstream(file) << doc.dump();
  const dtsim::Scenario sc = dtsim::load_scenario_file(file, DTSIM_SOURCE_DIR);
  REQUIRE(sc.setup.variability.jitter.factors.size() == 20);
  double mean = 0;
  for (const double f : sc.setup.variability.jitter.factors)
    mean += f / 20;
  CHECK(mean == Approx(1.0));
  // without step times in the calibration: refused, naming the field
  doc["scenario"]["calibration"] = "../calibrations/epyc-2core-2026-11-22.json";
  doc["scenario"].erase("calibration");
  std::ofstream(file) << doc.dump();
  const auto refused = run_dtsim("predict " + file);
  CHECK(refused.exit_code == 2);
  CHECK(refused.output.find("scenario.variability.jitter.times") != std::string::npos);
  // failure rates take a unit
  nlohmann::json failing = nlohmann::json::parse(std::ifstream(write_scenario("rates.json", nullptr)));
  failing["scenario"].erase("variability");
  failing["scenario"]["failures"] = {{"gpu", "0.5"}};
  const std::string rates = (dir / "dtsim-test-variability-rates.json").string();
  std::ofstream(rates) << failing.dump();
  const auto unitless = run_dtsim("predict " + rates + " --run 30d");
  CHECK(unitless.exit_code == 2);
  CHECK(unitless.output.find("scenario.failures.gpu") != std::string::npos);
  // a number where a rate with its unit is expected: the path named once
  failing["scenario"]["failures"] = {{"gpu", 0.001}};
  std::ofstream(rates) << failing.dump();
  const auto number = run_dtsim("predict " + rates + " --run 30d");
  CHECK(number.exit_code == 2);
  CHECK(number.output.find("scenario.failures.gpu: expected a string, got 0.001") != std::string::npos);
  CHECK(number.output.find("scenario.failures.gpu: scenario.failures.gpu") == std::string::npos);
  // failures far more often than a checkpoint takes: the run trains nothing and never ends (before: an internal
  // "work_s must be positive" error, and "inf" interruptions)
  failing["scenario"]["failures"] = {{"gpu", "1e300/h"}};  // (beyond one a second: had printed 48-digit percentages)
  std::ofstream(rates) << failing.dump();
  const auto absurd = run_dtsim("predict " + rates + " --run 30d");
  CHECK(absurd.exit_code == 2);
  CHECK(absurd.output.find("scenario.failures.gpu: expected a rate like 1.2e-5/h (per /h, /day or /year), from 0 to "
                           "3600/h") != std::string::npos);
  failing["scenario"]["failures"] = {{"gpu", "3600/h"}};
  std::ofstream(rates) << failing.dump();
  const auto budget = run_dtsim("predict " + rates + " --run 1d --json");
  REQUIRE(budget.exit_code == 0);
  const nlohmann::json budget_doc = nlohmann::json::parse(budget.output);  // (kept: the loop walks into it)
  for (const nlohmann::json& run : budget_doc["run"]["results"]) {
    CHECK(run["useful_samples"].get<double>() == 0);
    CHECK(run["goodput"].get<double>() == 0);
    CHECK(run["wall_s"].get<double>() == Approx(86400.0));
  }
  const auto never = run_dtsim("predict " + rates + " --samples-to-train 1000000 --samples 4");
  REQUIRE(never.exit_code == 0);
  CHECK(never.output.find("unbounded") != std::string::npos);
  CHECK(never.output.find("never") != std::string::npos);
  CHECK(never.output.find("inf ") == std::string::npos);
}

TEST_CASE("predict --run: interruptions, the checkpoint interval beside Young's and Daly's, goodput", "[cli]") {
  const auto r = run_dtsim("predict " + std::string(DTSIM_SOURCE_DIR) +
                           "/scenarios/training/gpt2-xl-dgx-h100.json --algorithm ring --accelerators 1,32 "
                           "--run 30d --json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  const nlohmann::json& runs = doc["run"]["results"];
  REQUIRE(runs.size() == 2);
  for (const nlohmann::json& run : runs) {
    INFO(run.dump());
    CHECK(run["wall_s"].get<double>() == Approx(30 * 86400.0).epsilon(1e-9));  // the budget filled
    CHECK(run["goodput"].get<double>() > 0.9);
    CHECK(run["goodput"].get<double>() < 1.0);
    CHECK(run["expected_interruptions"].get<double>() ==
          Approx(run["wall_s"].get<double>() / run["mtbf_s"].get<double>()));
    // the numeric optimum lies near Daly's estimate when checkpoints are short against the MTBF
    CHECK(run["interval_s"].get<double>() == Approx(run["daly_interval_s"].get<double>()).epsilon(0.05));
  }
  // 32 GPUs on 4 nodes fail about 9 times as often as one GPU on one node (the node's own failures weigh most)
  const double ratio = runs[1]["failures_per_h"].get<double>() / runs[0]["failures_per_h"].get<double>();
  CHECK(ratio > 4);
  CHECK(ratio < 32);
  const auto tokens = run_dtsim("predict --run 30d --tokens 1e9");
  CHECK(tokens.exit_code == 2);
  CHECK(tokens.output.find("give one of them") != std::string::npos);
  const auto cnn = run_dtsim("predict --tokens 1e9");
  CHECK(cnn.exit_code == 2);
  CHECK(cnn.output.find("--samples-to-train") != std::string::npos);
}
