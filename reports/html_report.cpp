#include "reports/html_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "reports/collective_report.hpp"
#include "reports/format.hpp"
#include "reports/palette.hpp"
#include "reports/svg_plot.hpp"

namespace dtsim {

namespace {

// ---- reading: every missing or mistyped field names its JSON path ----

using result_fields::at;
using result_fields::boolean;
using result_fields::count;
using result_fields::join;
using result_fields::list;
using result_fields::member;
using result_fields::non_negative;
using result_fields::positive;
using result_fields::positive_number;
using result_fields::text;

const char* type_name(const nlohmann::json& v) { return v.type_name(); }

std::vector<LinkRow> read_links(const nlohmann::json& links, const std::string& path) {
  std::vector<LinkRow> rows;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const nlohmann::json& l = links[i];
    const std::string p = at(path, i);
    rows.push_back({text(l, "name", p), count(l, "bytes", p), non_negative(l, "busy_fraction", p),
                    non_negative(l, "utilisation", p)});
  }
  return rows;
}

std::vector<LinkGroupRow> read_link_groups(const nlohmann::json& groups, const std::string& path) {
  std::vector<LinkGroupRow> rows;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const nlohmann::json& g = groups[i];
    const std::string p = at(path, i);
    rows.push_back({text(g, "kind", p), count(g, "count", p), positive_number(g, "capacity_Bps", p),
                    count(g, "bytes", p), non_negative(g, "busy_fraction", p), non_negative(g, "utilisation", p),
                    text(g, "first", p)});
  }
  return rows;
}

// An optional [low, high] pair (null or absent: none), as predict's *_range fields.
std::optional<std::pair<double, double>> read_range(const nlohmann::json& row, const char* key,
                                                    const std::string& path) {
  if (!row.contains(key) || row[key].is_null()) return std::nullopt;
  const nlohmann::json& v = row[key];
  const std::string p = join(path, key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() || !(v[0] <= v[1])) {
    throw ResultFileError(p + ": expected [low, high], two numbers, low first");
  }
  return std::pair<double, double>{v[0].get<double>(), v[1].get<double>()};
}

// predict's trust object in words (its basis, band and caveat, and the speedup's band).
std::string read_trust(const nlohmann::json& doc) {
  if (!doc.contains("trust") || doc["trust"].is_null()) return "";
  const nlohmann::json& t = doc["trust"];
  const std::string p = "trust";
  const std::string basis = text(t, "basis", p);
  const int rows = static_cast<int>(count(t, "rows", p));
  const nlohmann::json& band = member(t, "measured_over_predicted", p);
  if (!band.is_array() || band.size() != 2 || !band[0].is_number() || !band[1].is_number()) {
    throw ResultFileError("trust.measured_over_predicted: expected [low, high], two numbers");
  }
  char line[160];
  std::snprintf(line, sizeof line, " measured %.2fx to %.2fx the throughput dtsim predicted (median |error| %.1f%%)",
                band[0].get<double>(), band[1].get<double>(), 100 * non_negative(t, "median_abs_error", p));
  std::string words = "80% of the " + std::to_string(rows) + " " + basis + line;
  if (const std::string caveat = text(t, "caveat", p); !caveat.empty()) words += "; " + caveat;
  if (t.contains("speedup")) {
    const nlohmann::json& s = member(t, "speedup", p);
    const nlohmann::json& sb = member(s, "measured_over_predicted", p + ".speedup");
    if (count(s, "rows", p + ".speedup") > 0 && sb.is_array() && sb.size() == 2 && sb[0].is_number() &&
        sb[1].is_number()) {
      std::snprintf(line, sizeof line,
                    "; speedups over one device: %.2fx to %.2fx of the predicted (%d held-out pairs)",
                    sb[0].get<double>(), sb[1].get<double>(), static_cast<int>(count(s, "rows", p + ".speedup")));
      words += line;
    }
  }
  return words;
}

