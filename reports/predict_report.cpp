#include "reports/predict_report.hpp"
#include <algorithm>
#include "reports/distribution_json.hpp"
#include "reports/grounding.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "reports/format.hpp"

namespace dtsim {
namespace {

// The cluster file names what its nodes hold; the scenario's device is what computes. A what-if that swapped one and
// not the other (predict --cluster dgx-a100 on a V100 scenario) would otherwise read as the cluster's GPUs.
std::string device_note(const Scenario& sc) {
  auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
  };
  const std::string held = lower(sc.cluster.node.accelerator);
  if (held.empty() || held == "cpu" || held == "gpu" || held == lower(sc.setup.device.name)) return "";
  return "the cluster's nodes hold " + sc.cluster.node.accelerator + " and the scenario computes on " +
         sc.setup.device.name + " (--device names another; `dtsim help device-file` lists them)";
}

// The header's note lines: plain messages on a multi-NIC cluster (when a result crosses nodes) and a device that is not
// the cluster's.
std::string notes_text(const Scenario& sc, bool across_nodes) {
  std::string out;
  for (const std::string& note : {across_nodes ? plain_messages_note(sc.cluster) : std::string(), device_note(sc)}) {
    if (!note.empty()) out += "  note: " + note + '\n';
  }
  return out;
}

std::string setup_line(const Scenario& sc) {
  const TrainingSetup& s = sc.setup;
  std::ostringstream out;
  out << s.model.name << " (" << format_fixed(s.model.params() / 1e6, 1) << "M parameters) on " << sc.cluster.name
      << " (" << sc.cluster.node.accelerators << " x " << s.device.name << " per node, "
      << to_string(sc.cluster.node.intra_kind) << ", " << sc.cluster.node.nics << " x "
      << format_bits_per_s(sc.cluster.node.nic.bandwidth_Bps) << " NIC, " << to_string(sc.cluster.fabric.kind)
      << ")\n  " << to_string(s.scaling) << " scaling, batch " << s.batch
      << (s.scaling == ScalingMode::weak ? " per accelerator" : " global");
  if (s.accumulation > 1) {
    out << " (" << (s.scaling == ScalingMode::weak ? "a micro-batch; " : "") << s.accumulation
        << " micro-batches a step, gradients reduced once)";
  }
  out << ", " << to_string(s.framework);
  if (s.framework != FrameworkPreset::none)
    out << " (" << format_bytes(static_cast<std::uint64_t>(s.bucket_bytes)) << " buckets"
        << (s.overlap ? "" : ", started after backward") << ")";
  out << ", " << to_string(s.compute.precision);
  if (s.reduce_precision) out << " (gradients reduced in " << to_string(*s.reduce_precision) << ")";
  out << ", " << to_string(s.compute.optimizer)
      << (s.compute.optimizer_loop == OptimizerLoop::per_tensor ? " (a loop over its tensors)" : "") << ", "
      << to_string(s.compute.runtime) << " runtime";
  if (s.compute.recompute != Recompute::none) out << ", " << to_string(s.compute.recompute) << " recomputation";
  if (s.compute.memory_format == MemoryFormat::nchw) out << ", NCHW tensors";
  if (s.input.enabled) out << ", input pipeline on";
  if (s.variability.background_load > 0) {
    out << "\n  background traffic takes " << format_fixed(100 * s.variability.background_load, 0)
        << "% of NIC and fabric bandwidth (the NIC above is what is left)";
  }
  return out.str();
}

// The "memory" object of a result: what one accelerator holds, and what it has.
nlohmann::json memory_json(const MemoryUse& m, double capacity_bytes) {
  return {{"weights_bytes", m.weights_bytes},     {"gradient_bytes", m.gradient_bytes},
          {"optimizer_bytes", m.optimizer_bytes}, {"activation_bytes", m.activation_bytes},
          {"total_bytes", m.total_bytes()},       {"capacity_bytes", capacity_bytes}};
}

nlohmann::json variability_json(const Variability& v) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const int n : v.slow.nodes)
    nodes.push_back(n);
  return {{"jitter",
           {{"distribution", to_string(v.jitter.distribution)},
            {"sigma", v.jitter.sigma},
            {"per", to_string(v.jitter.scope)},
            {"empirical_factors", v.jitter.factors.size()},
            {"replay_ranks", v.jitter.rank_factors.size()},
            {"replay_moments", v.jitter.rank_factors.empty() ? 0 : v.jitter.rank_factors.front().size()}}},
          {"slow_nodes", {{"fraction", v.slow.fraction}, {"nodes", nodes}, {"slowdown", v.slow.slowdown}}},
          {"background_load", v.background_load}};
}

