#include "validation/published_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace dtsim {

std::string stats_line(const ErrorStats& s) {
  char text[128];
  std::snprintf(text, sizeof text, "median |error| %.1f%%, p90 %.1f%% over %d rows", 100 * s.median_abs_error,
                100 * s.p90_abs_error, s.rows);
  return text;
}

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows}, {"median_abs_error", s.median_abs_error}, {"p90_abs_error", s.p90_abs_error}};
}

std::string published_text(const PublishedResult& result, const std::string& split) {
  int predicted = 0;
  std::map<std::string, int> why_not;
  for (const PublishedCase& c : result.cases) {
    if (c.not_modelled.empty()) {
      ++predicted;
    } else {
      ++why_not[c.not_modelled];
    }
  }
  std::string out = "published measurements (validation/published/measurements.csv), split " + split + ": " +
                    std::to_string(result.cases.size()) + " rows, " + std::to_string(predicted) + " predicted\n";
  out += "overall: " + stats_line(result.overall) + "\n\nby device:\n";
  for (const auto& [name, s] : result.by_device)
    out += "  " + name + ": " + stats_line(s) + "\n";
  out += "by model:\n";
  for (const auto& [name, s] : result.by_model)
    out += "  " + name + ": " + stats_line(s) + "\n";
  std::vector<const PublishedCase*> rows;
  for (const PublishedCase& c : result.cases)
    if (c.not_modelled.empty()) rows.push_back(&c);
  std::sort(rows.begin(), rows.end(),
            [](const PublishedCase* a, const PublishedCase* b) { return std::fabs(a->error) > std::fabs(b->error); });
  out += "\nworst rows (predicted against measured):\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(rows.size(), 10); ++i) {
    const PublishedCase& c = *rows[i];
    char line[512];
    std::snprintf(line, sizeof line, "  %+6.1f%%  %s: %.1f against %.1f %s%s\n", 100 * c.error, c.row.id.c_str(),
                  c.predicted, c.row.throughput, c.row.throughput_unit.c_str(),
                  c.fits ? "" : " (dtsim's memory model says the batch does not fit)");
    out += line;
  }
  if (!why_not.empty()) {
    out += "\nnot modelled:\n";
    std::vector<std::pair<int, std::string>> reasons;
    for (const auto& [why, n] : why_not)
      reasons.emplace_back(n, why);
    std::sort(reasons.rbegin(), reasons.rend());
    for (const auto& [n, why] : reasons)
      out += "  " + std::to_string(n) + " rows: " + why + "\n";
  }
  return out;
}

nlohmann::json published_json(const PublishedResult& result, const std::string& split) {
  nlohmann::json cases = nlohmann::json::array();
  for (const PublishedCase& c : result.cases) {
    nlohmann::json j{{"id", c.row.id},
                     {"split", c.row.split},
                     {"device", c.row.device},
                     {"devices", c.row.device_count},
                     {"model", c.row.model},
                     {"precision", c.row.precision},
                     {"batch_per_device", c.row.batch_per_device},
                     {"measured", c.row.throughput},
                     {"unit", c.row.throughput_unit},
                     {"source", c.row.source_url}};
    if (c.not_modelled.empty()) {
      j["dtsim_device"] = c.device;
      j["dtsim_model"] = c.model;
      j["predicted"] = c.predicted;
      j["error"] = c.error;
      j["fits"] = c.fits;
    } else {
      j["not_modelled"] = c.not_modelled;
    }
    cases.push_back(j);
  }
  nlohmann::json by_device = nlohmann::json::object();
  for (const auto& [name, s] : result.by_device)
    by_device[name] = stats_json(s);
  nlohmann::json by_model = nlohmann::json::object();
  for (const auto& [name, s] : result.by_model)
    by_model[name] = stats_json(s);
  return {{"split", split},
          {"overall", stats_json(result.overall)},
          {"by_device", by_device},
          {"by_model", by_model},
          {"cases", cases}};
}

}  // namespace dtsim