PredictTable read_predict(const nlohmann::json& doc) {
  PredictTable t;
  t.scenario = text(doc, "scenario", "");
  t.model = text(doc, "model", "");
  t.device = text(doc, "device", "");
  t.cluster = text(doc, "cluster", "");
  t.scaling = text(doc, "scaling", "");
  t.trust = read_trust(doc);
  const nlohmann::json& results = list(doc, "results", "");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const nlohmann::json& r = results[i];
    const std::string p = at("results", i);
    PredictRow row;
    row.accelerators = positive(r, "accelerators", p);
    row.algorithm = text(r, "algorithm", p);
    row.fits = boolean(r, "fits", p);
    // (a configuration that does not fit in memory is not simulated: its figures are 0)
    const auto figure = row.fits ? &positive_number : &non_negative;
    row.step_s = figure(r, "step_time_s", p);
    row.samples_per_s = figure(r, "samples_per_s", p);
    row.speedup = figure(r, "speedup", p);
    row.efficiency = figure(r, "efficiency", p);
    const nlohmann::json& b = member(r, "breakdown", p);
    const std::string bp = p + ".breakdown";
    row.forward_s = non_negative(b, "forward_s", bp);
    row.backward_s = non_negative(b, "backward_s", bp);
    row.exposed_comm_s = non_negative(b, "exposed_comm_s", bp);
    row.input_stall_s = non_negative(b, "input_stall_s", bp);
    row.optimizer_s = non_negative(b, "optimizer_s", bp);
    row.bottleneck = text(r, "bottleneck", p);
    row.samples_per_s_range = read_range(r, "samples_per_s_range", p);
    row.speedup_range = read_range(r, "speedup_range", p);
    if (r.contains("step_distribution")) {
      const nlohmann::json& d = member(r, "step_distribution", p);
      const std::string dp = p + ".step_distribution";
      row.samples = static_cast<int>(positive(d, "samples", dp));
      row.mean_s = non_negative(d, "mean_s", dp);
      row.p99_s = non_negative(d, "p99_s", dp);
      const nlohmann::json& bins = list(d, "histogram", dp);
      for (std::size_t bin = 0; bin < bins.size(); ++bin) {
        const std::string bp2 = at(dp + ".histogram", bin);
        row.histogram.emplace_back(
            0.5 * (non_negative(bins[bin], "from_s", bp2) + non_negative(bins[bin], "to_s", bp2)),
            static_cast<int>(count(bins[bin], "count", bp2)));
      }
    }
    t.rows.push_back(row);
  }
  if (doc.contains("links")) {
    const nlohmann::json& l = doc["links"];
    t.links_accelerators = positive(l, "accelerators", "links");
    t.links_algorithm = text(l, "algorithm", "links");
    const nlohmann::json& busiest = member(l, "busiest", "links");
    if (!busiest.is_array()) throw ResultFileError("links.busiest: expected a list");
    t.links = read_links(busiest, "links.busiest");
    std::stable_sort(t.links.begin(), t.links.end(),  // (older results listed them by busy time)
                     [](const LinkRow& a, const LinkRow& b) { return a.utilisation > b.utilisation; });
    if (l.contains("groups")) {
      const nlohmann::json& groups = l["groups"];
      if (!groups.is_array())
        throw ResultFileError("links.groups: expected a list, got " + std::string(type_name(groups)));
      t.link_groups = read_link_groups(groups, "links.groups");
    }
  }
  return t;
}

CompareTable read_compare(const nlohmann::json& doc) {
  CompareTable t;
  if (doc.empty()) throw ResultFileError("[]: expected at least one run");
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& r = doc[i];
    const std::string p = at("", i);
    t.rows.push_back({text(r, "algorithm", p), positive(r, "ranks", p), count(r, "bytes", p),
                      non_negative(r, "time_s", p), non_negative(r, "busbw_Bps", p)});
    if (r.contains("collective")) {
      const std::string c = text(r, "collective", p);
      if (i == 0) t.collective = c;
      if (c != t.collective) {
        throw ResultFileError(p + ".collective: '" + c + "', but " + at("", 0) + " is '" + t.collective +
                              "' (a compare result holds one collective)");
      }
    }
  }
  return t;
}