double cost_percent(double fraction) { return std::abs(fraction) < 0.0005 ? 0.0 : 100 * fraction; }

// The sampled steps, when there are: per configuration the distribution and what variability costs.
std::string distribution_text(const Scenario& scenario, const std::vector<Prediction>& results) {
  const auto sampled = std::find_if(results.begin(), results.end(),
                                    [](const Prediction& p) { return p.fits && p.distribution.samples > 0; });
  if (sampled == results.end()) return "";
  const Variability& v = scenario.setup.variability;
  std::ostringstream out;
  out << "\nStep time under variability (" << sampled->distribution.samples << " samples, seed "
      << sampled->distribution.seed << ", " << (sampled->distribution.sampler == Sampler::fast ? "fast" : "exact")
      << " sampler; " << describe(v);
  out << "):\n";
  out << std::left << std::setw(6) << "accel" << std::setw(15) << "algorithm" << std::setw(14) << "as simulated"
      << std::setw(11) << "mean" << std::setw(11) << "p50" << std::setw(11) << "p90" << std::setw(11) << "p99"
      << "variability costs\n";
  for (const Prediction& p : results) {
    if (!p.fits || p.distribution.samples == 0) continue;
    const StepDistribution& d = p.distribution;
    out << std::setw(6) << p.accelerators << std::setw(15) << p.algorithm << std::setw(14)
        << format_seconds(p.step.step_s) << std::setw(11) << format_seconds(d.mean_s) << std::setw(11)
        << format_seconds(d.p50_s) << std::setw(11) << format_seconds(d.p90_s) << std::setw(11)
        << format_seconds(d.p99_s) << format_fixed(cost_percent(d.mean_s / p.step.step_s - 1), 1) << "% of the step\n";
  }
  out << "samples/s, speedup and efficiency above follow the mean; \"as simulated\": the step above, without what is "
         "drawn per sample (named slow nodes and devices in)\n";
  return out.str();
}

// "25 buckets of 26.21 MB by chain-dbtree (ll128, 8 channels)"
std::string reduction_text(const BucketReduction& r) {
  std::string text =
      std::to_string(r.buckets) + (r.buckets == 1 ? " bucket of " : " buckets of ") +
      (r.smallest_bytes == r.largest_bytes ? format_bytes(r.largest_bytes)
                                           : format_bytes(r.smallest_bytes) + " to " + format_bytes(r.largest_bytes)) +
      " by " + r.algorithm;
  if (r.protocol != Protocol::none) {
    text += std::string(" (") + to_string(r.protocol) + ", " + std::to_string(r.channels) +
            (r.channels == 1 ? " channel)" : " channels)");
  }
  return text;
}

// Which algorithm (and protocol, channels) reduced the buckets, where the table does not already say it: under auto
// (chosen per bucket size) or through a collective library (its protocol and channels).
std::string reductions_text(const std::vector<Prediction>& results) {
  std::ostringstream out;
  bool any = false;
  for (const Prediction& p : results) {
    const bool library = std::any_of(p.reductions.begin(), p.reductions.end(),
                                     [](const BucketReduction& r) { return r.protocol != Protocol::none; });
    if (!p.fits || p.reductions.empty() || (p.algorithm != "auto" && !library)) continue;
    if (!any) out << "gradient buckets reduced (auto: the library's choice per bucket size, docs/clusters.md):\n";
    any = true;
    out << "  " << p.accelerators << " accelerators, " << p.algorithm << ": ";
    for (std::size_t i = 0; i < p.reductions.size(); ++i)
      out << (i == 0 ? "" : "; ") << reduction_text(p.reductions[i]);
    out << '\n';
  }
  return out.str();
}

}  // namespace

