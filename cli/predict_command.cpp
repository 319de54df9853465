// `dtsim predict [SCENARIO]`: training throughput, speedup and bottleneck of a scenario over accelerator counts and
// allreduce algorithms.
#include <array>
#include <iostream>

#include "algorithms/registry.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "reports/predict_report.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "scenarios/units.hpp"
#include "sim/predict.hpp"

namespace dtsim::cli {
namespace {

constexpr const char* default_scenario = "scenarios/training/resnet50-v100.json";

constexpr std::array<FlagSpec, 4> predict_flags{{
    {"nodes", "LIST", "from the scenario",
     "node counts (accelerators = nodes x accelerators per node), e.g. 1,2,...,16"},
    {"accelerators", "LIST", "from the scenario", "accelerator counts, e.g. 1,2,4,...,64"},
    {"algorithm", "NAME", "from the scenario", "allreduce algorithms, comma-separated, or all"},
    {"json", "", "", "print one JSON object with a results list instead of the table"},
}};

std::vector<int> parse_counts(const Flags& flags, const char* name) {
  return flags.parse(name, [](const std::string& v) {
    return parse_list<int>(
        v, [](const std::string& one) { return static_cast<int>(parse_integer(one, 1, 1 << 20)); }, 2.0);
  });
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
      flags_help(predict_flags);
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
  const Flags flags(predict_flags, args);
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
    check_batch_splits(scenario, scenario.accelerators, where);
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

  const Prediction baseline = predict_step(scenario.setup, scenario.cluster, 1, scenario.algorithms.front());
  std::vector<Prediction> results;
  for (int a : scenario.accelerators) {
    if (a == 1) {
      Prediction p = baseline;
      p.algorithm = "none";
      compare_to_baseline(p, baseline);
      results.push_back(p);
      continue;
    }
    for (const std::string& algorithm : scenario.algorithms) {
      Prediction p;
      try {
        p = predict_step(scenario.setup, scenario.cluster, a, algorithm);
      } catch (const OptionError& e) {
        throw UsageError(where + ": " + algorithm + " on " + std::to_string(a) + " accelerators: " + e.what());
      } catch (const std::invalid_argument& e) {
        throw UsageError(where + ": " + std::to_string(a) + " accelerators: " + e.what());
      }
      compare_to_baseline(p, baseline);
      results.push_back(p);
    }
  }
  if (flags.has("json")) {
    out << predict_json(scenario, results).dump() << '\n';
  } else {
    out << predict_text(scenario, results);
  }
  return 0;
}

}  // namespace dtsim::cli
