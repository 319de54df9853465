#include "reports/framework_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/format.hpp"
#include "reports/result_fields.hpp"
#include "reports/svg_plot.hpp"

namespace dtsim {

std::string framework_summary(double median_abs_error, double p90_abs_error, std::size_t cases,
                              double exposed_median_points, double exposed_max_points) {
  char line[320];
  std::snprintf(line, sizeof line,
                "Step time: median |error| %.1f%%, p90 %.1f%% over %zu cases; exposed communication (fraction of the "
                "step): median |difference| %.1f points, largest %.1f points.",
                100 * median_abs_error, 100 * p90_abs_error, cases, 100 * exposed_median_points,
                100 * exposed_max_points);
  return line;
}

bool is_framework_validation(const nlohmann::json& document) {
  return document.is_object() && document.contains("kind") && document["kind"] == "pytorch-validation";
}

FrameworkReport read_framework_validation(const nlohmann::json& document) {
  using namespace result_fields;
  FrameworkReport r;
  r.command = text(document, "command", "");
  r.median_abs_error = number(document, "median_abs_error", "");
  r.p90_abs_error = number(document, "p90_abs_error", "");
  r.exposed_median_points = number(document, "exposed_median_points", "");
  r.exposed_max_points = number(document, "exposed_max_points", "");
  const nlohmann::json& cases = list(document, "cases", "");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string path = at("cases", i);
    const nlohmann::json& c = cases[i];
    FrameworkReportCase k;
    k.ranks = positive(c, "ranks", path);
    k.rate_bps = number(c, "rate_bps", path);
    k.model = text(c, "model", path);
    k.batch = positive(c, "batch", path);
    k.bucket_mb = number(c, "bucket_mb", path);
    k.compute_s = number(c, "compute_s", path);
    k.measured_s = number(c, "measured_s", path);
    k.predicted_s = number(c, "predicted_s", path);
    k.measured_exposed = number(c, "measured_exposed_fraction", path);
    k.predicted_exposed = number(c, "predicted_exposed_fraction", path);
    if (k.measured_s <= 0 || k.predicted_s <= 0) {
      throw ResultFileError(path + ": measured_s and predicted_s must be > 0");
    }
    r.cases.push_back(k);
  }
  return r;
}

std::string render_framework_section(const FrameworkReport& report, SeriesColours& colours) {
  std::ostringstream out;
  char line[512];
  out << "<section class=\"framework\">\n<h2>PyTorch DDP on the emulated cluster against dtsim</h2>\n<p><code>"
      << escape_xml(report.command) << "</code></p>\n";
  out << "<p>"
      << framework_summary(report.median_abs_error, report.p90_abs_error, report.cases.size(),
                           report.exposed_median_points, report.exposed_max_points)
      << "</p>\n";
  LinePlot steps;
  steps.title = "Step time: predicted against measured";
  steps.x = {"measured step (s)", true, {}, {}};
  steps.y = {"predicted step (s)", true, {}, {}};
  steps.join_points = false;
  LinePlot exposed;
  exposed.title = "Exposed communication: predicted against measured";
  exposed.x = {"measured (fraction of the step)", false, {}, {0, 1}};
  exposed.y = {"predicted (fraction of the step)", false, {}, {0, 1}};
  exposed.join_points = false;
  std::map<std::string, std::size_t> series;  // model -> index in both plots
  double lo = 1e300, hi = 0;
  for (const FrameworkReportCase& c : report.cases) {
    auto [it, added] = series.emplace(c.model, steps.series.size());
    if (added) {
      const std::string colour = colours.category_colour(c.model);
      steps.series.push_back({c.model, {}, false, colour});
      exposed.series.push_back({c.model, {}, false, colour});
    }
    steps.series[it->second].points.emplace_back(c.measured_s, c.predicted_s);
    exposed.series[it->second].points.emplace_back(c.measured_exposed, c.predicted_exposed);
    lo = std::min({lo, c.measured_s, c.predicted_s});
    hi = std::max({hi, c.measured_s, c.predicted_s});
  }
  steps.series.push_back({"prediction = measurement", {{lo, lo}, {hi, hi}}, true, std::string(reference_colour)});
  exposed.series.push_back({"prediction = measurement", {{0, 0}, {1, 1}}, true, std::string(reference_colour)});
  out << "<div class=\"charts\">\n" << render_line_plot(steps) << render_line_plot(exposed) << "</div>\n";
  out << "<table><thead><tr><th>ranks</th><th>model</th><th>rate</th><th>batch</th><th>bucket</th><th>compute "
         "(all ranks at once, no DDP)</th><th>measured</th><th>predicted</th><th>error</th><th>exposed "
         "measured</th><th>exposed "
         "predicted</th></tr></thead><tbody>\n";
  for (const FrameworkReportCase& c : report.cases) {
    std::snprintf(line, sizeof line,
                  "<tr><td>%d</td><td>%s</td><td>%.0f Mbit/s</td><td>%d</td><td>%g MiB</td><td>%s</td><td>%s</td>"
                  "<td>%s</td><td>%+.1f%%</td><td>%.0f%%</td><td>%.0f%%</td></tr>\n",
                  c.ranks, escape_xml(c.model).c_str(), c.rate_bps / 1e6, c.batch, c.bucket_mb,
                  format_seconds(c.compute_s).c_str(), format_seconds(c.measured_s).c_str(),
                  format_seconds(c.predicted_s).c_str(), 100 * (c.predicted_s - c.measured_s) / c.measured_s,
                  100 * c.measured_exposed, 100 * c.predicted_exposed);
    out << line;
  }
  out << "</tbody></table>\n</section>\n";
  return out.str();
}

}  // namespace dtsim
