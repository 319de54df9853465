// Whole runs (predict --run, --samples-to-train, --tokens): per configuration its interruptions, checkpoints, the
// checkpoint interval beside Young's and Daly's, the expected wall time and goodput, as text and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/run_outlook.hpp"

namespace dtsim {

struct RunRow {
  int accelerators = 0;
  std::string what;  // the algorithm or layout
  double samples_per_s = 0;
  double useful_samples = 0;  // samples trained in the run's useful work
  RunOutlook outlook;
};

// `length_text`: what the run is, e.g. "30d of wall time", "90 million samples".
std::string run_text(const std::vector<RunRow>& rows, const std::string& length_text);
nlohmann::json run_json(const RunRow& row);

// Human-readable long durations: "3.2 h", "41 min", "12 d".
std::string format_long_duration(double seconds);

}  // namespace dtsim
