#include "cli/scenario_overrides.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "models/compute_model.hpp"
#include "models/devices.hpp"
#include "models/parallel.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/profile_file.hpp"
#include "scenarios/units.hpp"
#include "sim/parallel.hpp"

namespace dtsim::cli {
namespace {

std::vector<int> parse_counts(const Flags& flags, const char* name, long long max) {
  return flags.parse(name, [max](const std::string& v) {
    return parse_list<int>(
        v, [max](const std::string& one) { return static_cast<int>(parse_integer(one, 1, max)); }, 2.0);
  });
}

// A comma-separated list of names, each checked by `check` (which throws std::invalid_argument listing the accepted
// names).
template <typename Check>
std::vector<std::string> parse_names(const Flags& flags, const char* name, Check check) {
  return flags.parse(name, [&check](const std::string& v) {
    std::vector<std::string> names = split(v);
    if (names.empty()) throw std::invalid_argument("expected a comma-separated list, got ''");
    for (const std::string& one : names)
      check(one);
    check_distinct_names(names, v);  // (as --batch 8,8 is refused)
    return names;
  });
}

// A list flag of names that `from_string` knows (empty when the flag is absent); `accepted` names them for the error.
template <typename FromString>
std::vector<std::string> parse_choices(const Flags& flags, const char* name, FromString from_string,
                                       const char* accepted) {
  if (!flags.has(name)) return {};
  return parse_names(flags, name, [&](const std::string& n) {
    if (!from_string(n)) throw std::invalid_argument("expected " + std::string(accepted) + ", got '" + n + "'");
  });
}

// A path (anything that exists there, or looks like a path: a '/' or a .json ending) or a built-in cluster's name.
// A path (anything with a '/' or a .json ending, relative to the working directory) or a built-in device's name.
Device device_from_flag(const std::string& value) { return load_named_device(value, ".", DTSIM_DATA_DIR); }

void check_precision_name(const std::string& name) {
  for (Precision p : all_precisions) {
    if (name == to_string(p)) return;
  }
  if (name == "mixed") return;
  throw std::invalid_argument("expected " + std::string(precision_choices()) + ", got '" + name + "'");
}

// Whether a variant can run at every size: the layout fits the cluster, model, sizes and batch; a strong-scaling batch
// splits. `batch_where` names what set the batch, `where` what set the sizes.
void check_variant(const Scenario& v, const Flags& flags, bool search, const std::string& where) {
  // (neither from a flag: the file's batch, as its loader names it)
  const std::string batch_where =
      flags.has("batch") ? "--batch" : (where == "scenario.accelerators" ? "scenario.batch.size" : where);
  try {
    check_variability_nodes(v, v.accelerators, where);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  if (search || (v.parallel && v.parallel->search)) return;  // the search keeps only the layouts that work
  if (!v.parallel) {
    try {
      check_batch_splits(v, v.accelerators, batch_where);
    } catch (const ScenarioError& e) {
      throw UsageError(e.what());
    }
    return;
  }
  const ParallelSpec& spec = *v.parallel;
  const int per_node = v.cluster.node.accelerators;
  if (!tensor_fits_nodes(spec.tensor, per_node)) {
    throw UsageError((flags.has("cluster") ? std::string("--cluster") : std::string("scenario.cluster")) + ": " +
                     v.cluster.name + " has " + std::to_string(per_node) +
                     " accelerators per node, which scenario.parallel.tensor = " + std::to_string(spec.tensor) +
                     " neither divides nor is a multiple of (a tensor group is part of a node or whole nodes)");
  }
  if (static_cast<std::size_t>(spec.pipeline) > v.setup.model.layers.size()) {
    throw UsageError((flags.has("model") ? std::string("--model") : std::string("scenario.model")) + ": " +
                     v.setup.model.name + " has " + std::to_string(v.setup.model.layers.size()) +
                     " layers, fewer than scenario.parallel.pipeline = " + std::to_string(spec.pipeline) + " stages");
  }
  for (int a : v.accelerators) {
    ParallelLayout layout;
    try {
      layout = spec.layout(a);
    } catch (const std::invalid_argument& e) {
      throw UsageError(where + ": " + e.what());
    }
    int replica = 0;  // weak scaling: batch x tensor x pipeline; strong: the global batch over the replicas
    try {
      replica = replica_batch(v.setup, layout);
    } catch (const std::invalid_argument& e) {
      throw UsageError(batch_where + ": " + e.what() + " (" + std::to_string(a) + " accelerators)");
    }
    if (replica % spec.micro_batches != 0) {  // (the micro-batches named first, unless --batch set the batch)
      throw UsageError((flags.has("batch") ? std::string("--batch") : std::string("scenario.parallel.micro_batches")) +
                       ": a replica's batch of " + std::to_string(replica) + " does not split into " +
                       std::to_string(spec.micro_batches) + " micro-batches (" + std::to_string(a) + " accelerators)");
    }
    if (const std::string why = expert_layout_problem(v.setup.model, layout); !why.empty())
      throw UsageError((flags.has("model") ? std::string("--model") : where) + ": scenario.parallel.expert: " + why +
                       " (" + std::to_string(a) + " accelerators)");
    if (const std::string why = context_layout_problem(v.setup.model, layout); !why.empty())
      throw UsageError((flags.has("model") ? std::string("--model") : where) + ": scenario.parallel.context: " + why +
                       " (" + std::to_string(a) + " accelerators)");
  }
}

}  // namespace

std::string ScenarioVariant::describe() const {
  std::string text;
  for (const auto& [flag, value] : values)
    text += (text.empty() ? "" : ", ") + flag + " " + value;
  return text;
}

nlohmann::json ScenarioVariant::values_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [flag, value] : values)
    j[flag] = flag == "batch" || flag == "accumulation" ? nlohmann::json(std::stoi(value)) : nlohmann::json(value);
  return j;
}

