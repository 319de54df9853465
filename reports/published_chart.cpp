#include "reports/published_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/format.hpp"
#include "reports/svg_plot.hpp"

namespace dtsim {

namespace {

using result_fields::at;
using result_fields::boolean;
using result_fields::list;
using result_fields::member;
using result_fields::non_negative;
using result_fields::number;
using result_fields::positive;
using result_fields::positive_number;
using result_fields::text;

constexpr double band = 0.2;  // the +-20% band around prediction = measurement

std::string key_path(const std::string& path, const std::string& key) { return path + "[\"" + key + "\"]"; }

PublishedErrorStats read_stats(const nlohmann::json& s, std::string name, const std::string& path) {
  PublishedErrorStats out;
  out.name = std::move(name);
  out.rows = static_cast<int>(std::min<std::uint64_t>(result_fields::count(s, "rows", path), 1U << 30));
  out.median_abs_error = non_negative(s, "median_abs_error", path);
  out.p90_abs_error = non_negative(s, "p90_abs_error", path);
  return out;
}

std::vector<PublishedErrorStats> read_groups(const nlohmann::json& doc, const char* key) {
  const nlohmann::json& groups = member(doc, key, "");
  if (!groups.is_object())
    throw ResultFileError(std::string(key) + ": expected an object of names, got " + groups.type_name());
  std::vector<PublishedErrorStats> out;
  for (const auto& [name, s] : groups.items())
    out.push_back(read_stats(s, name, key_path(key, name)));
  return out;
}

PublishedReportCase read_case(const nlohmann::json& c, const std::string& p) {
  PublishedReportCase r;
  r.id = text(c, "id", p);
  r.device = text(c, "device", p);
  r.model = text(c, "model", p);
  r.precision = text(c, "precision", p);
  r.batch_per_device = non_negative(c, "batch_per_device", p);  // 0: the source does not say
  r.devices = positive(c, "devices", p);
  r.measured = positive_number(c, "measured", p);
  r.unit = text(c, "unit", p);
  r.split = text(c, "split", p);
  r.source = text(c, "source", p);
  const bool has_prediction = c.contains("predicted");
  if (c.contains("not_modelled")) {
    if (has_prediction) throw ResultFileError(p + ": expected either \"predicted\" or \"not_modelled\", got both");
    r.not_modelled = text(c, "not_modelled", p);
    return r;
  }
  if (!has_prediction) throw ResultFileError(p + ".predicted: missing (a case has \"predicted\" or \"not_modelled\")");
  r.predicted = true;
  r.prediction = positive_number(c, "predicted", p);
  r.error = number(c, "error", p);
  r.dtsim_device = text(c, "dtsim_device", p);
  r.dtsim_model = text(c, "dtsim_model", p);
  r.fits = boolean(c, "fits", p);
  return r;
}

// Throughputs compactly: 938, 7.248k, 1.2M.
std::string throughput_label(double v) {
  char t[32];
  if (v >= 1e6) {
    std::snprintf(t, sizeof t, "%gM", v / 1e6);
  } else if (v >= 1e4) {
    std::snprintf(t, sizeof t, "%gk", v / 1e3);
  } else {
    std::snprintf(t, sizeof t, "%g", v);
  }
  return t;
}

// A throughput in a table: whole numbers from 100 up, three significant digits below.
std::string table_number(double v) {
  char t[32];
  std::snprintf(t, sizeof t, v >= 100 ? "%.0f" : "%.3g", v);
  return t;
}

// A link to the row's source where it is a web address; anything else is shown as text, never as a link.
std::string source_cell(const std::string& source) {
  if (source.starts_with("https://") || source.starts_with("http://"))
    return "<a href=\"" + escape_xml(source) + "\" rel=\"noreferrer\">source</a>";
  return escape_xml(source);
}

std::string chart(const PublishedReport& report, SeriesColours& colours) {
  LinePlot plot;
  plot.title = "Published throughput: predicted against measured (split " + report.split + ")";
  plot.width = 960;
  plot.join_points = false;
  std::vector<std::string> units;
  std::map<std::string, std::vector<std::pair<double, double>>> by_device;  // sorted by name: the legend's order
  double lo = 0;
  double hi = 0;
  for (const PublishedReportCase& c : report.cases) {
    if (!c.predicted) continue;
    if (std::find(units.begin(), units.end(), c.unit) == units.end()) units.push_back(c.unit);
    by_device[c.dtsim_device].emplace_back(c.measured, c.prediction);
    lo = lo == 0 ? std::min(c.measured, c.prediction) : std::min({lo, c.measured, c.prediction});
    hi = std::max({hi, c.measured, c.prediction});
  }
  std::string unit_list;
  for (const std::string& u : units)
    unit_list += (unit_list.empty() ? "" : ", ") + u;
  // (the units named while they fit the axis; with more, the table below names each row's)
  plot.x.label = unit_list.size() <= 80 ? "measured throughput (each row's unit: " + unit_list + ")"
                                        : "measured throughput (each row's own unit, as the table names it)";
  plot.y.label = "predicted throughput (same unit)";
  for (PlotAxis* a : {&plot.x, &plot.y}) {
    a->log = true;
    a->format = throughput_label;
  }
  for (auto& [device, points] : by_device)
    plot.series.push_back({device, std::move(points), false, colours.category_colour(device)});
  if (hi > 0) {
    // both axes log, over the same decades: y = x and y = (1 +- 20%) x are straight lines between their ends
    std::vector<double> decades;
    for (double d = std::pow(10.0, std::floor(std::log10(lo * (1 - band)))); d < hi * (1 + band) * 10; d *= 10)
      decades.push_back(d);
    plot.x.ticks = decades;
    plot.y.ticks = decades;
    const std::string grey(reference_colour);
    plot.series.push_back({"prediction = measurement", {{lo, lo}, {hi, hi}}, true, grey});
    plot.series.push_back({"prediction 20% high", {{lo, lo * (1 + band)}, {hi, hi * (1 + band)}}, true, "#AAAAAA"});
    plot.series.push_back({"prediction 20% low", {{lo, lo * (1 - band)}, {hi, hi * (1 - band)}}, true, "#AAAAAA"});
  }
  return render_line_plot(plot);
}

void stats_rows(std::ostringstream& out, const char* kind, const std::vector<PublishedErrorStats>& stats) {
  for (const PublishedErrorStats& s : stats) {
    out << "<tr><td class=\"words\">" << kind << "</td><td class=\"words\">" << escape_xml(s.name) << "</td><td>"
        << s.rows << "</td><td>" << format_percent(s.median_abs_error) << "</td><td>" << format_percent(s.p90_abs_error)
        << "</td></tr>\n";
  }
}

}  // namespace

bool is_published_validation(const nlohmann::json& document) {
  return document.is_object() && document.contains("cases") &&
         (document.contains("split") || document.contains("overall") || document.contains("by_device") ||
          document.contains("by_model"));
}

PublishedReport read_published_validation(const nlohmann::json& doc) {
  PublishedReport r;
  r.split = text(doc, "split", "");
  if (r.split != "fit" && r.split != "test" && r.split != "all")
    throw ResultFileError("split: expected fit, test or all, got \"" + r.split + "\"");
  r.overall = read_stats(member(doc, "overall", ""), "", "overall");
  r.by_device = read_groups(doc, "by_device");
  r.by_model = read_groups(doc, "by_model");
  const nlohmann::json& cases = list(doc, "cases", "");
  for (std::size_t i = 0; i < cases.size(); ++i)
    r.cases.push_back(read_case(cases[i], at("cases", i)));
  return r;
}

std::vector<const PublishedReportCase*> worst_published_rows(const PublishedReport& report, std::size_t most) {
  std::vector<const PublishedReportCase*> rows;
  for (const PublishedReportCase& c : report.cases)
    if (c.predicted) rows.push_back(&c);
  std::stable_sort(rows.begin(), rows.end(), [](const PublishedReportCase* a, const PublishedReportCase* b) {
    return std::fabs(a->error) > std::fabs(b->error);
  });
  if (rows.size() > most) rows.resize(most);
  return rows;
}

std::string render_published_section(const PublishedReport& report, SeriesColours& colours) {
  std::ostringstream out;
  std::size_t predicted = 0;
  std::map<std::string, int> why_not;
  for (const PublishedReportCase& c : report.cases) {
    if (c.predicted) {
      ++predicted;
    } else {
      ++why_not[c.not_modelled];
    }
  }
  out << "<section class=\"published\"><h2>Published measurements: predicted against measured (split "
      << escape_xml(report.split) << ")</h2>\n<p>" << report.cases.size() << " rows of the published table "
      << "(validation/published/measurements.csv), " << predicted << " predicted. <strong>Overall: median |error| "
      << format_percent(report.overall.median_abs_error) << ", 90th percentile "
      << format_percent(report.overall.p90_abs_error) << " over " << report.overall.rows << " rows.</strong></p>\n";
  if (predicted > 0) out << "<div class=\"charts wide\">" << chart(report, colours) << "</div>\n";
  out << "<p class=\"note\">One point per predicted row, coloured by the dtsim device it was predicted with; each "
         "row's throughput in its own unit (images, samples or tokens per second). Dashed: prediction = measurement "
         "and 20% either side.</p>\n";
  out << "<h3>|error| by device, model and overall</h3>\n<table class=\"published-errors\"><thead><tr><th>by</th>"
         "<th>name</th><th>rows</th><th>median |error|</th><th>p90 |error|</th></tr></thead><tbody>\n";
  stats_rows(out, "device", report.by_device);
  stats_rows(out, "model", report.by_model);
  PublishedErrorStats overall = report.overall;
  overall.name = "all rows predicted";
  stats_rows(out, "overall", {overall});
  out << "</tbody></table>\n";
  const std::vector<const PublishedReportCase*> worst = worst_published_rows(report);
  if (!worst.empty()) {
    out << "<h3>The " << worst.size()
        << " worst rows</h3>\n<table class=\"published-worst\"><thead><tr><th>id</th>"
           "<th>device</th><th>model</th><th>measured</th><th>predicted</th><th>unit</th><th>error</th>"
           "<th>source</th></tr></thead><tbody>\n";
    for (const PublishedReportCase* c : worst) {
      out << "<tr><td class=\"words\">" << escape_xml(c->id) << "</td><td class=\"words\">" << escape_xml(c->device);
      if (c->dtsim_device != c->device) out << " (as " << escape_xml(c->dtsim_device) << ")";
      out << "</td><td class=\"words\">" << escape_xml(c->model) << "</td><td>" << table_number(c->measured)
          << "</td><td>" << table_number(c->prediction) << "</td><td class=\"words\">" << escape_xml(c->unit)
          << "</td><td>" << format_signed_percent(c->error) << (c->fits ? "" : " (does not fit, dtsim says)")
          << "</td><td class=\"words\">" << source_cell(c->source) << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
  }
  if (!why_not.empty()) {
    std::vector<std::pair<int, std::string>> reasons;
    for (const auto& [why, n] : why_not)
      reasons.emplace_back(n, why);
    std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    out << "<h3>Not modelled: " << report.cases.size() - predicted
        << " rows</h3>\n<table class=\"published-not\">"
           "<thead><tr><th>rows</th><th>why</th></tr></thead><tbody>\n";
    for (const auto& [n, why] : reasons)
      out << "<tr><td>" << n << "</td><td class=\"words\">" << escape_xml(why) << "</td></tr>\n";
    out << "</tbody></table>\n";
  }
  out << "</section>\n";
  return out.str();
}

}  // namespace dtsim
