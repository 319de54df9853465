// `dtsim report` of `dtsim validate --published --json`: the published measurements read at the edge (every field
// checked, errors name the JSON path), rendered as a section of the HTML page: predicted against measured throughput
// (log-log, y = x and a +-20% band, a colour per dtsim device), the median and p90 |error| per device, per model and
// overall, the worst rows with their sources, and how many rows are not modelled and why.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/palette.hpp"
#include "reports/result_fields.hpp"

namespace dtsim {

struct PublishedErrorStats {
  std::string name;  // the device or model ("" for overall)
  int rows = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
};

struct PublishedReportCase {
  std::string id;
  std::string device;  // as the table names it
  std::string model;
  std::string precision;
  double batch_per_device = 0;  // 0: the source does not state it
  int devices = 0;
  double measured = 0;  // > 0, in `unit`
  std::string unit;
  std::string split;
  std::string source;  // a URL
  bool predicted = false;
  // when predicted:
  double prediction = 0;  // > 0, in `unit`
  double error = 0;       // (prediction - measured) / measured
  std::string dtsim_device;
  std::string dtsim_model;
  bool fits = true;
  // when not:
  std::string not_modelled;
};

struct PublishedReport {
  std::string split;  // fit, test or all
  PublishedErrorStats overall;
  std::vector<PublishedErrorStats> by_device;
  std::vector<PublishedErrorStats> by_model;
  std::vector<PublishedReportCase> cases;
};

// Whether a document is validate --published --json's (an object with "cases" and any of "split", "overall",
// "by_device" or "by_model"; validate's validation.json has "cases" and "summary").
bool is_published_validation(const nlohmann::json& document);
// Throws ResultFileError naming the JSON path.
PublishedReport read_published_validation(const nlohmann::json& document);

// The 10 predicted rows with the largest |error|, the largest first (ties in the file's order).
std::vector<const PublishedReportCase*> worst_published_rows(const PublishedReport& report, std::size_t most = 10);

// The HTML section (a <section class="published">); device colours come from `colours`.
std::string render_published_section(const PublishedReport& report, SeriesColours& colours);

}  // namespace dtsim
