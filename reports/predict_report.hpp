// Results of `dtsim predict`: a table for people, and JSON with a `results` list (keys documented in docs/predict.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenarios/scenario_file.hpp"
#include "sim/predict.hpp"

namespace dtsim {

std::string predict_text(const Scenario& scenario, const std::vector<Prediction>& results);
nlohmann::json predict_json(const Scenario& scenario, const std::vector<Prediction>& results);

}  // namespace dtsim