std::string reductions_cell(const std::vector<BucketReduction>& reductions) {
  std::string text;
  for (const BucketReduction& r : reductions)
    text += (text.empty() ? "" : "; ") + reduction_text(r);
  return text;
}

// A language model's throughput in tokens (samples x its sequence), the unit its users and sources quote: a line
// naming it at the largest size that fits; empty for a model whose samples are not token sequences.
std::string tokens_text(const Model& model, int accelerators, double samples_per_s) {
  if (model.tokens_per_sample <= 0 || accelerators <= 0) return "";
  const double tokens_per_s = samples_per_s * model.tokens_per_sample;
  // (per accelerator as well: what trainers log, e.g. torchtitan's TPS/GPU)
  return "tokens/s = samples/s x " + std::to_string(model.tokens_per_sample) +
         " tokens a sample: " + format_count(tokens_per_s) + " tokens/s at " + std::to_string(accelerators) +
         (accelerators == 1 ? " accelerator\n"
                            : " accelerators, " + format_count(tokens_per_s / accelerators) + " an accelerator\n");
}

// The tokens line of the largest result that fits (none when none fits).
template <class Result>
std::string largest_tokens_text(const Model& model, const std::vector<Result>& results) {
  const Result* widest = nullptr;
  for (const Result& p : results) {
    if (p.fits && (widest == nullptr || p.accelerators > widest->accelerators)) widest = &p;
  }
  return widest == nullptr ? "" : tokens_text(model, widest->accelerators, widest->samples_per_s);
}

nlohmann::json tokens_json(const Model& model, double samples_per_s) {
  if (model.tokens_per_sample <= 0) return nullptr;
  return samples_per_s * model.tokens_per_sample;
}

std::string predict_text(const Scenario& scenario, const std::vector<Prediction>& results,
                         const HeldoutErrors* heldout) {
  std::ostringstream out;
  int largest = 0;
  for (const Prediction& p : results)
    largest = std::max(largest, p.accelerators);
  out << "predict " << scenario.name << ": " << setup_line(scenario)
      << "\n  grounding: " << grounding_text(scenario.setup)
      << "\n  trust: " << trust_text(scenario.setup, heldout, largest) << '\n';
  out << notes_text(scenario,
                    std::any_of(results.begin(), results.end(), [](const Prediction& p) { return p.nodes > 1; }));
  out << '\n';
  out << std::left << std::setw(6) << "accel" << std::setw(6) << "nodes" << std::setw(15) << "algorithm"
      << std::setw(11) << "step" << std::setw(11) << "samples/s" << std::setw(9) << "speedup" << std::setw(7) << "eff."
      << std::setw(11) << "forward" << std::setw(11) << "backward" << std::setw(11) << "exposed" << std::setw(11)
      << "input" << std::setw(11) << "optimizer"
      << "bottleneck\n";
  for (const Prediction& p : results) {
    out << std::setw(6) << p.accelerators << std::setw(6) << p.nodes << std::setw(15) << p.algorithm;
    if (!p.fits) {
      out << p.bottleneck << '\n';
      continue;
    }
    const TrainingResult& s = p.step;
    out << std::setw(11) << format_seconds(s.step_s) << std::setw(11) << format_throughput(p.samples_per_s)
        << std::setw(9) << format_fixed(p.speedup, 2) << std::setw(7) << format_fixed(p.efficiency, 2) << std::setw(11)
        << format_seconds(s.forward_s) << std::setw(11) << format_seconds(s.backward_s) << std::setw(11)
        << format_seconds(s.exposed_comm_s) << std::setw(11) << format_seconds(s.input_stall_s) << std::setw(11)
        << format_seconds(s.optimizer_s) << p.bottleneck << '\n';
  }
  out << "\nstep = input + forward + backward + exposed communication + optimizer on the slowest accelerator; "
         "speedup and efficiency against one accelerator\n";
  out << largest_tokens_text(scenario.setup.model, results);
  out << distribution_text(scenario, results);
  out << reductions_text(results);
  const auto flow = std::find_if(results.begin(), results.end(),
                                 [](const Prediction& p) { return p.fits && p.backend == Backend::flow; });
  if (flow != results.end()) {
    out << "timed on the flow executor from " << flow->accelerators
        << " accelerators (SimGrid below; --backend chooses)\n";
  }
  if (std::any_of(results.begin(), results.end(),
                  [](const Prediction& p) { return p.backend == Backend::analytical; })) {
    out << "timed on the analytical network: every message as alone on its route, nothing shares a link\n";
  }
  return out.str();
}

