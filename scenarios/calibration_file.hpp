// Calibration files written by `dtsim calibrate` and read back by every command that takes --calibration (and by
// scenario files): strict, with JSON paths in errors. docs/calibration.md lists the fields.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "models/calibration.hpp"

namespace dtsim {

Calibration parse_calibration(const nlohmann::json& document);
Calibration load_calibration_file(const std::string& path);
std::string calibration_fields_markdown();

}  // namespace dtsim
