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
  std::string device;          // the compute model's device (its name)
  TrainConfig config;
};

// Reads {"train": {...}}; throws ScenarioError naming the JSON path of the first problem. `base_dir` resolves relative
// paths; `data_dir` holds the built-in devices (data_dir/scenarios/devices/NAME.json).
TrainScenario parse_train_scenario(const nlohmann::json& document, const std::string& base_dir,
                                   const std::string& data_dir);
TrainScenario load_train_file(const std::string& path, const std::string& data_dir);
std::string train_fields_markdown();

}  // namespace dtsim
