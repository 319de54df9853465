#include "scenarios/train_file.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "algorithms/registry.hpp"
#include "models/compute_model.hpp"
#include "models/devices.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/idx_reader.hpp"
#include "scenarios/json_reader.hpp"

namespace dtsim {
namespace {

constexpr std::array<FieldSpec, 3> compute_fields{{
    choice_field("source", "model",
                 "model: FLOPs of a step over the device's peak x efficiency, plus its per-layer overheads "
                 "(reproducible); calibrated: the kernel's fitted overhead + per-sample time from the `calibration` "
                 "file; measured: the kernel's own wall time on this machine (not reproducible)",
                 "model|calibrated|measured"),
    value_field("device", FieldType::text, "xeon-8380",
                "the compute model's device: a built-in device or a path to a device file, relative to the training "
                "file (dtsim help device-file); its fp32 peak is used"),
    ranged_field("efficiency", FieldType::number, "device", "achieved / peak FLOP/s, replacing the device default",
                 1e-6, 1),
}};

constexpr std::array<FieldSpec, 3> network_fields{{
    value_field("bandwidth", FieldType::bandwidth, "10Gbps", "each host's link bandwidth (a star)"),
    value_field("latency", FieldType::duration, "5us", "one-way latency between two hosts"),
    value_field("reduce_rate", FieldType::bandwidth, "10GBps", "bytes a host sums per second in a reduction"),
}};

constexpr std::array<FieldSpec, 2> straggler_fields{{
    ranged_field("worker", FieldType::integer, "", "the slow worker", 0, 1 << 20),
    ranged_field("slowdown", FieldType::number, "", "its compute time factor", 1, 1e6),
}};

constexpr std::array<FieldSpec, 2> train_jitter_fields{{
    choice_field("distribution", "none",
                 "how a worker's step compute varies: none, normal (time x (1 + sigma Z), at least 0.05x) or lognormal "
                 "(time x exp(sigma Z - sigma^2/2))",
                 "none|normal|lognormal"),
    ranged_field("sigma", FieldType::number, "0", "normal: standard deviation over the mean; lognormal: of the log", 0,
                 1),
}};

constexpr std::array<FieldSpec, 25> train_fields{{
    value_field("name", FieldType::text, "train", "a name for reports"),
    value_field("description", FieldType::text, "(none)", "what the run shows"),
    value_field("data", FieldType::text, "/usr/share/datasets/fashion-mnist",
                "directory of the Fashion-MNIST IDX files (Debian package dataset-fashion-mnist)"),
    ranged_field("layers", FieldType::integer_list, "[784, 95, 10]", "MLP layer sizes: 784 inputs, hidden..., 10", 1,
                 1 << 16),
    ranged_field("seed", FieldType::integer, "1", "initial weights and data order", 0, 9e15),
    ranged_field("workers", FieldType::integer, "8", "simulated workers", 1, 4096),
    choice_field("mode", "allreduce",
                 "allreduce: synchronous, gradients allreduced every step; sync-ps: synchronous parameter server; "
                 "async-ps: asynchronous parameter server; ssp: stale-synchronous parameter server",
                 "allreduce|sync-ps|async-ps|ssp"),
    value_field("algorithm", FieldType::text, "ring", "allreduce mode: any allreduce algorithm of dtsim"),
    ranged_field("staleness_bound", FieldType::integer, "2", "ssp: how many steps a worker may run ahead", 0, 1 << 20),
    ranged_field("batch", FieldType::integer, "256",
                 "samples per synchronous step over all workers (each takes batch / workers, also in async modes)", 1,
                 60000),
    ranged_field("learning_rate", FieldType::number, "0.01", "the base learning rate", 0, 100),
    ranged_field("momentum", FieldType::number, "0.9", "SGD momentum", 0, 0.999999),
    ranged_field("weight_decay", FieldType::number, "1e-4", "L2 weight decay", 0, 1),
    ranged_field("linear_scaling_base", FieldType::integer, "0",
                 "when > 0: learning rate x batch / this (Goyal et al. 2017's linear scaling rule)", 0, 60000),
    ranged_field("warmup_epochs", FieldType::number, "0",
                 "ramp the learning rate linearly from the base to the scaled one over these epochs (needs "
                 "linear_scaling_base > 0)",
                 0, 1000),
    ranged_field("epochs", FieldType::number, "5", "how long to train", 1e-6, 1000),
    ranged_field("eval_every_epochs", FieldType::number, "0.5", "test accuracy is measured this often", 1e-6, 1000),
    ranged_field("target_accuracy", FieldType::number, "0.85", "the accuracy time-to-accuracy is measured to", 0, 1),
    object_field("compute", false, "the simulated compute time of a worker's step", compute_fields),
    object_field("network", false, "the star network between workers and servers", network_fields),
    object_list_field("stragglers", "workers whose compute takes `slowdown` times as long (each worker once)",
                      straggler_fields),
    object_field("jitter", false,
                 "each worker's step compute drawn anew every step from the seed (docs/variability.md)",
                 train_jitter_fields),
    ranged_field("backup_workers", FieldType::integer, "0",
                 "sync-ps: the server steps on the first workers - b gradients of each step and drops the b late ones "
                 "(Chen et al. 2016, backup workers)",
                 0, 4095),
    value_field("calibration", FieldType::text, "(none)",
                "a calibration file (dtsim calibrate), relative to this file: compute source calibrated uses its SGD "
                "kernel fit; its network fits set the star's latency and bandwidth (unless given) and correct them "
                "by message size"),
    ranged_field("step_overhead", FieldType::duration, "device",
                 "fixed time per step, replacing the eager runtime's kernel dispatch (6 kernels a layer) and step cost",
                 0, unbounded),
}};

constexpr std::array<FieldSpec, 1> train_document_fields{{
    object_field("train", true, "the training run", train_fields),
}};

}  // namespace

TrainScenario parse_train_scenario(const nlohmann::json& document, const std::string& base_dir,
                                   const std::string& data_dir) {
  const JsonObject root(document, "", train_document_fields);
  const JsonObject o = root.object("train");
  TrainScenario sc;
  TrainConfig& c = sc.config;
  sc.name = o.text("name");
  sc.description = o.text("description");
  sc.data_directory = o.text("data");
  c.layers.clear();
  for (long long size : o.integer_list("layers"))
    c.layers.push_back(static_cast<int>(size));
  if (c.layers.size() < 2 || c.layers.front() != 784 || c.layers.back() != 10) {
    throw ScenarioError(o.path_of("layers") + ": expected 784 inputs first and 10 classes last, e.g. [784, 95, 10]");
  }
  c.seed = static_cast<std::uint64_t>(o.integer("seed"));
  c.workers = static_cast<int>(o.integer("workers"));
  const std::string mode = o.choice("mode");
  c.mode = mode == "allreduce"  ? TrainMode::allreduce
           : mode == "sync-ps"  ? TrainMode::sync_ps
           : mode == "async-ps" ? TrainMode::async_ps
                                : TrainMode::ssp;
  c.algorithm = o.text("algorithm");
  try {
    if (find_algorithm(c.algorithm).switch_helpers) {
      throw std::invalid_argument(c.algorithm +
                                  " reduces inside a switch (NVSwitch or SHARP), and train's star network has none; "
                                  "accepted: an allreduce that runs on the workers, e.g. ring, tree or butterfly");
    }
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(o.path_of("algorithm") + ": " + e.what());
  }
  if (o.has("algorithm") && c.mode != TrainMode::allreduce) {
    throw ScenarioError(o.path_of("algorithm") + ": only for mode \"allreduce\"");
  }
  c.staleness_bound = static_cast<int>(o.integer("staleness_bound"));
  if (o.has("staleness_bound") && c.mode != TrainMode::ssp) {
    throw ScenarioError(o.path_of("staleness_bound") + ": only for mode \"ssp\"");
  }
  c.batch = static_cast<int>(o.integer("batch"));
  if (c.batch % c.workers != 0) {
    throw ScenarioError(o.path_of("batch") + ": a batch of " + std::to_string(c.batch) +
                        " does not split evenly over " + std::to_string(c.workers) + " workers");
  }
  c.sgd = SgdSettings{o.number("learning_rate"), o.number("momentum"), o.number("weight_decay")};
  const auto base = static_cast<int>(o.integer("linear_scaling_base"));
  c.linear_scaling = base > 0;
  c.base_batch = base > 0 ? base : c.batch;
  c.warmup_epochs = o.number("warmup_epochs");
  if (c.warmup_epochs > 0 && !c.linear_scaling) {  // (a ramp from the base rate to itself: it had been ignored)
    throw ScenarioError(o.path_of("warmup_epochs") +
                        ": ramps to the scaled learning rate, so it needs linear_scaling_base > 0");
  }
  c.epochs = o.number("epochs");
  c.eval_every_epochs = o.number("eval_every_epochs");
  c.target_accuracy = o.number("target_accuracy");

  const JsonObject compute = o.object("compute");
  sc.compute_source = compute.choice("source");
  Device device;
  try {
    device = load_named_device(compute.text("device"), base_dir, data_dir);
  } catch (const ScenarioError& e) {
    throw ScenarioError(compute.path_of("device") + ": " + e.what());
  }
  sc.device = device.name;
  if (compute.has("efficiency")) device.efficiency = compute.number("efficiency");
  const auto layers = static_cast<double>(c.layers.size() - 1);
  // eager PyTorch: each layer's forward launches 2 kernels (GEMM, bias and activation), its backward 4, each costing
  // the slower of the host's dispatch and the device's launch; plus the runtime's per-step cost (models/compute_model)
  const RuntimeCosts eager = runtime_costs(Runtime::eager);
  c.step_overhead_s = o.has("step_overhead")
                          ? o.seconds("step_overhead")
                          : layers * 6 * std::max(eager.host_s_per_kernel, device.kernel_launch_s) + eager.step_s;
  c.seconds_per_sample = sc.compute_source == "measured" ? -1.0
                                                         : Mlp::flops_per_sample_of(c.layers) /
                                                               (device.peak_flops(Precision::fp32) * device.efficiency);

  const JsonObject network = o.object("network");
  c.network.bandwidth_Bps = network.bandwidth_Bps("bandwidth");
  c.network.alpha_s = network.seconds("latency");
  c.network.reduce_Bps = network.bandwidth_Bps("reduce_rate");
  if (o.has("calibration")) {
    std::filesystem::path file(o.text("calibration"));
    if (file.is_relative()) file = std::filesystem::path(base_dir) / file;
    Calibration calibration;
    try {
      calibration = load_calibration_file(file.string());
    } catch (const ScenarioError& e) {
      throw ScenarioError(o.path_of("calibration") + ": " + e.what());
    }
    if (sc.compute_source == "calibrated") {
      // the fit is of the 784-95-10 step: scale its per-sample cost by the FLOPs of these layers
      const double reference = Mlp::flops_per_sample_of({784, 95, 10});
      c.seconds_per_sample = calibration.kernel_per_sample_s * Mlp::flops_per_sample_of(c.layers) / reference;
      if (!o.has("step_overhead")) c.step_overhead_s = calibration.kernel_overhead_s;
    }
    if (!calibration.network.empty()) {
      const NetworkRange reference = reference_network(calibration.network);
      if (!network.has("latency")) c.network.alpha_s = reference.alpha_s;
      if (!network.has("bandwidth")) c.network.bandwidth_Bps = reference.bandwidth_Bps;
      c.network_factors = network_factors(calibration.network);
    }
    if (!network.has("reduce_rate")) c.network.reduce_Bps = calibration.reduce_Bps;
  } else if (sc.compute_source == "calibrated") {
    throw ScenarioError(compute.path_of("source") + ": \"calibrated\" needs a calibration file (train.calibration)");
  }

  const std::vector<JsonObject> stragglers = o.objects("stragglers");
  if (!stragglers.empty()) c.slowdown.assign(static_cast<std::size_t>(c.workers), 1.0);
  std::vector<char> slowed(stragglers.empty() ? 0 : static_cast<std::size_t>(c.workers), 0);
  for (const JsonObject& s : stragglers) {
    const long long worker = s.integer("worker");
    if (worker >= c.workers) {
      throw ScenarioError(s.path_of("worker") + ": expected a worker in [0, " + std::to_string(c.workers - 1) +
                          "], got " + std::to_string(worker));
    }
    if (slowed[static_cast<std::size_t>(worker)]++ != 0) {  // (the last had silently won)
      throw ScenarioError(s.path_of("worker") + ": worker " + std::to_string(worker) +
                          " is listed twice (one entry a worker, with its slowdown)");
    }
    c.slowdown[static_cast<std::size_t>(worker)] = s.number("slowdown");
  }
  const JsonObject jitter = o.object("jitter");
  const std::string distribution = jitter.choice("distribution");
  c.jitter.distribution = distribution == "normal"      ? JitterDistribution::normal
                          : distribution == "lognormal" ? JitterDistribution::lognormal
                                                        : JitterDistribution::none;
  c.jitter.sigma = jitter.number("sigma");
  if (c.jitter.active() && c.jitter.sigma <= 0) {
    throw ScenarioError(jitter.path_of("sigma") + ": " + distribution + " needs sigma > 0");
  }
  if (!c.jitter.active() && jitter.has("sigma")) {
    throw ScenarioError(jitter.path_of("sigma") + ": only with distribution normal or lognormal");
  }
  c.backup_workers = static_cast<int>(o.integer("backup_workers"));
  if (c.backup_workers > 0 && c.mode != TrainMode::sync_ps) {
    throw ScenarioError(o.path_of("backup_workers") + ": only for mode \"sync-ps\"");
  }
  if (c.backup_workers >= c.workers) {
    throw ScenarioError(o.path_of("backup_workers") + ": expected fewer than the " + std::to_string(c.workers) +
                        " workers");
  }
  return sc;
}

TrainScenario load_train_file(const std::string& path, const std::string& data_dir) {
  return parse_json_file(path, [&](const nlohmann::json& document) {
    return parse_train_scenario(document, std::filesystem::path(path).parent_path().string(), data_dir);
  });
}

std::string train_fields_markdown() { return fields_markdown("train", train_fields); }

}  // namespace dtsim
