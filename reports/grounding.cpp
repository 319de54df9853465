#include "reports/grounding.hpp"

#include "reports/format.hpp"

namespace dtsim {

const char* device_figures(const Device& device) {
  if (device.origin == "calibration") return "measured";
  if (!device.fit) return "datasheet";
  return device.fit->pooled ? "pooled" : "fitted";
}

std::string grounding_text(const Device& device) {
  const std::string kind = device_figures(device);
  if (kind == "measured") return "compute measured on this machine by dtsim calibrate (" + device.source + ")";
  if (kind == "datasheet") {
    return device.name +
           ": datasheet peaks and efficiencies fitted to no measurement: an estimate, not a calibrated prediction";
  }
  const DeviceFit& f = *device.fit;
  if (kind == "pooled") {
    return device.name + ": no published measurement of this part was fitted; its efficiencies are pooled from " +
           std::to_string(f.rows) + " measurements of other GPUs (median error " + format_percent(f.median_error) +
           " on them): expect larger errors than on a fitted part";
  }
  return device.name + ": efficiencies fitted to " + std::to_string(f.rows) +
         " published measurements of this part (median error " + format_percent(f.median_error) +
         " on them; docs/validation.md gives the error on held-out rows)";
}

nlohmann::json grounding_json(const Device& device) {
  nlohmann::json j{{"device_figures", device_figures(device)}};
  if (device.fit) {
    j["fit_rows"] = device.fit->rows;
    j["fit_median_error"] = device.fit->median_error;
    j["fitted_by"] = device.fit->by;
  }
  return j;
}

std::string grounding_text(const TrainingSetup& setup) {
  if (!setup.profile) return grounding_text(setup.device);
  const MeasuredProfile& p = *setup.profile;
  return "compute measured: each layer's forward and backward time from the profile " + p.source + " (batch " +
         std::to_string(p.batch) + ", median of " + std::to_string(p.steps) + (p.steps == 1 ? " step" : " steps") +
         "); " + setup.device.name + "'s figures serve its memory only";
}

nlohmann::json grounding_json(const TrainingSetup& setup) {
  if (!setup.profile) return grounding_json(setup.device);
  return nlohmann::json{{"device_figures", "profile"},
                        {"profile", setup.profile->source},
                        {"profile_batch", setup.profile->batch},
                        {"profile_steps", setup.profile->steps}};
}

}  // namespace dtsim
