// `dtsim report` of `dtsim validate --framework pytorch` (pytorch-validation.json): real PyTorch DDP steps on the
// emulated cluster against dtsim's predictions, read at the edge (every field checked, errors name the JSON path) and
// drawn as a section of the HTML page: predicted against measured step time (log-log, y = x, a colour per model), the
// exposed communication fraction measured and predicted, and every case in a table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/palette.hpp"

namespace dtsim {

struct FrameworkReportCase {
  int ranks = 0;
  double rate_bps = 0;
  std::string model;
  int batch = 0;
  double bucket_mb = 0;
  double compute_s = 0;
  double measured_s = 0;
  double predicted_s = 0;
  double measured_exposed = 0;  // fractions of the step
  double predicted_exposed = 0;
};

struct FrameworkReport {
  std::string command;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double exposed_median_points = 0;
  double exposed_max_points = 0;
  std::vector<FrameworkReportCase> cases;
};

// "Step time: median |error| 5.1%, p90 18.7% over 72 cases; exposed communication (fraction of the step): median
// |difference| 2.0 points, largest 24.0 points." (the errors as fractions), for the report, the markdown and the CLI.
std::string framework_summary(double median_abs_error, double p90_abs_error, std::size_t cases,
                              double exposed_median_points, double exposed_max_points);

// Whether a document is a pytorch-validation.json ("kind": "pytorch-validation").
bool is_framework_validation(const nlohmann::json& document);
// Throws ResultFileError naming the JSON path.
FrameworkReport read_framework_validation(const nlohmann::json& document);
// The HTML section (a <section class="framework">); model colours come from `colours`.
std::string render_framework_section(const FrameworkReport& report, SeriesColours& colours);

}  // namespace dtsim
