// `dtsim explain [SCENARIO]`: what bounds the training step at each size, where scaling efficiency falls below 80%,
// and what would help, every claim backed by re-simulating the what-if through the code `dtsim predict` runs
// (cli/explanation.cpp); with list-valued overrides (--batch 16,32,64, ...) one explanation per variant and a summary
// of them that says why exposed communication stays above 0 where it does.
#include <array>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "algorithms/registry.hpp"
#include "cli/commands.hpp"
#include "cli/explanation.hpp"
#include "cli/flags.hpp"
#include "cli/scenario_overrides.hpp"
#include "cli/shipped_heldout.hpp"
#include "reports/format.hpp"
#include "reports/grounding.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/algorithm_choice.hpp"

namespace dtsim::cli {
namespace {

constexpr const char* explain_default_scenario = "scenarios/training/resnet50-v100.json";

constexpr std::array<FlagSpec, 2> explain_own_flags{{
    {"algorithm", "NAME", "the scenario's first", "the allreduce algorithm to explain"},
    {"json", "", "", "print one JSON object (sizes and claims) instead of text"},
}};
constexpr auto explain_flags = join_flags(explain_own_flags, scenario_override_flags);

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

std::string accelerators_text(int n) { return std::to_string(n) + (n == 1 ? " accelerator" : " accelerators"); }

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json result_json(const StepResult& r) {
  return {{"layout", r.layout_text()},        {"fits", r.fits()},
          {"step_time_s", r.step_s()},        {"samples_per_s", r.samples_per_s()},
          {"global_batch", r.global_batch()}, {"exposed_comm_s", r.exposed_comm_s()},
          {"bottleneck", r.bottleneck()}};
}

// "the last of its 4 gradient buckets (9.4 MB: conv1 to layer1.2) is complete only when backward ends, so its
// allreduce cannot overlap backward; simulated alone, that ring allreduce takes 3.9 ms on 64 accelerators (simgrid)"
std::string floor_reason(const ExposedFloor& f, int accelerators) {
  std::string layers = f.first_layer == f.last_layer ? f.first_layer : f.first_layer + " to " + f.last_layer;
  return "the last of its " + std::to_string(f.last.buckets) + " gradient bucket" + (f.last.buckets == 1 ? "" : "s") +
         " (" + format_bytes(f.last.bucket.bytes) + ": " + layers +
         ") is complete only when backward ends, so its reduction cannot overlap backward; simulated alone, that " +
         f.last.operation + " takes " + format_seconds(f.last.alone_s) + " on " + accelerators_text(accelerators) +
         " (" + to_string(f.last.backend) + ")";
}

// What the exposed communication is beyond the last bucket's allreduce: little (the rest is hidden), or earlier
// buckets' allreduces that backward did not hide (", little more ..." or ": that allreduce and ...").
std::string floor_remainder(const ExposedFloor& f, double comm_s) {
  if (f.last.buckets == 1) {
    return ", all of it that one " + f.last.operation +
           " of every gradient: nothing overlaps backward, and a larger batch hides none of it; only a shorter " +
           f.last.operation + " helps";
  }
  if (!f.overlapped) {
    return ": that " + f.last.operation + " and " + format_seconds(f.exposed_s - f.last.alone_s) + " of " + f.rest +
           ", since none starts before backward ends (framework.overlap false: DDP's buckets in registration "
           "order, reduced in sequence), so a larger batch hides none of it; only shorter reductions or buckets "
           "that start during backward help";
  }
  if (f.exposed_s <= 1.1 * f.last.alone_s) {
    return ", little more than that " + f.last.operation +
           ": the rest is hidden behind backward, and a larger batch hides no more; only a shorter last " +
           f.last.operation + " helps (smaller buckets, a faster network)";
  }
  return ": that " + f.last.operation + " and " + format_seconds(f.exposed_s - f.last.alone_s) + " of " + f.rest +
         " that compute did not hide (gradient communication is busy " + format_seconds(comm_s) +
         " of the step; a larger batch lengthens backward and hides more of it)";
}

std::string setup_text(const Scenario& sc, const std::string& algorithm, const HeldoutErrors* heldout) {
  const TrainingSetup& s = sc.setup;
  const std::string reduced =
      s.reduce_precision ? std::string(" with gradients reduced in ") + to_string(*s.reduce_precision) : "";
  std::string text = "explain " + sc.name + ": " + s.model.name + " on " + sc.cluster.name + " (" + s.device.name +
                     ", " + to_string(s.compute.precision) + reduced + "), " + algorithm + " allreduce, " +
                     to_string(s.scaling) + " scaling, batch " + std::to_string(s.batch);
  if (s.scaling == ScalingMode::weak) text += " per accelerator";
  if (s.accumulation > 1) {
    text += std::string(" (") + (s.scaling == ScalingMode::weak ? "a micro-batch; " : "") +
            std::to_string(s.accumulation) + " micro-batches a step)";
  }
  if (sc.parallel) {
    const ParallelSpec& p = *sc.parallel;
    text += "; layout " + (p.context > 1 ? std::to_string(p.context) + "c x " : std::string()) +
            std::to_string(p.tensor) + "t x " + std::to_string(p.pipeline) + "p";
    if (p.pipeline > 1) text += std::string(" ") + to_string(p.schedule);
    text += ", " + std::to_string(p.micro_batches) + " micro-batch" + (p.micro_batches == 1 ? "" : "es");
    if (p.sharding != Sharding::none) text += std::string(", ") + to_string(p.sharding);
    if (p.expert > 1) text += ", " + std::to_string(p.expert) + "-way experts";
    if (p.async_tensor && p.tensor > 1) text += ", async tensor";
  }
  const int largest = sc.accelerators.empty() ? 1 : *std::max_element(sc.accelerators.begin(), sc.accelerators.end());
  return text + "\n  grounding: " + grounding_text(s) + "\n  trust: " + trust_text(s, heldout, largest);
}

std::string explanation_text(const Scenario& sc, const Explanation& e, const HeldoutErrors* heldout) {
  std::ostringstream out;
  out << setup_text(sc, e.algorithm, heldout) << "\n\n";
  const bool baseline_listed = e.baseline && std::any_of(e.sizes.begin(), e.sizes.end(), [&](const SizeExplained& s) {
                                 return s.request.accelerators == e.baseline_request.accelerators;
                               });
  if (!e.baseline_is_one_replica) {
    out << "  one replica (" << accelerators_text(one_replica(e.sizes.front().request).accelerators)
        << ") does not fit: " << e.one_replica_bottleneck << '\n';
  } else if (e.baseline && !baseline_listed) {
    out << "  one replica (" << accelerators_text(e.baseline_request.accelerators) << ", " << e.baseline->layout_text()
        << "): " << format_seconds(e.baseline->step_s()) << " a step, "
        << static_cast<long long>(e.baseline->samples_per_s()) << " samples/s (the efficiency baseline)\n";
  }
  for (const SizeExplained& s : e.sizes) {
    out << "  " << accelerators_text(s.request.accelerators);
    if (s.request.layout) out << " (" << s.request.layout->describe() << ")";
    out << ": ";
    if (!s.result.fits()) {
      out << s.result.bottleneck() << '\n';
      continue;
    }
    out << format_seconds(s.result.step_s()) << " a step";
    if (s.speedup) out << ", " << times(*s.speedup) << " (" << percent(*s.efficiency) << " efficient)";
    out << "; " << s.result.bottleneck() << '\n';
  }
  out << '\n';
  int largest_with_efficiency = 0;
  for (const SizeExplained& s : e.sizes) {
    if (s.efficiency) largest_with_efficiency = s.request.accelerators;
  }
  if (e.below_80) {
    out << "  Scaling efficiency falls below 80% at " << accelerators_text(*e.below_80);
  } else if (largest_with_efficiency > 0) {
    out << "  Scaling efficiency stays at or above 80% up to " << accelerators_text(largest_with_efficiency);
  } else {
    out << "  No size fits in memory, so there is no scaling efficiency to report";
  }
  if (e.baseline && !e.baseline_is_one_replica) {
    out << " (against " << e.baseline_request.accelerators << ", the smallest size that fits)";
  } else if (e.baseline && e.baseline_request.accelerators > 1) {
    out << " (against one replica of " << e.baseline_request.accelerators << ")";
  }
  out << ".\n";
  if (e.floor) {
    const ExposedFloor& f = *e.floor;
    const double step_s = e.sizes.back().result.step_s();
    out << "  Exposed communication at " << accelerators_text(e.claims_at) << ": " << format_seconds(f.exposed_s)
        << " (" << percent(f.exposed_s / step_s) << " of the step). It cannot reach 0: " << floor_reason(f, e.claims_at)
        << ". The step waits " << format_seconds(f.exposed_s) << floor_remainder(f, e.sizes.back().result.comm_s())
        << ".\n";
  }
  if (const Prediction* p = e.sizes.back().result.plain(); p != nullptr && p->distribution.samples > 0) {
    const Variability& v = sc.setup.variability;
    const double cost = p->distribution.mean_s / p->step.step_s - 1;
    out << "  Variability at " << accelerators_text(e.claims_at) << " (" << describe(v) << ") costs " << percent(cost)
        << " of the step (" << format_seconds(p->distribution.mean_s) << " on average over " << p->distribution.samples
        << " samples against " << format_seconds(p->step.step_s) << " without it; p99 "
        << format_seconds(p->distribution.p99_s) << "): every synchronous step waits for the "
        << "slowest of " << p->accelerators << " draws.\n";
  }
  if (!e.claims.empty()) {
    out << "  At " << accelerators_text(e.claims_at) << ", re-simulated:\n";
    for (const Claim& c : e.claims) {
      out << "    ";
      if (!c.possible) {
        out << "not possible: " << c.what << ": " << c.why << '\n';
      } else if (!c.result->fits()) {
        out << "does not fit: " << c.what << ": " << c.result->bottleneck() << '\n';
      } else if (c.factor) {
        out << c.what << ": " << times(*c.factor) << " the samples/s ("
            << static_cast<long long>(c.result->samples_per_s()) << ")\n";
      } else {
        out << c.what << ": fits, " << static_cast<long long>(c.result->samples_per_s()) << " samples/s ("
            << format_seconds(c.result->step_s()) << " a step)\n";
      }
    }
  }
  return out.str();
}

nlohmann::json explanation_json(const Scenario& sc, const Explanation& e, const HeldoutErrors* heldout) {
  const TrainingSetup& s = sc.setup;
  nlohmann::json j{{"scenario", sc.name},
                   {"algorithm", e.algorithm},
                   {"model", s.model.name},
                   {"device", s.device.name},
                   {"device_file", s.device.origin},
                   {"grounding", grounding_json(s)},
                   {"trust", trust_json(s, heldout)},
                   {"cluster", sc.cluster.name},
                   {"precision", to_string(s.compute.precision)},
                   {"reduce_precision", to_string(reduced_precision(s))},
                   {"runtime", to_string(s.compute.runtime)},
                   {"optimizer_loop", to_string(s.compute.optimizer_loop)},
                   {"recompute", to_string(s.compute.recompute)},
                   {"memory_format", to_string(s.compute.memory_format)},
                   {"scaling", to_string(s.scaling)},
                   {"batch", s.batch},
                   {"accumulation", s.accumulation}};
  if (e.baseline) {
    j["baseline"] = result_json(*e.baseline);
    j["baseline"]["accelerators"] = e.baseline_request.accelerators;
    j["baseline"]["one_replica"] = e.baseline_is_one_replica;
  } else {
    j["baseline"] = nullptr;
  }
  j["sizes"] = nlohmann::json::array();
  for (const SizeExplained& z : e.sizes) {
    nlohmann::json r = result_json(z.result);
    r["accelerators"] = z.request.accelerators;
    r["speedup"] = optional_json(z.speedup);
    r["efficiency"] = optional_json(z.efficiency);
    j["sizes"].push_back(r);
  }
  j["efficiency_below_80_at"] = e.below_80 ? nlohmann::json(*e.below_80) : nlohmann::json(nullptr);
  j["claims_at"] = e.claims_at;
  j["claims"] = nlohmann::json::array();
  for (const Claim& c : e.claims) {
    nlohmann::json r{{"what", c.what}, {"possible", c.possible}, {"factor", optional_json(c.factor)}};
    if (c.result) {
      r.update(result_json(*c.result));
    } else {
      r["why"] = c.why;
    }
    j["claims"].push_back(r);
  }
  if (e.floor) {
    const ExposedFloor& f = *e.floor;
    j["exposed_floor"] = {{"exposed_comm_s", f.exposed_s},
                          {"buckets", f.last.buckets},
                          {"last_bucket_bytes", f.last.bucket.bytes},
                          {"last_bucket_layers", {f.first_layer, f.last_layer}},
                          {"last_bucket_operation", f.last.operation},
                          {"last_bucket_alone_s", f.last.alone_s},
                          {"backend", to_string(f.last.backend)}};
  } else {
    j["exposed_floor"] = nullptr;
  }
  return j;
}

// Several variants: each one's largest size side by side, and why exposed communication stays above 0 where it does.
struct Summary {
  std::string text;
  nlohmann::json json;
};

Summary summarise(const ScenarioVariants& variants, const std::vector<Explanation>& explanations) {
  std::ostringstream out;
  nlohmann::json rows = nlohmann::json::array();
  const int at = explanations.front().claims_at;
  out << "Over the " << variants.variants.size() << " variants at " << accelerators_text(at) << " ("
      << explanations.front().algorithm << "):\n";
  std::vector<std::size_t> exposed;  // variants that fit and wait for communication
  std::vector<std::size_t> hidden;   // variants that fit and do not
  for (std::size_t v = 0; v < explanations.size(); ++v) {
    const StepResult& r = explanations[v].sizes.back().result;
    const std::string name = variants.variants[v].describe();
    nlohmann::json row = result_json(r);
    row["variant"] = variants.variants[v].values_json();
    rows.push_back(row);
    out << "  " << name << ": ";
    if (!r.fits()) {
      out << r.bottleneck() << '\n';
      continue;
    }
    out << format_seconds(r.step_s()) << " a step, " << static_cast<long long>(r.samples_per_s())
        << " samples/s, exposed communication " << format_seconds(r.exposed_comm_s()) << " ("
        << percent(r.exposed_comm_s() / r.step_s()) << " of the step)";
    if (explanations[v].floor)
      out << ", of which the last bucket's " << explanations[v].floor->last.operation << " "
          << format_seconds(explanations[v].floor->last.alone_s);
    out << '\n';
    (r.exposed_comm_s() > 0 ? exposed : hidden).push_back(v);
  }
  nlohmann::json json{{"accelerators", at}, {"variants", rows}};
  std::string why;
  if (exposed.empty() && hidden.empty()) {
    out << "  None of them fits at " << accelerators_text(at) << ".\n";
  } else if (!hidden.empty()) {
    out << "  Exposed communication is 0 with";
    for (std::size_t k = 0; k < hidden.size(); ++k)
      out << (k == 0 ? " " : ", ") << variants.variants[hidden[k]].describe();
    out << ".\n";
  } else {
    // the variant that waits least (of equals, the last tried), and why even it waits
    std::size_t least = exposed.front();
    for (std::size_t v : exposed) {
      if (explanations[v].sizes.back().result.exposed_comm_s() <=
          explanations[least].sizes.back().result.exposed_comm_s() * (1 + 1e-6))
        least = v;
    }
    const Explanation& e = explanations[least];
    const bool all_fit = exposed.size() == explanations.size();
    out << "  Exposed communication stays above 0 in every variant " << (all_fit ? "tried" : "that fits");
    if (e.floor) {
      why = floor_reason(*e.floor, at);
      out << ": " << why << ". With " << variants.variants[least].describe() << " the step still waits "
          << format_seconds(e.floor->exposed_s) << floor_remainder(*e.floor, e.sizes.back().result.comm_s());
    }
    out << ".\n";
  }
  json["exposed_above_0_everywhere"] = !exposed.empty() && hidden.empty();
  json["why"] = why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why);
  return {out.str(), json};
}

}  // namespace

