// `dtsim predict [SCENARIO]`: training throughput, speedup and bottleneck of a scenario over accelerator counts and
// allreduce algorithms.
#include <algorithm>
#include <array>
#include <iostream>

#include "algorithms/registry.hpp"
#include "cli/collective_runs.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "cli/output_flags.hpp"
#include "cli/scenario_overrides.hpp"
#include "cli/shipped_heldout.hpp"
#include "cli/sweep.hpp"
#include "models/variability.hpp"
#include "reports/csv_table.hpp"
#include "reports/format.hpp"
#include "reports/grounding.hpp"
#include "reports/predict_report.hpp"
#include "reports/progress.hpp"
#include "reports/result_csv.hpp"
#include "reports/run_report.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/scenario_file.hpp"
#include "scenarios/units.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"
#include "sim/scenario_step.hpp"
#include "sim/topology.hpp"

namespace dtsim::cli {
namespace {

constexpr const char* default_scenario = "scenarios/training/resnet50-v100.json";

// A lower bound of a configuration's wall time, a tenth of what this 2-core VM measured for ResNet-50's data-parallel
// step (10 ms a configuration over sizes 1 to 1000; 20 to 40 us an accelerator at 1024 to 16,384 on the flow and
// analytical backends), and the most a sweep may take by it unless forced.
constexpr double configuration_floor_s = 1e-3;
constexpr double accelerator_floor_s = 2e-6;
constexpr double sweep_limit_s = 3600;

constexpr std::array<FlagSpec, 14> predict_own_flags{{
    {"run", "DURATION", "",
     "a whole run of this much wall time (s, min, h, d, e.g. 30d): expected interruptions, checkpoint interval, "
     "goodput and samples trained, from the scenario's failures and checkpoint (docs/goodput.md)"},
    {"samples-to-train", "N", "", "a whole run that trains N samples: its expected wall time and goodput"},
    {"tokens", "N", "", "a whole run that trains N tokens (a language model: N / its sequence length samples)"},
    {"samples", "N", "0 (100 with jitter)",
     "Monte Carlo under the scenario's variability: N samples of each step (1 to 1000000), reported as mean, p50, p90, "
     "p99 and a histogram (JSON); samples/s, speedup and efficiency then follow the mean (docs/variability.md)"},
    {"seed", "S", "1", "the samples' seed (0 to 2^63): the same seed gives the same output, byte for byte"},
    {"sampler", "fast|exact", "fast",
     "fast: each bucket's reduction simulated once, the samples drawn over the step's structure; exact: the whole "
     "step simulated again per sample, every rank drawing its times"},
    {"resume", "FILE", "",
     "append each finished configuration to FILE as a JSON line; rerun the same command to skip those already there "
     "(also under mpirun -n K, which splits the configurations over K processes; not with --search or --trace)"},
    {"backend", "NAME", "auto",
     "what times each step: simgrid (every message), flow (flow-level, sim/flow_executor), analytical (the flow "
     "engine without contention: every message as alone on its route, to see what sharing links costs), or auto "
     "(SimGrid up to 64 accelerators, flow above)"},
    {"rank-classes", "ON|OFF", "on",
     "flow only: simulate one rank per class of ranks that provably run alike, with the same times (on), or every "
     "rank (off: to compare)"},
    {"algorithm", "NAME", "from the scenario",
     "allreduce algorithms, comma-separated, all, or auto (the collective library's choice per gradient bucket)"},
    {"json", "", "", "print one JSON object with a results list instead of the table"},
    {"force", "", "",
     "run even when the estimate says the configurations (sizes x algorithms x variants) take over an hour"},
    {"search", "", "",
     "model parallelism: at each accelerator count try every data x tensor x pipeline layout (with the least ZeRO "
     "sharding that fits in memory) and rank them by time per sample, fastest first (weak scaling: every layout "
     "trains batch x accelerators samples per step)"},
    {"trace", "FILE", "",
     "write the timeline of the largest configuration (first algorithm) as Chrome trace-event JSON (Perfetto, "
     "chrome://tracing): per rank its forward, backward, optimizer and allreduce intervals, per busy link its use"},
}};
constexpr auto predict_flags = join_flags(predict_own_flags, scenario_override_flags);

// The flags above and the output flags every command shares.
constexpr auto predict_all_flags = join_flags(predict_flags, join_flags(csv_flags, trace_flags));

// Above this many accelerators the largest configuration is recorded (for its busiest links) only with --trace.
constexpr int record_accelerators_limit = 1024;

double traced_run_s(const StepTrace& traced) {
  double run_s = 0;
  for (const SpanRecord& span : traced.run.spans)
    run_s = std::max(run_s, span.end_s);
  return run_s;
}

// Scenarios with "parallel" (or --search): one layout per accelerator count, or every layout that fits.
std::vector<ParallelPrediction> predict_layouts(const Scenario& scenario, const Flags& flags, const std::string& where,
                                                const TraceRequest& trace) {
  const bool search = flags.has("search") || (scenario.parallel && scenario.parallel->search);
  const ParallelSpec spec = scenario.parallel.value_or(ParallelSpec{});
  const std::string& algorithm = scenario.algorithms.front();
  std::vector<std::pair<int, ParallelLayout>> todo;
  for (int a : scenario.accelerators) {
    if (search) {
      const std::vector<ParallelLayout> layouts = candidate_layouts(scenario.setup, scenario.cluster, a);
      if (layouts.empty()) {
        throw UsageError(where + ": no layout of " + std::to_string(a) + " accelerators fits in the memory of a " +
                         scenario.setup.device.name);
      }
      for (ParallelLayout l : layouts) {
        l.async_tensor = spec.async_tensor && l.tensor > 1;
        todo.emplace_back(a, l);
      }
    } else {
      todo.emplace_back(a, spec.layout(a));  // apply_overrides checked that a is a multiple of tensor x pipeline
    }
  }
  std::vector<ParallelPrediction> results;
  ProgressLine progress("predict", todo.size());
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const auto& [a, layout] = todo[i];
    progress.next(layout.describe());
    StepRequest request;
    request.accelerators = a;
    request.algorithm = algorithm;
    request.layout = layout;
    request.record_pipeline = flags.has("trace") && i + 1 == todo.size();
    try {
      results.push_back(*simulate_step(scenario.setup, scenario.cluster, request).parallel());
    } catch (const OptionError& e) {
      throw UsageError(where + ": " + algorithm + " on " + std::to_string(a) + " accelerators: " + e.what());
    } catch (const std::invalid_argument& e) {
      throw UsageError(where + ": " + std::to_string(a) + " accelerators, " + layout.describe() + ": " + e.what());
    }
  }
  if (search) {  // per accelerator count, the least time per sample first (every layout has the same global batch)
    std::stable_sort(results.begin(), results.end(), [](const ParallelPrediction& x, const ParallelPrediction& y) {
      if (x.accelerators != y.accelerators) return x.accelerators < y.accelerators;
      if (x.fits != y.fits) return x.fits;
      return x.step_s / x.global_batch < y.step_s / y.global_batch;
    });
  }
  if (flags.has("trace")) {
    const auto traced = std::find_if(results.begin(), results.end(),
                                     [](const ParallelPrediction& p) { return !p.pipeline_trace.spans.empty(); });
    if (traced == results.end()) {
      throw UsageError("--trace: the last layout, " + todo.back().second.describe() + ", does not fit in memory");
    }
    const ParallelPrediction& last = *traced;
    TraceRequest stages = trace;  // a pipeline's stages differ by position: all of them unless chosen
    if (!flags.has("trace-ranks")) stages.all_ranks = true;
    write_trace_file(stages, last.pipeline_trace, last.layout.pipeline, {},
                     scenario.name + ", " + last.layout.describe() + " (one replica's pipeline, a track per stage)",
                     std::cerr);
  }
  return results;
}

// Several variants (list-valued --batch, --model, ...): each variant's report in turn; JSON {"variants": [...]}, each
// the single-variant object with a "variant" object of the values that made it.
void print_variants(const ScenarioVariants& variants, const std::vector<std::string>& texts,
                    std::vector<nlohmann::json>& docs, bool json, std::ostream& out) {
  if (!variants.several()) {
    if (json) {
      out << docs.front().dump() << '\n';
    } else {
      out << texts.front();
    }
    return;
  }
  nlohmann::json all = nlohmann::json::array();
  for (std::size_t v = 0; v < variants.variants.size(); ++v) {
    if (json) {
      docs[v]["variant"] = variants.variants[v].values_json();
      all.push_back(std::move(docs[v]));
    } else {
      out << (v == 0 ? "" : "\n") << "== " << variants.variants[v].describe() << " ==\n" << texts[v];
    }
  }
  if (json) out << nlohmann::json{{"variants", all}}.dump() << '\n';
}

// --csv prints one table for every variant: with several, the flags given several values (model, device, precision,
// batch) lead the columns and each row holds its variant's values.
std::vector<std::string> csv_columns(const ScenarioVariants& variants, std::vector<std::string> columns) {
  if (!variants.several()) return columns;
  std::vector<std::string> all;
  for (const auto& [flag, value] : variants.variants.front().values)
    all.push_back(flag);
  all.insert(all.end(), columns.begin(), columns.end());
  return all;
}

std::vector<std::string> csv_row(const ScenarioVariants& variants, std::size_t v, std::vector<std::string> cells) {
  if (!variants.several()) return cells;
  std::vector<std::string> row;
  for (const auto& [flag, value] : variants.variants[v].values)
    row.push_back(csv_text(value));
  row.insert(row.end(), cells.begin(), cells.end());
  return row;
}

// --run, --samples-to-train, --tokens: what the run is, or nothing.
struct RunRequest {
  bool asked = false;
  double wall_s = 0;
  double samples = 0;
  std::string text;
};

RunRequest run_request(const Flags& flags, const Scenario& scenario) {
  RunRequest r;
  int given = 0;
  for (const char* flag : {"run", "samples-to-train", "tokens"})
    given += flags.has(flag) ? 1 : 0;
  if (given == 0) return r;
  if (given > 1) throw UsageError("--run, --samples-to-train, --tokens: give one of them");
  r.asked = true;
  if (flags.has("run")) {
    r.wall_s = flags.parse("run", [](const std::string& v) { return parse_long_seconds(v, 1); });
    r.text = flags.get("run") + " of wall time";
  } else {
    const std::string flag = flags.has("tokens") ? "tokens" : "samples-to-train";
    const double n = flags.number(flag, 0, 1e21, true);
    if (flag == "tokens") {
      const int per_sample = scenario.setup.model.tokens_per_sample;
      if (per_sample <= 0) {
        throw UsageError("--tokens: " + scenario.setup.model.name +
                         " trains on samples that are not token sequences; use --samples-to-train");
      }
      r.samples = n / per_sample;
      r.text =
          format_count(n) + " tokens (" + format_count(r.samples) + " samples of " + std::to_string(per_sample) + ")";
    } else {
      r.samples = n;
      r.text = format_count(n) + " samples";
    }
  }
  return r;
}

// The run on each configuration that fits.
std::vector<RunRow> run_rows(const Scenario& sc, const std::vector<Prediction>& results, const RunRequest& request,
                             const StepSampling& sampling) {
  const MemoryUse state = memory_use(sc.setup, sc.setup.scaling == ScalingMode::weak ? sc.setup.batch : 1);
  const double checkpoint_bytes = state.weights_bytes + state.optimizer_bytes;  // one replica's model state
  std::vector<RunRow> rows;
  for (const Prediction& p : results) {
    if (!p.fits || p.samples_per_s <= 0) continue;
    ClusterSpec spec = sc.cluster;
    spec.nodes = p.nodes;
    ComponentCounts counts;
    counts.gpus = p.accelerators;
    counts.nodes = p.nodes;
    counts.nics = static_cast<double>(p.nodes) * spec.node.nics;
    counts.links = counts.nics;
    counts.switches = Topology(spec).fabric_switches();
    RunLength length;
    if (request.wall_s > 0) {
      length.wall_s = request.wall_s;
    } else {
      length.work_s = request.samples / p.samples_per_s;
    }
    RunRow row;
    row.accelerators = p.accelerators;
    row.what = p.algorithm;
    row.samples_per_s = p.samples_per_s;
    try {
      row.outlook = run_outlook(sc.run, counts, checkpoint_bytes, p.nodes, length, sampling.samples, sampling.seed);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::to_string(p.accelerators) + " accelerators, the whole run: " + e.what());
    }
    row.useful_samples = row.outlook.run.work_s * p.samples_per_s;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

const char* predict_usage() {
  static const std::string text =
      std::string(
          "usage: dtsim predict [SCENARIO] [flags]\n"
          "Simulates data-parallel training steps of the scenario's model on its cluster (SimGrid: compute per\n"
          "layer, gradient buckets allreduced as backward produces them) and prints, per accelerator count and\n"
          "algorithm, the step time, samples/s, speedup and efficiency over one accelerator, the breakdown and\n"
          "the bottleneck. Without SCENARIO: ") +
      default_scenario + " (ResNet-50 on 4x V100 NVLink nodes, 100 Gb/s EDR, 1 to 64 GPUs).\n\n" +
      flags_help(predict_all_flags);
  return text.c_str();
}

const char* scenario_file_help() {
  static const std::string text =
      "Scenario files: every field, its default and what it accepts.\n\n" + scenario_fields_markdown();
  return text.c_str();
}

const char* device_file_help() {
  static const std::string text =
      "Device files: every field, its default and what it accepts. A scenario's \"device\" (and --device) takes a "
      "built-in device's name, a path to a device file, or (in a scenario) the object inline.\n\nBuilt-in devices "
      "(scenarios/devices/NAME.json): " +
      builtin_device_names(DTSIM_DATA_DIR) + "\nOld names, aliases of those files: " + device_alias_names() + "\n\n" +
      device_fields_markdown();
  return text.c_str();
}

const char* model_file_help() {
  static const std::string text =
      "Model files ({\"model\": {...}}, scenarios/models/*.json; docs/models.md has the FLOP formulas): every field, "
      "its default and what it accepts.\nBuilt-in models: " +
      builtin_models(DTSIM_DATA_DIR) + ".\n\n" + model_fields_markdown();
  return text.c_str();
}

int predict_command(std::span<char* const> args, std::ostream& out) {
  std::string path = std::string(DTSIM_DATA_DIR) + "/" + default_scenario;
  if (!args.empty() && !std::string_view(args[0]).starts_with("--")) {
    path = args[0];
    args = args.subspan(1);
    if (path.empty()) throw UsageError("expected a scenario file (or none for the default), got ''");
  }
  const Flags flags(predict_all_flags, args);
  const bool csv = csv_output(flags);
  for (const char* flag : {"run", "samples-to-train", "tokens"})
    flags.refuse_unless(flag, !csv, "not with --csv (the run is in the text and --json output)");
  const TraceRequest trace = parse_trace_request(flags);
  Scenario scenario;
  try {
    scenario = load_scenario_file(path, DTSIM_DATA_DIR, ScenarioCheck::before_overrides);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  const ScenarioVariants variants = apply_overrides(scenario, flags, flags.has("search"));
  const std::string& where = variants.where;
  const std::optional<HeldoutErrors> heldout = shipped_heldout();
  const HeldoutErrors* heldout_ptr = heldout ? &*heldout : nullptr;
  if (variants.several() && flags.has("trace")) {
    throw UsageError(
        "--trace: one trace file per run: give single values to --batch, --model, --device and "
        "--precision");
  }
  std::vector<std::string> algorithms = scenario.algorithms;
  if (flags.has("algorithm")) {
    algorithms.clear();
    const std::string list = flags.get("algorithm");
    if (list == "all") {
      for (const AlgorithmInfo& info : dtsim::algorithms()) {
        if (info.collective == Collective::allreduce && !info.switch_helpers) algorithms.emplace_back(info.name);
      }
    } else {
      algorithms = split(list);
      flags.parse("algorithm", [&](const std::string&) {
        for (const std::string& name : algorithms)
          check_allreduce_name(name);
        check_distinct_names(algorithms, list);
        return 0;
      });
    }
  }
  std::vector<Scenario> scenarios;
  for (const ScenarioVariant& v : variants.variants) {
    scenarios.push_back(v.scenario);
    scenarios.back().algorithms = algorithms;
  }
  std::vector<std::string> texts;
  std::vector<nlohmann::json> docs;

  if (scenario.parallel || flags.has("search")) {
    const std::string why = flags.has("search") ? "--search" : "a scenario with \"parallel\"";
    if (flags.has("resume")) throw UsageError("--resume: not with " + why);
    // each layout's executor is chosen by its size (sim/scenario_step), and one algorithm is simulated
    flags.refuse_unless("backend", false, "not with " + why + " (each layout's executor is chosen by its size)");
    flags.refuse_unless("rank-classes", false, "not with " + why + " (each layout's executor is chosen by its size)");
    for (const char* flag : {"samples", "seed", "sampler", "run", "samples-to-train", "tokens"})
      flags.refuse_unless(flag, false,
                          "not with " + why + " (the Monte Carlo samples data-parallel steps only, so far)");
    if (scenario.setup.variability.per_rank()) {
      throw UsageError(where +
                       ": variability.jitter and variability.slow_nodes: data-parallel scenarios only, so far "
                       "(not with " +
                       why + "; background_load applies to every layout)");
    }
    if (flags.has("algorithm") && algorithms.size() > 1) {
      throw UsageError("--algorithm: one algorithm with " + why + ", got " + std::to_string(algorithms.size()));
    }
    const bool search = flags.has("search") || (scenario.parallel && scenario.parallel->search);
    CsvTable table(csv_columns(variants, parallel_csv_columns()));
    for (std::size_t v = 0; v < scenarios.size(); ++v) {
      const Scenario& sc = scenarios[v];
      const std::vector<ParallelPrediction> results = predict_layouts(sc, flags, where, trace);
      if (flags.has("json")) {
        docs.push_back(parallel_json(sc, results, heldout_ptr));
      } else if (csv) {
        for (const ParallelPrediction& p : results)
          table.add_row(csv_row(
              variants, v,
              parallel_csv_cells(p, p.fits ? throughput_range(sc.setup, heldout_ptr, p.samples_per_s) : std::nullopt,
                                 sc.setup.model.tokens_per_sample)));
      } else {
        texts.push_back(parallel_text(sc, results, search, heldout_ptr));
      }
    }
    if (csv) {
      out << table.str();
    } else {
      print_variants(variants, texts, docs, flags.has("json"), out);
    }
    return 0;
  }

  const std::string backend_choice = flags.choice("backend", {"auto", "simgrid", "flow", "analytical"});
  // auto: sim/scenario_step.hpp's auto_step_backend (a cluster with a collective library: the flow engine at any size)
  const auto backend_for = [&backend_choice, &scenarios](int accelerators) {
    if (backend_choice == "auto") {
      return std::any_of(
                 scenarios.begin(), scenarios.end(),
                 [&](const Scenario& sc) { return auto_step_backend(accelerators, sc.cluster) == Backend::flow; })
                 ? Backend::flow
                 : Backend::simgrid;
    }
    return backend_choice == "flow"         ? Backend::flow
           : backend_choice == "analytical" ? Backend::analytical
                                            : Backend::simgrid;
  };
  if (flags.has("trace") && (backend_choice == "flow" || backend_choice == "analytical")) {
    throw UsageError("--trace: needs --backend simgrid or auto");
  }
  const bool rank_classes = flags.choice("rank-classes", {"on", "off"}) == "on";
  StepSampling sampling;
  const bool jitter =
      std::any_of(scenarios.begin(), scenarios.end(), [](const Scenario& sc) { return sc.setup.variability.random(); });
  sampling.samples = flags.has("samples") ? static_cast<int>(flags.integer("samples", 1, 1000000))
                     : jitter             ? whole_passes(scenarios.front().setup.variability.jitter, 100)
                                          : 0;
  sampling.seed = static_cast<std::uint64_t>(flags.has("seed") ? flags.integer("seed", 0, INT64_MAX) : 1);
  sampling.sampler = flags.choice("sampler", {"fast", "exact"}) == "exact" ? Sampler::exact : Sampler::fast;
  sampling.max_seconds = simgrid_time_limit_s;  // exact samples: estimated from the first of them
  if (sampling.samples == 0) {                  // (nothing is drawn: they had been accepted and ignored)
    flags.refuse_unless("seed", false, "needs --samples, or a scenario with random variability (docs/variability.md)");
    flags.refuse_unless("sampler", false,
                        "needs --samples, or a scenario with random variability (docs/variability.md)");
  }
  if (flags.has("rank-classes") && backend_choice == "simgrid") {
    throw UsageError("--rank-classes: only the flow backend simulates classes of ranks (got --backend simgrid)");
  }
  const std::vector<int>& sizes = scenarios.front().accelerators;  // every variant predicts the same sizes
  const int largest = *std::max_element(sizes.begin(), sizes.end());
  check_trace_ranks(trace, largest);
  // the largest configuration is recorded when traced (on SimGrid whatever the backend), or when SimGrid runs it
  const bool record =
      largest > 1 &&
      (flags.has("trace") || (largest <= record_accelerators_limit && backend_for(largest) == Backend::simgrid));
  std::vector<StepTrace> traced(scenarios.size());
  // the configurations: every (variant, accelerators, algorithm) but one accelerator, the variant's baseline itself
  struct Configuration {
    std::size_t variant;
    int accelerators;
    std::string algorithm;
  };
  std::vector<Configuration> todo;
  for (std::size_t v = 0; v < scenarios.size(); ++v) {
    for (int a : sizes) {
      if (a == 1) continue;
      for (const std::string& algorithm : algorithms)
        todo.push_back({v, a, algorithm});
    }
  }
  const auto describe = [&](std::size_t c) {
    const std::string text = todo[c].algorithm + " on " + std::to_string(todo[c].accelerators) + " accelerators";
    return variants.several() ? variants.variants[todo[c].variant].describe() + ", " + text : text;
  };
  if (flags.has("resume") && flags.has("trace")) throw UsageError("--resume: not with --trace");
  // --run, --samples-to-train and --tokens checked before anything is simulated (a bad one costs nothing to refuse)
  for (const Scenario& sc : scenarios)
    (void)run_request(flags, sc);
  Sweep sweep(flags.has("resume") ? flags.get("resume") : "", sweep_signature("predict", args));
  if (flags.has("trace") && sweep.processes() > 1) throw UsageError("--trace: not in an MPI sweep (run it alone)");
  double floor_s = 0;  // refused before the first configuration runs: a list of 100,000 sizes would run for days
  for (const Configuration& c : todo)
    floor_s += configuration_floor_s + accelerator_floor_s * c.accelerators;
  floor_s /= sweep.processes();
  if (floor_s > sweep_limit_s && !flags.has("force")) {
    throw UsageError(where + ": " + std::to_string(todo.size()) + " configurations (sizes x algorithms" +
                     (variants.several() ? " x variants" : "") + ") take at least " + format_seconds(floor_s) +
                     (sweep.processes() > 1 ? " in each of " + std::to_string(sweep.processes()) + " processes" : "") +
                     " (1 ms a configuration and 2 us an accelerator, a tenth of what they take), above the " +
                     format_seconds(sweep_limit_s) +
                     " limit: use fewer sizes or algorithms, mpirun -n K with --resume to split them over K processes, "
                     "or --force to run them anyway");
  }
  const std::vector<nlohmann::json> records = sweep.run(
      todo.size(),
      [&](std::size_t c) {
        const auto& [v, a, algorithm] = todo[c];
        const Scenario& sc = scenarios[v];
        const bool record_this = record && a == largest && algorithm == algorithms.front();
        StepRequest request;
        request.accelerators = a;
        request.algorithm = algorithm;
        request.backend = record_this ? Backend::simgrid : backend_for(a);
        request.rank_classes = rank_classes;
        request.trace = record_this ? &traced[v] : nullptr;
        // how far a long configuration's simulation is, on a terminal (over the sweep's line while it runs), once it
        // has run for a second
        FractionLine reductions("predict " + describe(c) + ": reductions simulated", sweep.processes() == 1);
        if (reductions.shown()) request.progress = [&](double fraction) { reductions.update(fraction); };
        Prediction p;
        try {
          request.sampling = sampling;
          p = *simulate_step(sc.setup, sc.cluster, request).plain();
        } catch (const OptionError& e) {
          throw UsageError(where + ": " + algorithm + " on " + std::to_string(a) + " accelerators: " + e.what());
        } catch (const std::invalid_argument& e) {
          throw UsageError(where + ": " + std::to_string(a) + " accelerators: " + e.what());
        }
        nlohmann::json out_record = to_record(p);
        if (record_this && !traced[v].run.spans.empty()) {  // the links it loaded travel with the record
          out_record["links"] = to_record(traced[v].links);
          out_record["links_run_s"] = traced_run_s(traced[v]);
        }
        return out_record;
      },
      describe);
  if (!sweep.is_root()) return 0;  // rank 0 of an MPI job reports
  std::size_t next = 0;
  CsvTable table(csv_columns(variants, predict_csv_columns()));
  for (std::size_t v = 0; v < scenarios.size(); ++v) {
    const Scenario& sc = scenarios[v];
    const Prediction baseline = predict_step(sc.setup, sc.cluster, 1, algorithms.front(), nullptr, Backend::simgrid,
                                             std::nullopt, true, sampling);
    bool traced_ran = false;  // (a configuration that does not fit is not run)
    double links_run_s = 0;
    std::vector<Prediction> results;
    for (int a : sizes) {
      if (a == 1) {
        Prediction p = baseline;
        p.algorithm = "none";
        compare_to_baseline(p, baseline);
        results.push_back(p);
        continue;
      }
      for (std::size_t k = 0; k < algorithms.size(); ++k, ++next) {
        Prediction p = prediction_from_record(records[next]);
        if (records[next].contains("links")) {
          traced_ran = true;
          traced[v].links = links_from_record(records[next]["links"]);
          links_run_s = records[next]["links_run_s"].get<double>();
        }
        compare_to_baseline(p, baseline);
        results.push_back(p);
      }
    }
    const RunRequest run = run_request(flags, sc);
    const std::vector<RunRow> runs = run.asked ? run_rows(sc, results, run, sampling) : std::vector<RunRow>{};
    const std::string traced_what = std::to_string(largest) + " accelerators (" + algorithms.front() + ")";
    if (flags.has("trace")) {
      if (!traced_ran)
        throw UsageError("--trace: the largest configuration, " + traced_what + ", does not fit in memory");
      write_trace_file(trace, traced[v].run, largest, traced[v].links, sc.name + ", " + traced_what, std::cerr);
    }
    if (flags.has("json")) {
      nlohmann::json doc = predict_json(sc, results, heldout_ptr);
      if (traced_ran) {
        doc["links"] = {{"accelerators", largest},
                        {"algorithm", algorithms.front()},
                        {"loaded", traced[v].links.size()},
                        {"busiest", links_json(traced[v].links, 20)},
                        {"groups", link_groups_json(traced[v].links, 20)}};
      }
      if (run.asked) {
        nlohmann::json list = nlohmann::json::array();
        for (const RunRow& r : runs) {
          nlohmann::json j = run_json(r);
          j["accelerators"] = r.accelerators;
          j["algorithm"] = r.what;
          list.push_back(std::move(j));
        }
        doc["run"] = {{"length", run.text}, {"results", list}};
      }
      docs.push_back(std::move(doc));
    } else if (csv) {
      for (const Prediction& p : results)
        table.add_row(csv_row(
            variants, v,
            predict_csv_cells(p, p.fits ? throughput_range(sc.setup, heldout_ptr, p.samples_per_s) : std::nullopt,
                              p.fits ? speedup_range(sc.setup, heldout_ptr, p.speedup, p.accelerators) : std::nullopt,
                              sc.setup.model.tokens_per_sample)));
    } else {
      std::string text = predict_text(sc, results, heldout_ptr);
      if (traced_ran) {
        text += "\nLinks at " + traced_what + " over " + std::to_string(sc.setup.steps) + " simulated steps:\n";
        text += links_text(traced[v].links, 5, links_run_s);
      } else if (const auto counted = std::find_if(results.begin(), results.end(),
                                                   [&](const Prediction& p) {
                                                     return p.accelerators == largest &&
                                                            p.algorithm == algorithms.front() &&
                                                            !p.busiest_links.empty();
                                                   });
                 counted != results.end()) {  // (no recorded run: the bytes its schedules put on the links)
        text += "\nLinks at " + traced_what + ", one step's bytes from its schedules and routes (the " +
                to_string(counted->backend) + " executor records no busy times):\n";
        text += step_link_groups_text(counted->busiest_links, counted->step.step_s);
      }
      if (run.asked) text += run_text(runs, run.text);
      texts.push_back(std::move(text));
    }
  }
  if (csv) {
    out << table.str();
  } else {
    print_variants(variants, texts, docs, flags.has("json"), out);
  }
  return 0;
}

}  // namespace dtsim::cli