TrainCurve read_train(const nlohmann::json& doc) {
  TrainCurve c;
  c.name = text(doc, "name", "");
  c.mode = text(doc, "mode", "");
  c.workers = positive(doc, "workers", "");
  c.target_accuracy = non_negative(doc, "target_accuracy", "");
  // (train writes -1 when the run never reached its target: docs/train.md)
  const double to_target = result_fields::number(doc, "time_to_target_s", "");
  if (to_target != -1 && !(to_target >= 0)) {
    throw ResultFileError("time_to_target_s: expected a number >= 0, or -1 for a target never reached, got " +
                          doc["time_to_target_s"].dump());
  }
  c.time_to_target_s = to_target;
  const nlohmann::json& points = list(doc, "points", "");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string p = at("points", i);
    c.points.push_back({non_negative(points[i], "epoch", p), non_negative(points[i], "time_s", p),
                        non_negative(points[i], "train_loss", p), non_negative(points[i], "test_accuracy", p)});
  }
  return c;
}

ValidationTable read_validation(const nlohmann::json& doc) {
  ValidationTable t;
  if (doc.contains("command")) t.command = text(doc, "command", "");
  const nlohmann::json& summary = member(doc, "summary", "");
  t.median_abs_error = non_negative(summary, "median_abs_error", "summary");
  t.p90_abs_error = non_negative(summary, "p90_abs_error", "summary");
  const nlohmann::json& cases = list(doc, "cases", "");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& c = cases[i];
    const std::string p = at("cases", i);
    ValidationRow row{positive(c, "ranks", p),
                      positive_number(c, "rate_bps", p),
                      text(c, "algorithm", p),
                      count(c, "bytes", p),
                      non_negative(c, "measured_s", p),
                      non_negative(c, "predicted_s", p),
                      0.0};
    row.error = row.measured_s > 0 ? (row.predicted_s - row.measured_s) / row.measured_s : 0.0;
    t.rows.push_back(row);
  }
  return t;
}

// ---- rendering ----

std::string html(std::string_view s) { return escape_xml(s); }

std::string fixed(double v, const char* form) {
  char t[48];
  std::snprintf(t, sizeof t, form, v);
  return t;
}

std::string bytes_label(double v) { return format_bytes(static_cast<std::uint64_t>(std::llround(v))); }
std::string seconds_label(double v) { return format_seconds(v); }

PlotAxis axis(std::string label, bool log, std::function<std::string(double)> format = {}) {
  PlotAxis a;
  a.label = std::move(label);
  a.log = log;
  a.format = std::move(format);
  return a;
}

LinePlot line_plot(std::string title, PlotAxis x, PlotAxis y) {
  LinePlot p;
  p.title = std::move(title);
  p.x = std::move(x);
  p.y = std::move(y);
  return p;
}

// Powers of two from at or below `lo` to at or above `hi` (both > 0).
std::vector<double> powers_of_two(double lo, double hi) {
  std::vector<double> out;
  for (double v = std::pow(2.0, std::floor(std::log2(lo) + 1e-9)); v < hi * (1 + 1e-9); v *= 2)
    out.push_back(v);
  if (out.empty() || out.back() < hi * (1 - 1e-9)) out.push_back(out.empty() ? hi : out.back() * 2);
  return out;
}

// A chart's width in a grid of two columns, and of one alone on a row of its own.
constexpr double half_width = 720;
constexpr double full_width = 1440;