const char* explain_usage() {
  static const std::string text =
      std::string(
          "usage: dtsim explain [SCENARIO] [flags]\n"
          "Says in words what bounds the training step at each size of the scenario (its data x tensor x "
          "pipeline layout\nand ZeRO stage when it has one), where scaling efficiency falls below 80%, how "
          "much exposed communication\nno overlap can hide, and what would help at the largest size "
          "(algorithms, network, batch, buckets, layout\nchanges), each claim re-simulated as dtsim predict "
          "simulates. List-valued --batch, --model, --device or\n--precision explain each variant and compare "
          "them. Without SCENARIO: ") +
      explain_default_scenario + ".\n\n" + flags_help(explain_flags);
  return text.c_str();
}

int explain_command(std::span<char* const> args, std::ostream& out) {
  std::string path = std::string(DTSIM_DATA_DIR) + "/" + explain_default_scenario;
  if (!args.empty() && !std::string_view(args[0]).starts_with("--")) {
    path = args[0];
    args = args.subspan(1);
    if (path.empty()) throw UsageError("expected a scenario file (or none for the default), got ''");
  }
  const Flags flags(explain_flags, args);
  Scenario scenario;
  try {
    scenario = load_scenario_file(path, DTSIM_DATA_DIR, ScenarioCheck::before_overrides);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  if (scenario.parallel && scenario.parallel->search) {
    throw UsageError(path +
                     ": scenario.parallel.search: explain explains one layout; give tensor, pipeline and "
                     "micro_batches instead (dtsim predict --search ranks every layout)");
  }
  const std::string algorithm = flags.has("algorithm")
                                    ? flags.parse("algorithm",
                                                  [](const std::string& v) {
                                                    check_allreduce_name(v);  // a registered allreduce, or auto
                                                    return v;
                                                  })
                                    : scenario.algorithms.front();
  const ScenarioVariants variants = apply_overrides(scenario, flags, false);
  const std::optional<HeldoutErrors> heldout = shipped_heldout();
  const HeldoutErrors* heldout_ptr = heldout ? &*heldout : nullptr;
  std::vector<Explanation> explanations;
  for (const ScenarioVariant& v : variants.variants)
    explanations.push_back(explain_scenario(v.scenario, algorithm, variants.where));
  if (flags.has("json")) {
    if (!variants.several()) {
      out << explanation_json(variants.variants.front().scenario, explanations.front(), heldout_ptr).dump() << '\n';
      return 0;
    }
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t v = 0; v < explanations.size(); ++v) {
      nlohmann::json one = explanation_json(variants.variants[v].scenario, explanations[v], heldout_ptr);
      one["variant"] = variants.variants[v].values_json();
      all.push_back(one);
    }
    out << nlohmann::json{{"variants", all}, {"summary", summarise(variants, explanations).json}}.dump() << '\n';
    return 0;
  }
  for (std::size_t v = 0; v < explanations.size(); ++v) {
    if (variants.several()) out << (v == 0 ? "" : "\n") << "== " << variants.variants[v].describe() << " ==\n";
    out << explanation_text(variants.variants[v].scenario, explanations[v], heldout_ptr);
  }
  if (variants.several()) out << '\n' << summarise(variants, explanations).text;
  return 0;
}

}  // namespace dtsim::cli
