// How grounded a prediction's compute is: whether the device's efficiency parameters were fitted to published
// measurements of that device (and how well), pooled from other devices' fits, measured on this machine, or datasheet
// peaks with default efficiencies. predict and explain print it with every prediction.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "models/devices.hpp"
#include "models/training.hpp"

namespace dtsim {

// "fitted", "pooled", "measured" or "datasheet".
const char* device_figures(const Device& device);
// One sentence for text reports.
std::string grounding_text(const Device& device);
// {"device_figures": ..., "fit_rows": ..., "fit_median_error": ..., "fitted_by": ...} (fit fields when fitted).
nlohmann::json grounding_json(const Device& device);
// The setup's: its measured profile's where it has one (device figures then serve only its memory), else its device's.
std::string grounding_text(const TrainingSetup& setup);
nlohmann::json grounding_json(const TrainingSetup& setup);

}  // namespace dtsim
