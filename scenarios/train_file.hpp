// Training files for `dtsim train`: the MLP, the workers and how they exchange gradients, the optimizer, the network
// and the compute model (docs/train.md lists every field).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "models/train_config.hpp"

namespace dtsim {

struct TrainScenario {
  std::string name;
  std::string description;
  std::string data_directory;  // holds the four Fashion-MNIST IDX files
  std::string compute_source;  // "model" or "measured"
  std::string device;          // the compute model's device
  TrainConfig config;
};

// Reads {"train": {...}}; throws ScenarioError naming the JSON path of the first problem.
TrainScenario parse_train_scenario(const nlohmann::json& document, const std::string& base_dir = ".");
TrainScenario load_train_file(const std::string& path);
std::string train_fields_markdown();

}  // namespace dtsim