nlohmann::json predict_json(const Scenario& scenario, const std::vector<Prediction>& results,
                            const HeldoutErrors* heldout) {
  const TrainingSetup& s = scenario.setup;
  nlohmann::json list = nlohmann::json::array();
  for (const Prediction& p : results) {
    nlohmann::json r{{"accelerators", p.accelerators},
                     {"nodes", p.nodes},
                     {"algorithm", p.algorithm},
                     {"local_batch", p.local_batch},
                     {"global_batch", p.global_batch},
                     {"fits", p.fits},
                     {"step_time_s", p.step.step_s},
                     {"samples_per_s", p.samples_per_s},
                     {"tokens_per_s", p.fits ? tokens_json(s.model, p.samples_per_s) : nlohmann::json(nullptr)},
                     {"speedup", p.speedup},
                     {"efficiency", p.efficiency},
                     {"breakdown",
                      {{"forward_s", p.step.forward_s},
                       {"backward_s", p.step.backward_s},
                       {"exposed_comm_s", p.step.exposed_comm_s},
                       {"input_stall_s", p.step.input_stall_s},
                       {"optimizer_s", p.step.optimizer_s}}},
                     {"comm_s", p.step.comm_s},
                     {"memory", memory_json(p.memory, s.device.memory_bytes)},
                     {"bottleneck", p.bottleneck},
                     {"most_utilised_links",
                      {{"class", p.most_utilised_links.link_class},
                       {"links", p.most_utilised_links.links},
                       {"utilisation", p.most_utilised_links.utilisation}}},
                     {"backend", to_string(p.backend)},
                     {"sim_wall_s", p.step.wall_s},
                     {"sim_rank_classes", p.step.rank_classes}};
    if (p.distribution.samples > 0) r["step_distribution"] = step_distribution_json(p.distribution);
    nlohmann::json reductions = nlohmann::json::array();
    for (const BucketReduction& g : p.reductions) {
      reductions.push_back({{"algorithm", g.algorithm},
                            {"protocol", to_string(g.protocol)},
                            {"channels", g.channels},
                            {"buckets", g.buckets},
                            {"smallest_bytes", g.smallest_bytes},
                            {"largest_bytes", g.largest_bytes}});
    }
    r["reductions"] = reductions;
    r["busiest_links"] = link_groups_json(p.busiest_links);
    r["samples_per_s_range"] = p.fits ? throughput_range_json(s, heldout, p.samples_per_s) : nlohmann::json(nullptr);
    r["speedup_range"] = p.fits ? speedup_range_json(s, heldout, p.speedup, p.accelerators) : nlohmann::json(nullptr);
    list.push_back(r);
  }
  return nlohmann::json{{"scenario", scenario.name},
                        {"model", s.model.name},
                        {"device", s.device.name},
                        {"device_file", s.device.origin},
                        {"device_figures", device_figures(s.device)},
                        {"grounding", grounding_json(s)},
                        {"trust", trust_json(s, heldout)},
                        {"cluster", scenario.cluster.name},
                        {"scaling", to_string(s.scaling)},
                        {"batch", s.batch},
                        {"accumulation", s.accumulation},
                        {"framework", to_string(s.framework)},
                        {"overlap", reductions_overlap_backward(s)},
                        {"precision", to_string(s.compute.precision)},
                        {"reduce_precision", to_string(reduced_precision(s))},
                        {"optimizer", to_string(s.compute.optimizer)},
                        {"optimizer_loop", to_string(s.compute.optimizer_loop)},
                        {"runtime", to_string(s.compute.runtime)},
                        {"recompute", to_string(s.compute.recompute)},
                        {"memory_format", to_string(s.compute.memory_format)},
                        {"variability", variability_json(s.variability)},
                        {"results", list}};
}