ScenarioVariants apply_overrides(const Scenario& scenario, const Flags& flags, bool search) {
  if (flags.has("nodes") && flags.has("accelerators")) {
    throw UsageError("--nodes: give either --nodes or --accelerators, not both");
  }
  Scenario base = scenario;
  // a run whose model, device or cluster comes from a flag is no longer the scenario as its file names it
  std::string changed;
  for (const char* flag : {"model", "profile", "device", "cluster", "library"}) {
    if (flags.has(flag)) changed += (changed.empty() ? " with --" : ", --") + std::string(flag);
  }
  base.name += changed;
  if (flags.has("cluster")) {
    base.cluster = cluster_from_flag(flags.get("cluster"));
    base.cluster_name = flags.get("cluster");
  }
  if (flags.has("library")) apply_library_flag(base.cluster, flags.get("library"));
  ScenarioVariants out;
  out.where = "scenario.accelerators";
  if (flags.has("accelerators")) {
    base.accelerators = parse_counts(flags, "accelerators", 1 << 20);
    out.where = "--accelerators";
  } else if (flags.has("nodes")) {
    base.accelerators.clear();
    const long long per_node = base.cluster.node.accelerators;
    for (int n : parse_counts(flags, "nodes", 1 << 20)) {
      if (n * per_node > (1 << 20)) {
        throw UsageError("--nodes: " + std::to_string(n) + " nodes x " + std::to_string(per_node) +
                         " accelerators are more than the 1048576 accelerators dtsim simulates");
      }
      base.accelerators.push_back(static_cast<int>(n * per_node));
    }
    out.where = "--nodes";
  }
  if (flags.has("profile")) {
    if (flags.has("model")) throw UsageError("--profile: not with --model (the profile's layers are the model)");
    try {
      base.setup.profile = load_profile_file(flags.get("profile"));
    } catch (const ScenarioError& e) {
      throw UsageError(std::string("--profile: ") + e.what());
    }
    base.setup.model = model_of(*base.setup.profile);
    base.setup.scaling = ScalingMode::weak;
    base.setup.batch = base.setup.profile->batch;
  }
  // the list flags, each as (flag, values); absent ones keep the scenario's single value
  std::vector<Device> loaded;     // each --device value's device, read once
  std::vector<Model> model_list;  // --model: each name or path read once, errors naming the flag
  const std::vector<std::string> models =
      flags.has("model") ? parse_names(flags, "model",
                                       [&model_list](const std::string& n) {
                                         try {
                                           model_list.push_back(load_named_model(n, ".", DTSIM_DATA_DIR));
                                         } catch (const ScenarioError& e) {
                                           throw std::invalid_argument(e.what());
                                         }
                                       })
                         : std::vector<std::string>{base.setup.model.name};
  const std::vector<std::string> devices =
      flags.has("device")
          ? parse_names(flags, "device", [&loaded](const std::string& n) { loaded.push_back(device_from_flag(n)); })
          : std::vector<std::string>{};
  for (std::size_t a = 0; a < loaded.size(); ++a) {  // two names of one device (an alias) would run it twice
    for (std::size_t b = 0; b < a; ++b) {
      if (loaded[a].name == loaded[b].name) {
        throw UsageError("--device: '" + devices[b] + "' and '" + devices[a] + "' are the same device (" +
                         loaded[a].name + "); give each once");
      }
    }
  }
  const std::vector<std::string> precisions =
      flags.has("precision") ? parse_names(flags, "precision", check_precision_name) : std::vector<std::string>{};
  const std::vector<std::string> runtimes =
      parse_choices(flags, "runtime", runtime_from_string, "eager, cuda_graphs or xla");
  const std::vector<std::string> recomputes =
      parse_choices(flags, "recompute", recompute_from_string, "none, selective, selective_op or full");
  const std::vector<std::string> formats =
      parse_choices(flags, "memory-format", memory_format_from_string, "nhwc or nchw");
  const std::vector<std::string> loops =
      parse_choices(flags, "optimizer-loop", optimizer_loop_from_string, "multi_tensor or per_tensor");
  const std::vector<std::string> reduces = parse_choices(
      flags, "reduce-precision",
      [](const std::string& n) {
        std::optional<Precision> ignored;
        return parse_reduce_precision(n, ignored);
      },
      reduce_precision_choices);
  const std::vector<std::string> asyncs = parse_choices(
      flags, "async-tensor", [](const std::string& n) { return n == "true" || n == "false"; }, "true or false");
  if (!asyncs.empty() && !search && !(base.parallel && base.parallel->search)) {
    if (!base.parallel) {
      throw UsageError("--async-tensor: needs the scenario's \"parallel\" layout (tensor > 1) or --search");
    }
    if (base.parallel->tensor == 1 && std::find(asyncs.begin(), asyncs.end(), "true") != asyncs.end()) {
      throw UsageError("--async-tensor: true needs tensor > 1; scenario.parallel.tensor is 1");
    }
  }
  const std::vector<int> batches =
      flags.has("batch") ? parse_counts(flags, "batch", 1 << 24) : std::vector<int>{base.setup.batch};
  const std::vector<int> accumulations = flags.has("accumulation") ? parse_counts(flags, "accumulation", 1 << 16)
                                                                   : std::vector<int>{base.setup.accumulation};
  if (flags.has("accumulation") && base.parallel) {
    throw UsageError(
        "--accumulation: not with the scenario's \"parallel\" layout (its micro-batches are "
        "parallel.micro_batches)");
  }
  if (flags.has("accumulation") && search) {
    throw UsageError("--accumulation: not with --search (a layout's micro-batches are its own)");
  }
  if (search && base.parallel && base.parallel->context > 1) {
    throw UsageError("--search: not with scenario.parallel.context = " + std::to_string(base.parallel->context) +
                     " (the search tries data x tensor x pipeline layouts)");
  }
  // one variant per combination, the last list varying fastest (a mixed-radix count)
  const std::size_t sizes[] = {models.size(),
                               std::max<std::size_t>(1, devices.size()),
                               std::max<std::size_t>(1, precisions.size()),
                               std::max<std::size_t>(1, runtimes.size()),
                               std::max<std::size_t>(1, recomputes.size()),
                               std::max<std::size_t>(1, formats.size()),
                               std::max<std::size_t>(1, loops.size()),
                               std::max<std::size_t>(1, reduces.size()),
                               std::max<std::size_t>(1, asyncs.size()),
                               accumulations.size(),
                               batches.size()};
  std::size_t combinations = 1;
  for (const std::size_t n : sizes)
    combinations *= n;
  for (std::size_t c = 0; c < combinations; ++c) {
    std::size_t digits[std::size(sizes)];
    for (std::size_t i = std::size(sizes), rest = c; i-- > 0;) {
      digits[i] = rest % sizes[i];
      rest /= sizes[i];
    }
    const auto [m, d, p, r, k, f, o, g, y, a, b] = digits;
    ScenarioVariant v{base, {}};
    TrainingSetup& setup = v.scenario.setup;
    if (flags.has("model")) setup.model = model_list.at(m);
    if (!devices.empty()) {
      setup.device = loaded[d];
      apply_device_overrides(v.scenario);
    }
    if (!precisions.empty()) v.scenario.precision_name = precisions[p];
    try {
      setup.compute.precision = precision_for(v.scenario.precision_name, setup.device);
    } catch (const std::invalid_argument& e) {
      throw UsageError((!precisions.empty() ? std::string("--precision: ")
                        : !devices.empty()
                            ? "--device: " + devices[d] + " (scenario.precision " + v.scenario.precision_name + "): "
                            : "scenario.precision: ") +
                       e.what());
    }
    if (!runtimes.empty()) setup.compute.runtime = *runtime_from_string(runtimes[r]);
    if (!recomputes.empty()) setup.compute.recompute = *recompute_from_string(recomputes[k]);
    if (!formats.empty()) setup.compute.memory_format = *memory_format_from_string(formats[f]);
    if (!loops.empty()) setup.compute.optimizer_loop = *optimizer_loop_from_string(loops[o]);
    if (!reduces.empty()) parse_reduce_precision(reduces[g], setup.reduce_precision);
    if (!asyncs.empty()) {  // (--search without a layout: the searched layouts take it)
      if (!v.scenario.parallel) v.scenario.parallel = ParallelSpec{.search = true};
      v.scenario.parallel->async_tensor = asyncs[y] == "true";
    }
    setup.batch = batches[b];
    setup.accumulation = accumulations[a];
    if (setup.profile && (setup.batch != setup.profile->batch || setup.scaling != ScalingMode::weak)) {
      throw UsageError((flags.has("batch") ? std::string("--batch: ") : std::string("scenario.batch: ")) +
                       "the profile " + setup.profile->source + " was measured at a batch of " +
                       std::to_string(setup.profile->batch) + " per accelerator: weak scaling at that batch only");
    }
    if (models.size() > 1) v.values.emplace_back("model", models[m]);
    if (devices.size() > 1) v.values.emplace_back("device", devices[d]);
    if (precisions.size() > 1) v.values.emplace_back("precision", precisions[p]);
    if (runtimes.size() > 1) v.values.emplace_back("runtime", runtimes[r]);
    if (recomputes.size() > 1) v.values.emplace_back("recompute", recomputes[k]);
    if (formats.size() > 1) v.values.emplace_back("memory-format", formats[f]);
    if (loops.size() > 1) v.values.emplace_back("optimizer-loop", loops[o]);
    if (reduces.size() > 1) v.values.emplace_back("reduce-precision", reduces[g]);
    if (asyncs.size() > 1) v.values.emplace_back("async-tensor", asyncs[y]);
    if (accumulations.size() > 1) v.values.emplace_back("accumulation", std::to_string(accumulations[a]));
    if (batches.size() > 1) v.values.emplace_back("batch", std::to_string(batches[b]));
    check_variant(v.scenario, flags, search, out.where);
    out.variants.push_back(std::move(v));
  }
  return out;
}

}  // namespace dtsim::cli