void section_predict(std::ostringstream& out, const PredictTable& t, SeriesColours& colours) {
  out << "<section class=\"predict\"><h2>Prediction: " << html(t.scenario) << "</h2>\n<p>" << html(t.model) << " on "
      << html(t.device) << ", cluster " << html(t.cluster) << ", " << html(t.scaling) << " scaling.</p>\n";
  if (!t.trust.empty()) out << "<p class=\"trust\">How far to trust it: " << html(t.trust) << ".</p>\n";
  std::vector<std::string> algorithms;
  const PredictRow* baseline = nullptr;
  std::set<int> counts{1};
  double least_speedup = 1;
  double most_speedup = 1;
  for (const PredictRow& r : t.rows) {
    counts.insert(r.accelerators);
    if (r.fits && r.speedup > 0) {
      least_speedup = std::min(least_speedup, r.speedup);
      most_speedup = std::max(most_speedup, r.speedup);
    }
    if (r.accelerators == 1) {
      baseline = &r;
      continue;
    }
    if (std::find(algorithms.begin(), algorithms.end(), r.algorithm) == algorithms.end())
      algorithms.push_back(r.algorithm);
  }
  const int most = *counts.rbegin();
  // speedup on log-log axes, where the ideal y = x is the straight diagonal through every accelerator count
  PlotAxis accelerators = axis("accelerators", true);
  accelerators.ticks.assign(counts.begin(), counts.end());
  PlotAxis speedup_axis = axis("speedup (x one accelerator)", true);
  speedup_axis.ticks = powers_of_two(least_speedup, std::max<double>(most, most_speedup));
  LinePlot speedup = line_plot("Speedup over one accelerator", accelerators, speedup_axis);
  LinePlot efficiency =
      line_plot("Scaling efficiency (speedup / accelerators)", accelerators, axis("efficiency (%)", false));
  for (const std::string& a : algorithms) {
    PlotSeries s{a, {}, false, colours.colour(a)};
    PlotSeries e{a, {}, false, colours.colour(a)};
    if (baseline != nullptr && baseline->fits) {
      s.points.emplace_back(1, 1);
      e.points.emplace_back(1, 100);
    }
    for (const PredictRow& r : t.rows) {
      if (r.algorithm != a || !r.fits) continue;
      s.points.emplace_back(r.accelerators, r.speedup);
      e.points.emplace_back(r.accelerators, 100 * r.efficiency);
    }
    speedup.series.push_back(std::move(s));
    efficiency.series.push_back(std::move(e));
  }
  PlotSeries ideal{"ideal (linear)", {}, true, std::string(reference_colour)};
  PlotSeries ideal_efficiency{"ideal", {}, true, std::string(reference_colour)};
  for (int a : counts) {
    if (a > most) break;
    ideal.points.emplace_back(a, a);
    ideal_efficiency.points.emplace_back(a, 100);
  }
  speedup.series.push_back(std::move(ideal));
  efficiency.series.push_back(std::move(ideal_efficiency));
  out << "<div class=\"charts\">" << render_line_plot(speedup) << render_line_plot(efficiency);
  for (const std::string& a : algorithms) {
    StackedBars bars;
    bars.title = "Where a step's time goes: " + a;
    bars.x_label = "accelerators";
    bars.y = axis("time per step (s)", false, seconds_label);
    bars.parts = {"forward", "backward", "exposed communication", "input stall", "optimizer"};
    for (const std::string& part : bars.parts)
      bars.part_colours.push_back(colours.colour(part));
    for (const PredictRow& r : t.rows) {
      if (!r.fits || (r.algorithm != a && r.accelerators != 1)) continue;
      bars.categories.push_back(std::to_string(r.accelerators));
      bars.values.push_back({r.forward_s, r.backward_s, r.exposed_comm_s, r.input_stall_s, r.optimizer_s});
    }
    out << render_stacked_bars(bars);
    // predict --samples: the sampled steps of the largest size, as a histogram
    const PredictRow* sampled = nullptr;
    for (const PredictRow& r : t.rows) {
      if (r.algorithm == a && r.fits && !r.histogram.empty()) sampled = &r;
    }
    if (sampled != nullptr) {
      StackedBars histogram;
      histogram.title = "Sampled step times: " + a + " on " + std::to_string(sampled->accelerators) + " (" +
                        std::to_string(sampled->samples) + " samples, mean " + format_seconds(sampled->mean_s) +
                        ", p99 " + format_seconds(sampled->p99_s) + ")";
      histogram.x_label = "step time (bin centre)";
      histogram.y = axis("samples", false);
      histogram.parts = {"samples"};
      histogram.part_colours = {colours.colour(a)};
      for (const auto& [centre, n] : sampled->histogram) {
        histogram.categories.push_back(format_seconds(centre));
        histogram.values.push_back({static_cast<double>(n)});
      }
      out << render_stacked_bars(histogram);
    }
  }
  out << "</div>\n";
  const bool any_sampled = std::any_of(t.rows.begin(), t.rows.end(), [](const PredictRow& r) { return r.samples > 0; });
  const bool ranges =
      std::any_of(t.rows.begin(), t.rows.end(), [](const PredictRow& r) { return r.samples_per_s_range.has_value(); });
  out << "<table><thead><tr><th>accelerators</th><th>algorithm</th><th>step</th>"
      << (any_sampled ? "<th>sampled mean</th><th>sampled p99</th>" : "") << "<th>samples/s</th>"
      << (ranges ? "<th>80% of held-out runs</th>" : "") << "<th>speedup</th>"
      << (ranges ? "<th>80% of held-out runs</th>" : "")
      << "<th>efficiency</th><th>bottleneck</th></tr></thead><tbody>\n";
  auto range_cell = [](const std::optional<std::pair<double, double>>& r, const char* format) {
    if (!r) return std::string("<td></td>");
    return "<td>" + fixed(r->first, format) + " to " + fixed(r->second, format) + "</td>";
  };
  for (const PredictRow& r : t.rows) {
    out << "<tr><td>" << r.accelerators << "</td><td>" << html(r.algorithm) << "</td>";
    if (!r.fits) {
      out << "<td colspan=\"" << (any_sampled ? 6 : 4) + (ranges ? 2 : 0) << "\">does not fit in memory</td>";
    } else {
      out << "<td>" << html(format_seconds(r.step_s)) << "</td>";
      if (any_sampled) {
        out << "<td>" << (r.samples > 0 ? html(format_seconds(r.mean_s)) : "") << "</td><td>"
            << (r.samples > 0 ? html(format_seconds(r.p99_s)) : "") << "</td>";
      }
      out << "<td>" << fixed(r.samples_per_s, "%.0f") << "</td>"
          << (ranges ? range_cell(r.samples_per_s_range, "%.0f") : "") << "<td>" << fixed(r.speedup, "%.2fx") << "</td>"
          << (ranges ? range_cell(r.speedup_range, "%.2fx") : "") << "<td>" << format_percent(r.efficiency) << "</td>";
    }
    out << "<td class=\"words\">" << html(r.bottleneck) << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
  if (t.links_accelerators > 0) {
    out << "<h3>Most utilised links at " << t.links_accelerators << " accelerators (" << html(t.links_algorithm)
        << ")</h3>\n<table class=\"links\"><thead><tr><th>links</th><th>capacity</th><th>bytes per link</th>"
           "<th>busy</th><th>utilisation</th></tr></thead><tbody>\n";
    if (!t.link_groups.empty()) {
      for (const LinkGroupRow& g : t.link_groups) {
        out << "<tr><td>";
        if (g.count == 1) {
          out << html(g.first);
        } else {
          out << g.count << " × " << html(g.kind) << " links, e.g. " << html(g.first);
        }
        out << "</td><td>" << html(format_capacity(g.kind, g.capacity_Bps)) << "</td><td>"
            << html(format_bytes(g.bytes)) << "</td><td>" << format_percent(g.busy_fraction) << "</td><td>"
            << format_percent(g.utilisation) << "</td></tr>\n";
      }
    } else {
      for (const LinkRow& l : t.links) {
        out << "<tr><td>" << html(l.name) << "</td><td></td><td>" << html(format_bytes(l.bytes)) << "</td><td>"
            << format_percent(l.busy_fraction) << "</td><td>" << format_percent(l.utilisation) << "</td></tr>\n";
      }
    }
    out << "</tbody></table>\n<p class=\"note\">Links alike (of one kind and capacity, as busy and as utilised) "
           "share a row, the most utilised first. busy: the share of the simulated steps in which some message "
           "crossed the link; utilisation: bytes carried over what the link could carry in that time.</p>\n";
  }
  out << "</section>\n";
}

void section_compare(std::ostringstream& out, const CompareTable& t, SeriesColours& colours) {
  std::string title = t.collective;
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  out << "<section class=\"compare\"><h2>" << html(title) << " algorithms compared</h2>\n";
  std::set<int> rank_counts;
  std::set<std::uint64_t> sizes;
  std::vector<std::string> algorithms;
  for (const CompareRow& r : t.rows) {
    rank_counts.insert(r.ranks);
    sizes.insert(r.bytes);
    if (std::find(algorithms.begin(), algorithms.end(), r.algorithm) == algorithms.end())
      algorithms.push_back(r.algorithm);
  }
  const std::vector<Crossover> cross = crossovers(t);
  const bool alone = rank_counts.size() == 1;  // a chart alone takes the whole row
  out << (alone ? "<div class=\"charts wide\">" : "<div class=\"charts\">");
  for (int p : rank_counts) {
    LinePlot plot =
        line_plot(title + " time at " + std::to_string(p) + " ranks",
                  axis("message size per rank (bytes)", true, bytes_label), axis("time (s)", true, seconds_label));
    plot.width = alone ? full_width : half_width;
    for (const std::string& a : algorithms) {
      PlotSeries s{a, {}, false, colours.colour(a)};
      for (const CompareRow& r : t.rows) {
        if (r.ranks == p && r.algorithm == a && r.bytes > 0) s.points.emplace_back(r.bytes, r.time_s);
      }
      std::sort(s.points.begin(), s.points.end());
      plot.series.push_back(std::move(s));
    }
    for (const Crossover& c : cross) {
      if (c.ranks == p) plot.markers.emplace_back(static_cast<double>(c.bytes), c.after);
    }
    out << render_line_plot(plot);
  }
  out << "</div>\n";
  CategoryGrid grid;
  grid.title = "Fastest algorithm by ranks and message size";
  grid.x_label = "message size per rank";
  grid.y_label = "ranks";
  grid.legend = algorithms;
  for (const std::string& a : algorithms)
    grid.legend_colours.push_back(colours.colour(a));
  grid.width = full_width;
  for (std::uint64_t b : sizes)
    grid.columns.push_back(format_bytes(b));
  for (auto it = rank_counts.rbegin(); it != rank_counts.rend(); ++it) {
    grid.rows.push_back(std::to_string(*it));
    std::vector<int> row;
    std::vector<std::string> notes;
    for (std::uint64_t b : sizes) {
      const CompareRow* best = nullptr;
      for (const CompareRow& r : t.rows) {
        if (r.ranks == *it && r.bytes == b && (best == nullptr || r.time_s < best->time_s)) best = &r;
      }
      if (best == nullptr) {
        row.push_back(-1);
        notes.emplace_back();
        continue;
      }
      row.push_back(
          static_cast<int>(std::find(algorithms.begin(), algorithms.end(), best->algorithm) - algorithms.begin()));
      notes.push_back(format_seconds(best->time_s));
    }
    grid.cells.push_back(std::move(row));
    grid.notes.push_back(std::move(notes));
  }
  out << "<div class=\"charts wide\">" << render_category_grid(grid) << "</div>\n";
  if (!cross.empty()) {
    out << "<h3>Crossovers</h3>\n<table><thead><tr><th>ranks</th><th>from size</th><th>fastest before</th>"
           "<th>fastest from there</th></tr></thead><tbody>\n";
    for (const Crossover& c : cross) {
      out << "<tr><td>" << c.ranks << "</td><td>" << html(format_bytes(c.bytes)) << "</td><td>" << html(c.before)
          << "</td><td>" << html(c.after) << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
  }
  out << "</section>\n";
}

void section_train(std::ostringstream& out, const std::vector<TrainCurve>& curves, SeriesColours& colours) {
  out << "<section class=\"train\"><h2>Training: accuracy against simulated time</h2>\n";
  LinePlot accuracy = line_plot("Test accuracy against simulated time", axis("simulated time (s)", false),
                                axis("test accuracy (%)", false));
  LinePlot loss = line_plot("Training loss against simulated time", axis("simulated time (s)", false),
                            axis("training loss (cross-entropy)", false));
  for (const TrainCurve& c : curves) {
    const std::string name = c.name + " (" + c.mode + ", " + std::to_string(c.workers) + " workers)";
    PlotSeries a{name, {}, false, colours.colour(name)};
    PlotSeries l{name, {}, false, colours.colour(name)};
    for (const TrainPoint& p : c.points) {
      a.points.emplace_back(p.time_s, 100 * p.test_accuracy);
      if (p.time_s > 0) l.points.emplace_back(p.time_s, p.train_loss);
    }
    accuracy.series.push_back(std::move(a));
    loss.series.push_back(std::move(l));
    if (c.time_to_target_s >= 0) {
      accuracy.markers.emplace_back(c.time_to_target_s, c.name + " reaches " + format_percent(c.target_accuracy));
    }
  }
  out << "<div class=\"charts\">" << render_line_plot(accuracy) << render_line_plot(loss) << "</div>\n";
  out << "<table><thead><tr><th>run</th><th>mode</th><th>workers</th><th>final accuracy</th><th>target</th>"
         "<th>time to target</th></tr></thead><tbody>\n";
  for (const TrainCurve& c : curves) {
    out << "<tr><td>" << html(c.name) << "</td><td>" << html(c.mode) << "</td><td>" << c.workers << "</td><td>"
        << format_percent(c.points.back().test_accuracy) << "</td><td>" << format_percent(c.target_accuracy)
        << "</td><td>"
        << (c.time_to_target_s >= 0 ? html(format_seconds(c.time_to_target_s)) : std::string("not reached"))
        << "</td></tr>\n";
  }
  out << "</tbody></table></section>\n";
}

void section_validation(std::ostringstream& out, const ValidationTable& t, SeriesColours& colours) {
  out << "<section class=\"validation\"><h2>Validation: predictions against real runs</h2>\n";
  if (!t.command.empty()) out << "<p>Produced by <code>" << html(t.command) << "</code>.</p>\n";
  out << "<p><strong>Sizes of 1 MB and more: median |error| " << format_percent(t.median_abs_error)
      << ", 90th percentile " << format_percent(t.p90_abs_error) << ".</strong></p>\n";
  LinePlot scatter = line_plot("Predicted against measured time", axis("measured (s)", true, seconds_label),
                               axis("predicted (s)", true, seconds_label));
  scatter.width = full_width;
  std::vector<std::string> algorithms;
  double lo = 1e300;
  double hi = 0;
  for (const ValidationRow& r : t.rows) {
    if (std::find(algorithms.begin(), algorithms.end(), r.algorithm) == algorithms.end())
      algorithms.push_back(r.algorithm);
    if (r.measured_s > 0) {
      lo = std::min(lo, r.measured_s);
      hi = std::max(hi, r.measured_s);
    }
  }
  for (const std::string& a : algorithms) {
    PlotSeries s{a, {}, false, colours.colour(a)};
    for (const ValidationRow& r : t.rows) {
      if (r.algorithm == a) s.points.emplace_back(r.measured_s, r.predicted_s);
    }
    std::sort(s.points.begin(), s.points.end());
    scatter.series.push_back(std::move(s));
  }
  // both axes log: y = x is the straight line between its ends
  if (hi > 0) {
    scatter.series.push_back({"prediction = measurement", {{lo, lo}, {hi, hi}}, true, std::string(reference_colour)});
  }
  out << "<div class=\"charts wide\">" << render_line_plot(scatter) << "</div>\n";
  out << "<table><thead><tr><th>ranks</th><th>rate</th><th>algorithm</th><th>bytes</th><th>measured</th>"
         "<th>predicted</th><th>error</th></tr></thead><tbody>\n";
  for (const ValidationRow& r : t.rows) {
    const bool large = r.bytes >= 1048576;
    out << "<tr" << (std::fabs(r.error) > 0.1 && large ? " class=\"miss\"" : "") << "><td>" << r.ranks << "</td><td>"
        << html(format_bits_per_s(r.rate_bps / 8)) << "</td><td>" << html(r.algorithm) << "</td><td>"
        << html(format_bytes(r.bytes)) << "</td><td>" << html(format_seconds(r.measured_s)) << "</td><td>"
        << html(format_seconds(r.predicted_s)) << "</td><td>" << format_signed_percent(r.error) << "</td></tr>\n";
  }
  out << "</tbody></table>\n<p class=\"note\">Rows marked are sizes of 1 MB or more that missed by over 10%.</p>\n"
         "</section>\n";
}

constexpr const char* style = R"(body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1500px;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,560px),1fr));gap:1em;margin:1em 0}
.charts.wide{grid-template-columns:1fr}
svg{background:#fff;border:1px solid #ddd;box-sizing:border-box}.charts svg{width:100%;height:auto}
svg .title{font-size:14px;font-weight:600}svg .tick,svg .legend,svg .note{font-size:11px}svg .label{font-size:12px}
svg .grid{stroke:#eee}svg .axis{stroke:#444}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}
td.words{white-space:normal;text-align:left}
td:nth-child(2),th:nth-child(2){text-align:left}table.links td:first-child,table.links th:first-child{text-align:left}
table.links td:nth-child(2),table.links th:nth-child(2){text-align:right}tr.miss td{background:#fde2e2}.note{color:#555;font-size:12px}
)";

}  // namespace

void add_result(const nlohmann::json& document, const std::string& source, ReportContent& content) {
  if (document.is_array()) {
    content.compares.push_back(read_compare(document));
  } else if (document.is_object() && document.contains("results")) {
    content.predicts.push_back(read_predict(document));
  } else if (document.is_object() && document.contains("points")) {
    content.trains.push_back(read_train(document));
  } else if (is_framework_validation(document)) {
    content.frameworks.push_back(read_framework_validation(document));
  } else if (is_published_validation(document)) {
    content.published.push_back(read_published_validation(document));
  } else if (document.is_object() && document.contains("cases")) {
    content.validations.push_back(read_validation(document));
  } else {
    throw ResultFileError(
        "not a result of dtsim predict, compare, train or validate (expected a list of runs, or an object with "
        "\"results\", \"points\" or \"cases\")");
  }
  content.sources.push_back(source);
}

std::vector<Crossover> crossovers(const CompareTable& table) {
  std::map<int, std::map<std::uint64_t, const CompareRow*>> best;  // ranks -> bytes -> fastest run
  for (const CompareRow& r : table.rows) {
    const CompareRow*& b = best[r.ranks][r.bytes];
    if (b == nullptr || r.time_s < b->time_s) b = &r;
  }
  std::vector<Crossover> out;
  for (const auto& [ranks, by_size] : best) {
    const CompareRow* previous = nullptr;
    for (const auto& [bytes, row] : by_size) {
      if (previous != nullptr && previous->algorithm != row->algorithm) {
        out.push_back({ranks, bytes, previous->algorithm, row->algorithm});
      }
      previous = row;
    }
  }
  return out;
}

std::string render_report_html(const ReportContent& content) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>dtsim report</title>\n"
         "<style>"
      << style << "</style>\n</head>\n<body>\n<h1>dtsim report</h1>\n<p>From ";
  for (std::size_t i = 0; i < content.sources.size(); ++i)
    out << (i > 0 ? ", " : "") << "<code>" << html(content.sources[i]) << "</code>";
  out << ".</p>\n";
  SeriesColours colours;  // one colour per name across every chart of the page
  for (const PredictTable& t : content.predicts)
    section_predict(out, t, colours);
  for (const CompareTable& t : content.compares)
    section_compare(out, t, colours);
  if (!content.trains.empty()) section_train(out, content.trains, colours);
  for (const ValidationTable& t : content.validations)
    section_validation(out, t, colours);
  for (const PublishedReport& t : content.published)
    out << render_published_section(t, colours);
  for (const FrameworkReport& t : content.frameworks)
    out << render_framework_section(t, colours);
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace dtsim
