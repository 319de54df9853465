// Scenario files: a cluster, a device, a model, a batch and how it scales, a framework preset, an input pipeline,
// the allreduce algorithms and the sizes to predict (docs/predict.md lists every field).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/parallel.hpp"
#include "models/training.hpp"

namespace dtsim {

// The scenario's "parallel" object: the layout at every accelerator count (data = accelerators / (tensor x
// pipeline)), or a search over layouts.
struct ParallelSpec {
  int tensor = 1;
  int pipeline = 1;
  int micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Sharding sharding = Sharding::none;
  bool prefetch = true;
  bool search = false;
  ParallelLayout layout(int accelerators) const {
    ParallelLayout l;
    l.tensor = tensor;
    l.pipeline = pipeline;
    l.data = accelerators / (tensor * pipeline);
    l.micro_batches = micro_batches;
    l.schedule = schedule;
    l.sharding = sharding;
    l.prefetch = prefetch;
    return l;
  }
};

struct Scenario {
  std::string name;
  std::string description;
  std::string cluster_name;
  ClusterSpec cluster;
  TrainingSetup setup;
  std::vector<int> accelerators;
  std::vector<std::string> algorithms;
  std::optional<ParallelSpec> parallel;  // absent: plain data parallelism
};

// Reads {"scenario": {...}}. `base_dir` resolves relative cluster paths; `data_dir` holds the built-in clusters
// (data_dir/scenarios/clusters/NAME.json). Throws ScenarioError naming the JSON path of the first problem.
Scenario parse_scenario(const nlohmann::json& document, const std::string& base_dir, const std::string& data_dir);
Scenario load_scenario_file(const std::string& path, const std::string& data_dir);
// Every accelerator count must split a strong-scaling batch evenly: throws ScenarioError naming `where` otherwise.
void check_batch_splits(const Scenario& scenario, const std::vector<int>& accelerators, const std::string& where);
std::string scenario_fields_markdown();

}  // namespace dtsim
