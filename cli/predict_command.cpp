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
#include "cli/sweep.hpp"
#include "reports/predict_report.hpp"
#include "reports/progress.hpp"
#include "reports/result_csv.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "scenarios/units.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"

namespace dtsim::cli {
namespace {

constexpr const char* default_scenario = "scenarios/training/resnet50-v100.json";

constexpr std::array<FlagSpec, 9> predict_flags{{
    {"resume", "FILE", "",
     "append each finished configuration to FILE as a JSON line; rerun the same command to skip those already there "
     "(also under mpirun -n K, which splits the configurations over K processes; not with --search or --trace)"},
    {"backend", "NAME", "auto",
     "what times each step: simgrid (every message), flow (flow-level, sim/flow_executor), or auto (SimGrid up to "
     "64 accelerators, flow above)"},
    {"rank-classes", "ON|OFF", "on",
     "flow only: simulate one rank per class of ranks that provably run alike, with the same times (on), or every "
     "rank (off: to compare)"},
    {"nodes", "LIST", "from the scenario",
     "node counts (accelerators = nodes x accelerators per node), e.g. 1,2,...,16"},
    {"accelerators", "LIST", "from the scenario", "accelerator counts, e.g. 1,2,4,...,64"},
    {"algorithm", "NAME", "from the scenario", "allreduce algorithms, comma-separated, or all"},
    {"json", "", "", "print one JSON object with a results list instead of the table"},
    {"search", "", "",
     "model parallelism: at each accelerator count try every data x tensor x pipeline layout (with the least ZeRO "
     "sharding that fits in memory) and rank them by time per sample, fastest first (weak scaling: every layout "
     "trains batch x accelerators samples per step)"},
    {"trace", "FILE", "",
     "write the timeline of the largest configuration (first algorithm) as Chrome trace-event JSON (Perfetto, "
     "chrome://tracing): per rank its forward, backward, optimizer and allreduce intervals, per busy link its use"},
}};

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

std::vector<int> parse_counts(const Flags& flags, const char* name) {
  return flags.parse(name, [](const std::string& v) {
    return parse_list<int>(
        v, [](const std::string& one) { return static_cast<int>(parse_integer(one, 1, 1 << 20)); }, 2.0);
  });
}

// Scenarios with "parallel" (or --search): one layout per accelerator count, or every layout that fits.
int predict_parallel_command(const Scenario& scenario, const Flags& flags, const std::string& where,
                             const TraceRequest& trace, std::ostream& out) {
  if (flags.has("resume")) throw UsageError("--resume: not with --search or a scenario with \"parallel\"");
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
      for (const ParallelLayout& l : layouts)
        todo.emplace_back(a, l);
    } else {
      if (a % (spec.tensor * spec.pipeline) != 0) {
        throw UsageError(where + ": " + std::to_string(a) +
                         " is not a multiple of tensor x pipeline = " + std::to_string(spec.tensor * spec.pipeline));
      }
      todo.emplace_back(a, spec.layout(a));
    }
  }
  std::vector<ParallelPrediction> results;
  ProgressLine progress("predict", todo.size());
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const auto& [a, layout] = todo[i];
    progress.next(layout.describe());
    const bool record = flags.has("trace") && i + 1 == todo.size();
    try {
      results.push_back(predict_parallel(scenario.setup, scenario.cluster, layout, algorithm, record));
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
  if (flags.has("json")) {
    out << parallel_json(scenario, results).dump() << '\n';
  } else if (flags.has("csv")) {
    out << parallel_csv(results);
  } else {
    out << parallel_text(scenario, results, search);
  }
  return 0;
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

int predict_command(std::span<char* const> args, std::ostream& out) {
  std::string path = std::string(DTSIM_DATA_DIR) + "/" + default_scenario;
  if (!args.empty() && !std::string_view(args[0]).starts_with("--")) {
    path = args[0];
    args = args.subspan(1);
  }
  const Flags flags(predict_all_flags, args);
  const bool csv = csv_output(flags);
  const TraceRequest trace = parse_trace_request(flags);
  Scenario scenario;
  try {
    scenario = load_scenario_file(path, DTSIM_DATA_DIR);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  if (flags.has("nodes") && flags.has("accelerators")) {
    throw UsageError("--nodes: give either --nodes or --accelerators, not both");
  }
  std::string where = "scenario.accelerators";
  if (flags.has("accelerators")) {
    scenario.accelerators = parse_counts(flags, "accelerators");
    where = "--accelerators";
  } else if (flags.has("nodes")) {
    scenario.accelerators.clear();
    for (int n : parse_counts(flags, "nodes"))
      scenario.accelerators.push_back(n * scenario.cluster.node.accelerators);
    where = "--nodes";
  }
  try {
    if (!scenario.parallel && !flags.has("search")) check_batch_splits(scenario, scenario.accelerators, where);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  if (flags.has("algorithm")) {
    scenario.algorithms.clear();
    const std::string list = flags.get("algorithm");
    if (list == "all") {
      for (const AlgorithmInfo& info : algorithms()) {
        if (info.collective == Collective::allreduce) scenario.algorithms.emplace_back(info.name);
      }
    } else {
      for (const std::string& name : split(list)) {
        flags.parse("algorithm", [&name](const std::string&) { return &find_algorithm(name); });
        scenario.algorithms.push_back(name);
      }
    }
  }

  if (scenario.parallel || flags.has("search")) return predict_parallel_command(scenario, flags, where, trace, out);

  const std::string backend_choice = flags.choice("backend", {"auto", "simgrid", "flow"});
  const auto backend_for = [&backend_choice](int accelerators) {
    return backend_choice == "auto" ? auto_backend(accelerators)
                                    : (backend_choice == "flow" ? Backend::flow : Backend::simgrid);
  };
  if (flags.has("trace") && backend_choice == "flow") throw UsageError("--trace: needs --backend simgrid or auto");
  const bool rank_classes = flags.choice("rank-classes", {"on", "off"}) == "on";
  if (flags.has("rank-classes") && backend_choice == "simgrid") {
    throw UsageError("--rank-classes: only the flow backend simulates classes of ranks (got --backend simgrid)");
  }
  const Prediction baseline = predict_step(scenario.setup, scenario.cluster, 1, scenario.algorithms.front());
  const int largest = *std::max_element(scenario.accelerators.begin(), scenario.accelerators.end());
  check_trace_ranks(trace, largest);
  // the largest configuration is recorded when traced (on SimGrid whatever the backend), or when SimGrid runs it
  const bool record =
      largest > 1 &&
      (flags.has("trace") || (largest <= record_accelerators_limit && backend_for(largest) == Backend::simgrid));
  StepTrace traced;
  // the configurations: every (accelerators, algorithm) but one accelerator, which is the baseline itself
  std::vector<std::pair<int, std::string>> todo;
  for (int a : scenario.accelerators) {
    if (a == 1) continue;
    for (const std::string& algorithm : scenario.algorithms)
      todo.emplace_back(a, algorithm);
  }
  if (flags.has("resume") && flags.has("trace")) throw UsageError("--resume: not with --trace");
  Sweep sweep(flags.has("resume") ? flags.get("resume") : "", sweep_signature("predict", args));
  if (flags.has("trace") && sweep.processes() > 1) throw UsageError("--trace: not in an MPI sweep (run it alone)");
  const std::vector<nlohmann::json> records = sweep.run(
      todo.size(),
      [&](std::size_t c) {
        const auto& [a, algorithm] = todo[c];
        const bool record_this = record && a == largest && algorithm == scenario.algorithms.front();
        Prediction p;
        try {
          p = predict_step(scenario.setup, scenario.cluster, a, algorithm, record_this ? &traced : nullptr,
                           record_this ? Backend::simgrid : backend_for(a), std::nullopt, rank_classes);
        } catch (const OptionError& e) {
          throw UsageError(where + ": " + algorithm + " on " + std::to_string(a) + " accelerators: " + e.what());
        } catch (const std::invalid_argument& e) {
          throw UsageError(where + ": " + std::to_string(a) + " accelerators: " + e.what());
        }
        nlohmann::json out_record = to_record(p);
        if (record_this && !traced.run.spans.empty()) {  // the links it loaded travel with the record
          out_record["links"] = to_record(traced.links);
          out_record["links_run_s"] = traced_run_s(traced);
        }
        return out_record;
      },
      [&](std::size_t c) { return todo[c].second + " on " + std::to_string(todo[c].first) + " accelerators"; });
  if (!sweep.is_root()) return 0;  // rank 0 of an MPI job reports
  bool traced_ran = false;         // (a configuration that does not fit is not run)
  double links_run_s = 0;
  std::vector<Prediction> results;
  std::size_t next = 0;
  for (int a : scenario.accelerators) {
    if (a == 1) {
      Prediction p = baseline;
      p.algorithm = "none";
      compare_to_baseline(p, baseline);
      results.push_back(p);
      continue;
    }
    for (std::size_t k = 0; k < scenario.algorithms.size(); ++k, ++next) {
      Prediction p = prediction_from_record(records[next]);
      if (records[next].contains("links")) {
        traced_ran = true;
        traced.links = links_from_record(records[next]["links"]);
        links_run_s = records[next]["links_run_s"].get<double>();
      }
      compare_to_baseline(p, baseline);
      results.push_back(p);
    }
  }
  const std::string traced_what = std::to_string(largest) + " accelerators (" + scenario.algorithms.front() + ")";
  if (flags.has("trace")) {
    if (!traced_ran)
      throw UsageError("--trace: the largest configuration, " + traced_what + ", does not fit in memory");
    write_trace_file(trace, traced.run, largest, traced.links, scenario.name + ", " + traced_what, std::cerr);
  }
  if (flags.has("json")) {
    nlohmann::json doc = predict_json(scenario, results);
    if (traced_ran) {
      doc["links"] = {{"accelerators", largest},
                      {"algorithm", scenario.algorithms.front()},
                      {"loaded", traced.links.size()},
                      {"busiest", links_json(traced.links, 20)},
                      {"groups", link_groups_json(traced.links, 20)}};
    }
    out << doc.dump() << '\n';
  } else if (csv) {
    out << predict_csv(results);
  } else {
    out << predict_text(scenario, results);
    if (traced_ran) {
      out << "\nLinks at " << traced_what << " over " << scenario.setup.steps << " simulated steps:\n";
      out << links_text(traced.links, 5, links_run_s);
    }
  }
  return 0;
}

}  // namespace dtsim::cli