std::string parallel_text(const Scenario& scenario, const std::vector<ParallelPrediction>& results, bool search,
                          const HeldoutErrors* heldout) {
  std::ostringstream out;
  int largest = 0;
  for (const ParallelPrediction& p : results)
    largest = std::max(largest, p.accelerators);
  out << "predict " << scenario.name << ": " << setup_line(scenario)
      << "\n  grounding: " << grounding_text(scenario.setup)
      << "\n  trust: " << trust_text(scenario.setup, heldout, largest) << '\n';
  out << notes_text(
      scenario, std::any_of(results.begin(), results.end(), [](const ParallelPrediction& p) { return p.nodes > 1; }));
  if (scenario.setup.scaling == ScalingMode::weak) {
    out << "  global batch = " << scenario.setup.batch
        << " x accelerators for every layout, each replica of tensor x pipeline accelerators taking its share\n";
  } else {
    out << "  global batch " << scenario.setup.batch << " for every layout, split over its data-parallel replicas\n";
  }
  if (search) {
    out << "  layouts ranked by time per sample (step / global batch), fastest first, at each accelerator count\n";
  }
  out << '\n';
  std::size_t layout_width = 48;  // (wider for the longest layout's description)
  for (const ParallelPrediction& p : results)
    layout_width = std::max(layout_width, p.layout.describe().size() + 2);
  const auto layout_w = static_cast<int>(layout_width);
  out << std::left << std::setw(7) << "accel" << std::setw(layout_w) << "layout" << std::setw(8) << "global"
      << std::setw(7) << "micro" << std::setw(11) << "step" << std::setw(11) << "per sample" << std::setw(11)
      << "samples/s" << std::setw(10) << "memory" << std::setw(11) << "compute" << std::setw(11) << "tensor";
  const bool experts =
      std::any_of(results.begin(), results.end(), [](const ParallelPrediction& p) { return p.layout.expert > 1; });
  if (experts) out << std::setw(11) << "experts";
  const bool contexts =
      std::any_of(results.begin(), results.end(), [](const ParallelPrediction& p) { return p.layout.context > 1; });
  if (contexts) out << std::setw(11) << "context";
  out << std::setw(11) << "bubble" << std::setw(11) << "data exp."
      << "bottleneck\n";
  for (const ParallelPrediction& p : results) {
    out << std::setw(7) << p.accelerators << std::setw(layout_w) << p.layout.describe() << std::setw(8)
        << p.global_batch << std::setw(7)
        << format_fixed(p.micro_batch, p.micro_batch == std::floor(p.micro_batch) ? 0 : 2);
    if (!p.fits) {
      out << p.bottleneck << '\n';
      continue;
    }
    out << std::setw(11) << format_seconds(p.step_s) << std::setw(11)
        << format_seconds(p.global_batch > 0 ? p.step_s / p.global_batch : 0) << std::setw(11)
        << format_throughput(p.samples_per_s) << std::setw(10)
        << (format_fixed(p.memory.total_bytes() / 1e9, 1) + " GB") << std::setw(11) << format_seconds(p.compute_s)
        << std::setw(11) << format_seconds(p.tensor_comm_s);
    if (experts) out << std::setw(11) << format_seconds(p.expert_comm_s);
    if (contexts) out << std::setw(11) << format_seconds(p.context_comm_s);
    out << std::setw(11) << format_seconds(p.bubble_s) << std::setw(11) << format_seconds(p.data_exposed_s)
        << p.bottleneck << '\n';
  }
  out << "\nglobal = samples per step (replica batch x data-parallel replicas); micro = samples per micro-batch, what "
         "each accelerator of a replica computes on at a time\n"
         "step = compute + tensor-parallel allreduces + pipeline bubble (waiting for other stages, their transfers "
         "included) + exposed data-parallel communication + input stall + optimizer, of the slowest rank\n";
  if (experts) {
    out << "experts = waiting for expert parallelism's all-to-alls (each MoE layer's dispatch and combine, forward "
           "and backward), a part of the step too\n";
  }
  if (contexts) {
    out << "context = waiting for context parallelism's exchanges of keys and values (each attention layer's "
           "all-gather before it in forward and of their gradients after it in backward), a part of the step too\n";
  }
  out << largest_tokens_text(scenario.setup.model, results);
  return out.str();
}

