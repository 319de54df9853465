#include "cli/explanation.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "algorithms/options.hpp"
#include "cli/flags.hpp"
#include "models/parallel.hpp"
#include "models/variability.hpp"
#include "reports/format.hpp"

namespace dtsim::cli {
namespace {

std::string describe_size(const StepRequest& r) {
  return std::to_string(r.accelerators) + " accelerators" + (r.layout ? ", " + r.layout->describe() : "");
}

// simulate_step with predict's error messages: a configuration the scenario cannot run is the user's to fix.
StepResult run(const TrainingSetup& setup, const ClusterSpec& cluster, const StepRequest& request,
               const std::string& where) {
  try {
    return simulate_step(setup, cluster, request);
  } catch (const OptionError& e) {
    throw UsageError(where + ": " + request.algorithm + " on " + std::to_string(request.accelerators) +
                     " accelerators: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(where + ": " + describe_size(request) + ": " + e.what());
  }
}

// A what-if: the configuration at the largest size with one thing changed (or `invalid` saying why it cannot be).
struct WhatIf {
  std::string what;
  TrainingSetup setup;
  ClusterSpec cluster;
  StepRequest request;
  std::string invalid;
  bool changes_memory = true;  // false: it cannot make a configuration that does not fit fit
};

bool has_tensor_layers(const Model& model) {
  return std::any_of(model.layers.begin(), model.layers.end(), [](const Layer& l) { return tensor_split(l); });
}

// The largest divisor of n that is at most `most` (at least 1).
int largest_divisor_up_to(int n, int most) {
  for (int m = std::min(n, most); m > 1; --m) {
    if (n % m == 0) return m;
  }
  return 1;
}

// The configuration with the layout `to` in place of the one it has (plain data parallelism is D x 1 x 1), at the
// same size and the same global batch (weak scaling: the batch per accelerator, and so the global batch, stays; a
// replica of T' x P' accelerators takes its share), micro-batches kept
// where they still divide the replica's batch (a new pipeline gets 4 per stage where the batch allows, as --search).
WhatIf layout_change(const std::string& what, const TrainingSetup& setup, const ClusterSpec& cluster,
                     const StepRequest& as_is, long long global_batch, ParallelLayout to) {
  WhatIf w{what, setup, cluster, as_is, "", true};
  const int n = as_is.accelerators;
  const int split = to.context * to.tensor * to.pipeline;
  if (n % split != 0) {
    w.invalid = std::to_string(n) + " accelerators are not a multiple of " + (to.context > 1 ? "context x " : "") +
                "tensor x pipeline = " + std::to_string(split);
    return w;
  }
  to.data = n / split;
  if (const std::string why = expert_layout_problem(setup.model, to); !why.empty()) {
    w.invalid = why;
    return w;
  }
  if (const std::string why = context_layout_problem(setup.model, to); !why.empty()) {
    w.invalid = why;
    return w;
  }
  if (global_batch % to.data != 0) {
    w.invalid = "the global batch of " + std::to_string(global_batch) + " does not split over " +
                std::to_string(to.data) + " replicas";
    return w;
  }
  if (global_batch / to.data > std::numeric_limits<int>::max()) {
    w.invalid = "a replica's batch of " + std::to_string(global_batch / to.data) + " samples is too large";
    return w;
  }
  const auto replica = static_cast<int>(global_batch / to.data);
  const int before = as_is.layout ? as_is.layout->pipeline : 1;
  if (to.pipeline > 1 && to.pipeline != before && to.micro_batches < to.pipeline) {
    to.micro_batches = largest_divisor_up_to(replica, 4 * to.pipeline);
  } else if (replica % to.micro_batches != 0) {
    to.micro_batches = largest_divisor_up_to(replica, to.micro_batches);
  }
  w.request.layout = to;
  w.what += " (" + to.describe() + (setup.scaling == ScalingMode::weak ? "; the same global batch of " : "; batch ") +
            std::to_string(global_batch) + ")";
  return w;
}

std::vector<WhatIf> what_ifs(const Scenario& sc, const StepRequest& as_is, const StepResult& as_is_result) {
  const TrainingSetup& setup = sc.setup;
  const ClusterSpec& cluster = sc.cluster;
  const std::string& algorithm = as_is.algorithm;
  std::vector<WhatIf> out;
  // what-ifs that leave each accelerator's memory as it is
  auto same = [&](const std::string& what) { return WhatIf{what, setup, cluster, as_is, "", false}; };
  // with one replica there is no gradient allreduce, and with one accelerator no network, to change
  const int replicas = as_is.layout ? as_is.layout->replicas() : as_is.accelerators;
  for (const char* other : {"hierarchical", "ring"}) {
    if (algorithm == other || replicas < 2) continue;
    WhatIf w = same(std::string(other) + " allreduce instead of " + algorithm);
    w.request.algorithm = other;
    out.push_back(w);
  }
  const Variability& v = setup.variability;
  if (v.jitter.active() && !as_is.layout) {  // re-simulated without it: what jitter costs at this size
    WhatIf w = same("no compute jitter (now " + v.jitter.describe() + ")");
    w.setup.variability.jitter = ComputeJitter{};
    out.push_back(w);
  }
  if (v.slow.active() && !as_is.layout) {
    WhatIf w = same("no slow nodes (now x" + format_fixed(v.slow.slowdown, 2) + ")");
    w.setup.variability.slow = SlowNodes{};
    out.push_back(w);
  }
  if (!v.devices.empty() && !as_is.layout) {
    WhatIf w = same("every node a " + setup.device.name + " (now " + describe(v) + ")");
    w.setup.variability.devices.clear();
    out.push_back(w);
  }
  if (v.bursts.active() && !as_is.layout && as_is.accelerators > 1) {
    WhatIf w = same("no bursts of other traffic");
    w.setup.variability.bursts = TrafficBursts{};
    out.push_back(w);
  }
  if (v.background_load > 0 && as_is.accelerators > 1) {
    WhatIf w = same("no background traffic (now " + format_fixed(100 * v.background_load, 0) +
                    "% of NIC and fabric bandwidth)");
    const double back = 1 / (1 - v.background_load);
    w.cluster.node.nic.bandwidth_Bps *= back;
    w.cluster.fabric.link.bandwidth_Bps *= back;
    w.cluster.fabric.global_link.bandwidth_Bps *= back;
    w.setup.variability.background_load = 0;
    out.push_back(w);
  }
  if (as_is.accelerators > 1) {
    WhatIf w = same("doubling NIC and fabric bandwidth");
    w.cluster.node.nic.bandwidth_Bps *= 2;
    w.cluster.fabric.link.bandwidth_Bps *= 2;
    w.cluster.fabric.global_link.bandwidth_Bps *= 2;
    out.push_back(w);
  }
  if (setup.scaling == ScalingMode::weak) {
    WhatIf w =
        same("per-accelerator batch " + std::to_string(2 * setup.batch) + " instead of " + std::to_string(setup.batch));
    w.setup.batch *= 2;
    w.changes_memory = true;
    out.push_back(w);
  }
  if (setup.scaling == ScalingMode::weak && !as_is.layout && as_is.accelerators > 1) {
    // the same micro-batch, the gradients reduced and the optimizer run once per twice as many samples
    WhatIf w = same("gradient accumulation over " + std::to_string(2 * setup.accumulation) +
                    " micro-batches instead of " + std::to_string(setup.accumulation));
    w.setup.accumulation *= 2;
    out.push_back(w);
  }
  if (setup.framework != FrameworkPreset::none && replicas > 1) {
    WhatIf w = same("gradient buckets of " + format_bytes(static_cast<std::uint64_t>(setup.bucket_bytes / 2)) +
                    " instead of " + format_bytes(static_cast<std::uint64_t>(setup.bucket_bytes)));
    w.setup.bucket_bytes /= 2;
    out.push_back(w);
  }
  // NCHW tensors whose convolutions transpose (16-bit math): what channels-last would save
  const bool transposes = std::any_of(setup.model.layers.begin(), setup.model.layers.end(), [&](const Layer& l) {
    return layout_transposes(l, setup.device, setup.compute).forward_kernels > 0;
  });
  if (transposes) {
    WhatIf w = same("channels-last (NHWC) tensors instead of NCHW");
    w.setup.compute.memory_format = MemoryFormat::nhwc;
    out.push_back(w);
  }
  if (setup.input.enabled) {
    WhatIf w = same("twice the input-pipeline cores");
    w.setup.input.cores *= 2;
    out.push_back(w);
  }
  // layout changes, at the same size and global batch
  const int n = as_is.accelerators;
  if (n < 2) return out;
  const long long global = as_is_result.global_batch();
  ParallelLayout base;
  if (as_is.layout) {
    base = *as_is.layout;
  } else {
    base.data = n;
  }
  const int per_node = cluster.node.accelerators;
  const auto layers = static_cast<int>(setup.model.layers.size());
  auto change = [&](const std::string& what, const ParallelLayout& to) {
    out.push_back(layout_change(what, setup, cluster, as_is, global, to));
  };
  auto impossible = [&](const std::string& what, const std::string& why) {
    WhatIf w = same(what);
    w.invalid = why;
    w.changes_memory = true;  // a layout change
    out.push_back(w);
  };
  const std::string tensor_what =
      "tensor parallelism " + std::to_string(2 * base.tensor) + " instead of " + std::to_string(base.tensor);
  if (!has_tensor_layers(setup.model)) {
    impossible(tensor_what, setup.model.name + " has no layers that tensor parallelism splits (transformer layers)");
  } else if (!tensor_fits_nodes(2 * base.tensor, per_node)) {
    impossible(tensor_what,
               "it must divide a node's " + std::to_string(per_node) + " accelerators or be a multiple of them");
  } else {
    ParallelLayout to = base;
    to.tensor *= 2;
    change(tensor_what, to);
  }
  if (base.tensor > 1) {
    ParallelLayout to = base;
    to.tensor /= 2;
    change("tensor parallelism " + std::to_string(to.tensor) + " instead of " + std::to_string(base.tensor), to);
  }
  const std::string pipeline_what =
      "a pipeline of " + std::to_string(2 * base.pipeline) + " stages instead of " + std::to_string(base.pipeline);
  if (2 * base.pipeline > layers) {
    impossible(pipeline_what, setup.model.name + " has " + std::to_string(layers) + " layers");
  } else {
    ParallelLayout to = base;
    to.pipeline *= 2;
    change(pipeline_what, to);
  }
  if (base.pipeline > 1 && base.pipeline % 2 == 0) {
    ParallelLayout to = base;
    to.pipeline /= 2;
    change("a pipeline of " + std::to_string(to.pipeline) + " stages instead of " + std::to_string(base.pipeline), to);
  }
  if (base.pipeline > 1) {
    ParallelLayout to = base;
    to.micro_batches *= 2;
    const long long replica = global / base.data;
    if (replica % to.micro_batches != 0) {
      impossible(std::to_string(to.micro_batches) + " micro-batches instead of " + std::to_string(base.micro_batches),
                 "a replica's batch of " + std::to_string(replica) + " does not split into " +
                     std::to_string(to.micro_batches));
    } else {
      change(std::to_string(to.micro_batches) + " micro-batches instead of " + std::to_string(base.micro_batches), to);
    }
  }
  if (std::any_of(setup.model.layers.begin(), setup.model.layers.end(), expert_layer)) {  // MoE: experts split
    ParallelLayout to = base;
    to.expert *= 2;
    change("expert parallelism " + std::to_string(to.expert) + " instead of " + std::to_string(base.expert), to);
    if (base.expert > 1) {
      to.expert = base.expert / 2;
      change("expert parallelism " + std::to_string(to.expert) + " instead of " + std::to_string(base.expert), to);
    }
  }
  if (base.tensor > 1) {  // the same layout, its tensor collectives under the products beside them, or after them
    ParallelLayout to = base;
    to.async_tensor = !base.async_tensor;
    WhatIf w = layout_change(to.async_tensor ? "asynchronous tensor parallelism (collectives under the projections)"
                                             : "synchronous tensor parallelism instead of asynchronous",
                             setup, cluster, as_is, global, to);
    w.changes_memory = false;
    out.push_back(w);
  }
  if (base.replicas() > 1 && base.sharding != Sharding::zero3) {
    ParallelLayout to = base;
    to.sharding = static_cast<Sharding>(static_cast<int>(base.sharding) + 1);
    change(std::string("sharding ") + to_string(to.sharding) + " instead of " + to_string(base.sharding), to);
  }
  if (base.sharding != Sharding::none) {
    ParallelLayout to = base;
    to.sharding = static_cast<Sharding>(static_cast<int>(base.sharding) - 1);
    change(std::string("sharding ") + to_string(to.sharding) + " instead of " + to_string(base.sharding), to);
  }
  return out;
}

constexpr int explain_samples = 100;

Claim simulate_claim(const WhatIf& w, const StepResult& as_is) {
  Claim c;
  c.what = w.what;
  if (!w.invalid.empty()) {
    c.possible = false;
    c.why = w.invalid;
    return c;
  }
  try {
    c.result = simulate_step(w.setup, w.cluster, w.request);
  } catch (const OptionError& e) {
    c.possible = false;
    c.why = e.what();
    return c;
  } catch (const std::invalid_argument& e) {  // a layout or batch this configuration cannot take
    c.possible = false;
    c.why = e.what();
    return c;
  }
  if (c.result->fits() && as_is.fits() && as_is.samples_per_s() > 0) {
    c.factor = c.result->samples_per_s() / as_is.samples_per_s();
  }
  return c;
}

}  // namespace

std::optional<ParallelLayout> scenario_layout(const Scenario& scenario, int accelerators) {
  if (!scenario.parallel) return std::nullopt;
  return scenario.parallel->layout(accelerators);
}

Explanation explain_scenario(const Scenario& sc, const std::string& algorithm, const std::string& where) {
  Explanation e;
  e.algorithm = algorithm;
  auto request_at = [&](int a) {
    StepRequest r;
    r.accelerators = a;
    r.algorithm = algorithm;
    // jitter or slow nodes chosen at random: every size is a mean over samples (predict's default count and seed)
    const Variability& v = sc.setup.variability;
    if (!sc.parallel && v.random()) r.sampling.samples = whole_passes(v.jitter, explain_samples);
    try {
      r.layout = scenario_layout(sc, a);
    } catch (const std::invalid_argument& err) {
      throw UsageError(where + ": " + err.what());
    }
    return r;
  };
  e.baseline_request = one_replica(request_at(sc.accelerators.front()));
  e.baseline = run(sc.setup, sc.cluster, e.baseline_request, where);
  for (int a : sc.accelerators) {
    const StepRequest r = request_at(a);
    if (a == e.baseline_request.accelerators) {
      e.sizes.push_back({r, *e.baseline, {}, {}});
    } else {
      e.sizes.push_back({r, run(sc.setup, sc.cluster, r, where), {}, {}});
    }
  }
  if (!e.baseline->fits()) {  // efficiency against the smallest size that fits, if any
    e.one_replica_bottleneck = e.baseline->bottleneck();
    e.baseline_is_one_replica = false;
    e.baseline.reset();
    for (const SizeExplained& s : e.sizes) {
      if (!s.result.fits()) continue;
      e.baseline = s.result;
      e.baseline_request = s.request;
      break;
    }
  }
  if (e.baseline && e.baseline->samples_per_s() > 0) {
    const double per_accelerator = e.baseline->samples_per_s() / e.baseline_request.accelerators;
    for (SizeExplained& s : e.sizes) {
      if (!s.result.fits()) continue;
      s.speedup = s.result.samples_per_s() / e.baseline->samples_per_s();
      s.efficiency = s.result.samples_per_s() / s.request.accelerators / per_accelerator;
      if (*s.efficiency < 0.8 && !e.below_80) e.below_80 = s.request.accelerators;
    }
  }
  // what-ifs at the largest size
  const SizeExplained& largest = e.sizes.back();
  e.claims_at = largest.request.accelerators;
  for (const WhatIf& w : what_ifs(sc, largest.request, largest.result)) {
    if (!largest.result.fits() && !w.changes_memory) continue;  // it would not fit either
    e.claims.push_back(simulate_claim(w, largest.result));
  }
  const auto rank = [](const Claim& c) { return !c.possible ? 2 : (c.result->fits() ? 0 : 1); };
  std::stable_sort(e.claims.begin(), e.claims.end(), [&](const Claim& x, const Claim& y) {
    if (rank(x) != rank(y)) return rank(x) < rank(y);
    if (rank(x) != 0) return false;
    return x.result->samples_per_s() > y.result->samples_per_s();
  });
  // the exposed communication no overlap can hide
  const bool replicated =
      largest.request.layout ? largest.request.layout->replicas() > 1 : largest.request.accelerators > 1;
  if (largest.result.fits() && replicated && largest.result.exposed_comm_s() > 0) {
    ExposedFloor f;
    try {
      f.last = last_bucket_alone(sc.setup, sc.cluster, largest.request, largest.result);
    } catch (const OptionError& err) {
      throw UsageError(where + ": " + algorithm + ": " + err.what());
    } catch (const std::invalid_argument& err) {
      throw UsageError(where + ": " + describe_size(largest.request) + ": " + err.what());
    }
    f.first_layer = sc.setup.model.layers[f.last.bucket.first_layer].name;
    f.last_layer = sc.setup.model.layers[f.last.bucket.last_layer].name;
    f.exposed_s = largest.result.exposed_comm_s();
    f.rest = largest.request.layout && largest.request.layout->sharding == Sharding::zero3
                 ? "earlier buckets' reduce-scatters and parameter allgathers"
                 : "earlier buckets' allreduces";
    f.overlapped = sc.setup.overlap;
    e.floor = f;
  }
  return e;
}

}  // namespace dtsim::cli
