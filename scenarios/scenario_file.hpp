// Scenario files: a cluster, a device, a model, a batch and how it scales, a framework preset, an input pipeline,
// the allreduce algorithms and the sizes to predict (docs/predict.md lists every field).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/parallel.hpp"
#include "models/run_outlook.hpp"
#include "models/training.hpp"

namespace dtsim {

struct Scenario {
  std::string name;
  std::string description;
  std::string cluster_name;
  ClusterSpec cluster;
  TrainingSetup setup;
  std::vector<int> accelerators;
  std::vector<std::string> algorithms;
  std::optional<ParallelSpec> parallel;  // absent: plain data parallelism
  std::string precision_name;            // as the scenario gives it ("mixed" resolves per device)
  std::optional<double> efficiency;      // the scenario's "efficiency", applied to setup.device
  std::optional<double> kernel_launch_s;
  FailureSettings run;  // failures and checkpoints, for estimates of a whole run
};

// A cluster named as a scenario names it: built-in (data_dir/scenarios/clusters/NAME.json) or a path to a .json file,
// relative to `base_dir`. Throws ScenarioError listing the built-in clusters when NAME is not one.
ClusterSpec load_named_cluster(const std::string& name, const std::string& base_dir, const std::string& data_dir);
// Applies the scenario's "efficiency" and "kernel_launch" to its device (again after the device is replaced).
void apply_device_overrides(Scenario& scenario);

// Reads {"scenario": {...}}. `base_dir` resolves relative cluster paths; `data_dir` holds the built-in clusters
// (data_dir/scenarios/clusters/NAME.json). Throws ScenarioError naming the JSON path of the first problem.
// What the loader checks: every field on its own and against the others (full), or (before_overrides) every field
// on its own but not against what a command's flags can replace, the sizes, model, device, precision and cluster: the
// layout's fit to the sizes, nodes and layers, the precision on the device, a strong batch's split and the nodes a
// variability names. A command that reads its flags over the scenario (predict, explain) checks those after them.
enum class ScenarioCheck : std::uint8_t { full, before_overrides };
Scenario parse_scenario(const nlohmann::json& document, const std::string& base_dir, const std::string& data_dir,
                        ScenarioCheck check = ScenarioCheck::full);
Scenario load_scenario_file(const std::string& path, const std::string& data_dir,
                            ScenarioCheck check = ScenarioCheck::full);
// Every accelerator count must split a strong-scaling batch evenly: throws ScenarioError naming `where` otherwise.
void check_batch_splits(const Scenario& scenario, const std::vector<int>& accelerators, const std::string& where);
// The nodes a scenario's variability names must exist at the largest of `accelerators` (their cluster's nodes, from
// 0): throws ScenarioError naming the JSON path of the first that does not, and `where` (what set the sizes).
void check_variability_nodes(const Scenario& scenario, const std::vector<int>& accelerators, const std::string& where);
std::string scenario_fields_markdown();

}  // namespace dtsim