nlohmann::json parallel_json(const Scenario& scenario, const std::vector<ParallelPrediction>& results,
                             const HeldoutErrors* heldout) {
  nlohmann::json list = nlohmann::json::array();
  for (const ParallelPrediction& p : results) {
    list.push_back(
        {{"accelerators", p.accelerators},
         {"samples_per_s_range",
          p.fits ? throughput_range_json(scenario.setup, heldout, p.samples_per_s) : nlohmann::json(nullptr)},
         {"nodes", p.nodes},
         {"data", p.layout.data},
         {"context", p.layout.context},
         {"tensor", p.layout.tensor},
         {"pipeline", p.layout.pipeline},
         {"micro_batches", p.layout.micro_batches},
         {"schedule", to_string(p.layout.schedule)},
         {"sharding", to_string(p.layout.sharding)},
         {"expert", p.layout.expert},
         {"async_tensor", p.layout.async_tensor},
         {"replica_batch", p.replica_batch},
         {"global_batch", p.global_batch},
         {"micro_batch", p.micro_batch},
         {"fits", p.fits},
         {"step_time_s", p.step_s},
         {"samples_per_s", p.samples_per_s},
         {"tokens_per_s", p.fits ? tokens_json(scenario.setup.model, p.samples_per_s) : nlohmann::json(nullptr)},
         {"time_per_sample_s", p.fits && p.global_batch > 0 ? p.step_s / p.global_batch : 0.0},
         {"breakdown",
          {{"compute_s", p.compute_s},
           {"tensor_comm_s", p.tensor_comm_s},
           {"expert_comm_s", p.expert_comm_s},
           {"context_comm_s", p.context_comm_s},
           {"bubble_s", p.bubble_s},
           {"bubble_fraction", p.bubble_fraction},
           {"data_exposed_s", p.data_exposed_s},
           {"input_stall_s", p.input_stall_s},
           {"optimizer_s", p.optimizer_s}}},
         {"data_comm_s", p.data_comm_s},
         {"memory", memory_json(p.memory, scenario.setup.device.memory_bytes)},
         {"bytes_sent_per_step",
          {{"data_parallel", p.volume.data_bytes},
           {"tensor_parallel", p.volume.tensor_bytes},
           {"pipeline", p.volume.pipeline_bytes},
           {"expert_parallel", p.volume.expert_bytes},
           {"context_parallel", p.volume.context_bytes}}},
         {"bottleneck", p.bottleneck},
         {"sim_wall_s", p.wall_s}});
  }
  return nlohmann::json{{"scenario", scenario.name},
                        {"model", scenario.setup.model.name},
                        {"device", scenario.setup.device.name},
                        {"device_file", scenario.setup.device.origin},
                        {"device_figures", device_figures(scenario.setup.device)},
                        {"grounding", grounding_json(scenario.setup)},
                        {"trust", trust_json(scenario.setup, heldout)},
                        {"cluster", scenario.cluster.name},
                        {"scaling", to_string(scenario.setup.scaling)},
                        {"precision", to_string(scenario.setup.compute.precision)},
                        {"reduce_precision", to_string(reduced_precision(scenario.setup))},
                        {"runtime", to_string(scenario.setup.compute.runtime)},
                        {"recompute", to_string(scenario.setup.compute.recompute)},
                        {"memory_format", to_string(scenario.setup.compute.memory_format)},
                        {"parallel_results", list}};
}

}  // namespace dtsim
