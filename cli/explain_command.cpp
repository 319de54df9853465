// `dtsim explain [SCENARIO]`: what bounds the training step at each size, where scaling efficiency falls below 80%,
// and what would help, every claim backed by re-simulating the what-if.
#include <array>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "algorithms/registry.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "reports/format.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/predict.hpp"

namespace dtsim::cli {
namespace {

constexpr const char* default_scenario = "scenarios/training/resnet50-v100.json";

constexpr std::array<FlagSpec, 2> explain_flags{{
    {"algorithm", "NAME", "the scenario's first", "the allreduce algorithm to explain"},
    {"json", "", "", "print one JSON object (sizes and claims) instead of text"},
}};

struct Claim {
  std::string what;
  double factor = 0;  // samples/s of the what-if over samples/s as is
  double samples_per_s = 0;
};

std::string percent(double x) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * x);
  return text;
}

std::string times(double x) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2fx", x);
  return text;
}

}  // namespace

const char* explain_usage() {
  static const std::string text = std::string(
                                      "usage: dtsim explain [SCENARIO] [flags]\n"
                                      "Says in words what bounds the training step at each size of the "
                                      "scenario, where scaling efficiency falls\nbelow 80%, and what would "
                                      "help at the largest size, each claim re-simulated. Without SCENARIO: ") +
                                  default_scenario + ".\n\n" + flags_help(explain_flags);
  return text.c_str();
}

int explain_command(std::span<char* const> args, std::ostream& out) {
  std::string path = std::string(DTSIM_DATA_DIR) + "/" + default_scenario;
  if (!args.empty() && !std::string_view(args[0]).starts_with("--")) {
    path = args[0];
    args = args.subspan(1);
  }
  const Flags flags(explain_flags, args);
  Scenario scenario;
  try {
    scenario = load_scenario_file(path, DTSIM_DATA_DIR);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  const std::string algorithm =
      flags.has("algorithm")
          ? flags.parse("algorithm", [](const std::string& v) { return std::string(find_algorithm(v).name); })
          : scenario.algorithms.front();
  const TrainingSetup& setup = scenario.setup;
  const Prediction baseline = predict_step(setup, scenario.cluster, 1, algorithm, nullptr, auto_backend(1));
  std::vector<Prediction> sizes;
  std::optional<int> below_80;
  for (int a : scenario.accelerators) {
    Prediction p = a == 1 ? baseline : predict_step(setup, scenario.cluster, a, algorithm, nullptr, auto_backend(a));
    compare_to_baseline(p, baseline);
    if (p.fits && p.efficiency < 0.8 && !below_80) below_80 = a;
    sizes.push_back(p);
  }
  // what-ifs at the largest size
  const int largest = scenario.accelerators.back();
  const Prediction& as_is = sizes.back();
  std::vector<Claim> claims;
  auto claim = [&](const std::string& what, const Prediction& p) {
    if (!p.fits || !as_is.fits || as_is.samples_per_s <= 0) return;
    claims.push_back(Claim{what, p.samples_per_s / as_is.samples_per_s, p.samples_per_s});
  };
  if (largest > 1) {
    if (algorithm != "hierarchical" && largest % scenario.cluster.node.accelerators == 0) {
      claim("hierarchical allreduce instead of " + algorithm,
            predict_step(setup, scenario.cluster, largest, "hierarchical", nullptr, auto_backend(largest)));
    }
    if (algorithm != "ring")
      claim("ring allreduce instead of " + algorithm,
            predict_step(setup, scenario.cluster, largest, "ring", nullptr, auto_backend(largest)));
    ClusterSpec faster = scenario.cluster;
    faster.node.nic.bandwidth_Bps *= 2;
    faster.fabric.link.bandwidth_Bps *= 2;
    faster.fabric.global_link.bandwidth_Bps *= 2;
    claim("doubling NIC and fabric bandwidth",
          predict_step(setup, faster, largest, algorithm, nullptr, auto_backend(largest)));
    if (setup.scaling == ScalingMode::weak) {
      TrainingSetup bigger = setup;
      bigger.batch *= 2;
      claim("per-accelerator batch " + std::to_string(bigger.batch) + " instead of " + std::to_string(setup.batch),
            predict_step(bigger, scenario.cluster, largest, algorithm, nullptr, auto_backend(largest)));
    }
    if (setup.input.enabled) {
      TrainingSetup more = setup;
      more.input.cores *= 2;
      claim("twice the input-pipeline cores",
            predict_step(more, scenario.cluster, largest, algorithm, nullptr, auto_backend(largest)));
    }
  }
  if (flags.has("json")) {
    nlohmann::json j{{"scenario", scenario.name}, {"algorithm", algorithm}};
    for (const Prediction& p : sizes) {
      j["sizes"].push_back({{"accelerators", p.accelerators},
                            {"fits", p.fits},
                            {"samples_per_s", p.samples_per_s},
                            {"efficiency", p.efficiency},
                            {"bottleneck", p.bottleneck}});
    }
    j["efficiency_below_80_at"] = below_80 ? nlohmann::json(*below_80) : nlohmann::json(nullptr);
    j["claims_at"] = largest;
    j["claims"] = nlohmann::json::array();
    for (const Claim& c : claims) {
      j["claims"].push_back({{"what", c.what}, {"factor", c.factor}, {"samples_per_s", c.samples_per_s}});
    }
    out << j.dump() << '\n';
    return 0;
  }
  out << "explain " << scenario.name << ": " << setup.model.name << " on " << scenario.cluster.name << ", " << algorithm
      << " allreduce, " << to_string(setup.scaling) << " scaling, batch " << setup.batch << "\n\n";
  for (const Prediction& p : sizes) {
    out << "  " << p.accelerators << (p.accelerators == 1 ? " accelerator: " : " accelerators: ");
    if (!p.fits) {
      out << p.bottleneck << '\n';
      continue;
    }
    out << format_seconds(p.step.step_s) << " a step, " << times(p.speedup) << " (" << percent(p.efficiency)
        << " efficient); " << p.bottleneck << '\n';
  }
  out << '\n';
  if (below_80) {
    out << "  Scaling efficiency falls below 80% at " << *below_80 << " accelerators.\n";
  } else {
    out << "  Scaling efficiency stays at or above 80% up to " << largest << " accelerators.\n";
  }
  if (!claims.empty()) {
    out << "  At " << largest << " accelerators, re-simulated:\n";
    for (const Claim& c : claims) {
      out << "    " << c.what << ": " << times(c.factor) << " the samples/s ("
          << static_cast<long long>(c.samples_per_s) << ")\n";
    }
  }
  return 0;
}

}  // namespace dtsim::cli
