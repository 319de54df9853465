// The report's charts read as drawn: reference lines where their equations put them on the axes the chart uses, one
// colour per algorithm in every chart, legends inside their chart.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "reports/html_report.hpp"
#include "reports/palette.hpp"
#include "reports/svg_plot.hpp"

using namespace dtsim;

namespace {

std::vector<std::string> svgs_of(const std::string& html) {
  std::vector<std::string> out;
  for (std::size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    out.push_back(html.substr(at, html.find("</svg>", at) + 6 - at));
  return out;
}

std::string svg_titled(const std::string& html, const std::string& title) {
  for (const std::string& svg : svgs_of(html)) {
    if (svg.find("aria-label=\"" + title + "\"") != std::string::npos) return svg;
  }
  FAIL("no chart titled " << title);
  return "";
}

// Pixel position = a + b f(value), f the identity (linear axis) or log10 (log axis), as a reader reads it off the
// ticks: fitted to the ticks' labels and positions.
struct AxisMap {
  bool log = false;
  double a = 0;
  double b = 1;
  double value(double px) const {
    const double f = (px - a) / b;
    return log ? std::pow(10.0, f) : f;
  }
};

AxisMap read_axis(const std::string& svg, char axis) {
  // x ticks: a vertical grid line at x1; y ticks: a horizontal one at y1; each followed by its label
  const std::string at = axis == 'x' ? "x1" : "y1";
  const std::regex tick("<line class=\"grid " + std::string(1, axis) + "\"[^>]*? " + at +
                        "=\"([-0-9.]+)\"[^>]*/><text class=\"tick " + std::string(1, axis) + "\"[^>]*>([^<]*)</text>");
  std::vector<std::pair<double, double>> ticks;  // (value, px)
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    ticks.emplace_back(std::stod((*it)[2].str()), std::stod((*it)[1].str()));
  REQUIRE(ticks.size() >= 3);  // enough to tell a log axis from a linear one
  AxisMap best;
  double best_residual = INFINITY;
  for (const bool log : {false, true}) {
    if (log && std::any_of(ticks.begin(), ticks.end(), [](const auto& t) { return t.first <= 0; })) continue;
    double sf = 0, sp = 0, sff = 0, sfp = 0;
    for (const auto& [v, px] : ticks) {
      const double f = log ? std::log10(v) : v;
      sf += f;
      sp += px;
      sff += f * f;
      sfp += f * px;
    }
    const double n = static_cast<double>(ticks.size());
    AxisMap m;
    m.log = log;
    m.b = (n * sfp - sf * sp) / (n * sff - sf * sf);
    m.a = (sp - m.b * sf) / n;
    double residual = 0;
    for (const auto& [v, px] : ticks)
      residual = std::max(residual, std::fabs(m.a + m.b * (log ? std::log10(v) : v) - px));
    if (residual < best_residual) {
      best_residual = residual;
      best = m;
    }
  }
  INFO("axis " << axis << ": no linear or log mapping fits its ticks");
  REQUIRE(best_residual < 0.5);  // positions are written to 0.1 px
  return best;
}

std::vector<std::pair<double, double>> polyline_of(const std::string& svg, const std::string& series) {
  const std::regex re("<g class=\"series\" data-series=\"" + series + "\">\\s*<polyline[^>]* points=\"([^\"]*)\"");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, re));
  std::vector<std::pair<double, double>> points;
  const std::regex point("([-0-9.]+),([-0-9.]+)");
  const std::string text = m[1].str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), point); it != std::sregex_iterator(); ++it)
    points.emplace_back(std::stod((*it)[1].str()), std::stod((*it)[2].str()));
  return points;
}

nlohmann::json predict_row(int accelerators, const char* algorithm, double speedup) {
  const double step_s = 0.31 * accelerators / speedup;
  return {{"accelerators", accelerators},
          {"algorithm", algorithm},
          {"fits", true},
          {"step_time_s", step_s},
          {"samples_per_s", 64 * accelerators / step_s},
          {"speedup", speedup},
          {"efficiency", speedup / accelerators},
          {"breakdown",
           {{"forward_s", 0.1},
            {"backward_s", 0.2},
            {"exposed_comm_s", step_s - 0.31},
            {"input_stall_s", 0.0},
            {"optimizer_s", 0.01}}},
          {"bottleneck", "communication"}};
}

// ring at 98% efficiency and direct well below, on 1 to 32 accelerators
nlohmann::json chart_predict_result() {
  nlohmann::json results = nlohmann::json::array({predict_row(1, "none", 1.0)});
  for (int a : {2, 4, 8, 16, 32}) {
    results.push_back(predict_row(a, "ring", 0.98 * a));
    results.push_back(predict_row(a, "direct", 0.6 * a));
  }
  return {{"scenario", "s"}, {"model", "resnet50"}, {"device", "v100"},
          {"cluster", "c"},  {"scaling", "weak"},   {"results", results}};
}

nlohmann::json chart_compare_result() {
  nlohmann::json runs = nlohmann::json::array();
  for (int ranks : {8, 64}) {
    for (std::uint64_t bytes : {1000ULL, 1000000ULL, 100000000ULL}) {
      int k = 0;
      for (const char* algorithm : {"direct", "butterfly", "ring"}) {  // another order than predict's
        runs.push_back({{"algorithm", algorithm},
                        {"ranks", ranks},
                        {"bytes", bytes},
                        {"time_s", 1e-5 * ranks * (k + 1) + static_cast<double>(bytes) * 1e-10 * (3 - k)},
                        {"busbw_Bps", 1e9}});
        ++k;
      }
    }
  }
  return runs;
}

nlohmann::json train_result(const std::string& name) {
  return {{"name", name},
          {"mode", "allreduce"},
          {"workers", 4},
          {"target_accuracy", 0.8},
          {"time_to_target_s", 2.0},
          {"points",
           {{{"epoch", 0}, {"time_s", 0}, {"train_loss", 0}, {"test_accuracy", 0.1}},
            {{"epoch", 1}, {"time_s", 2.0}, {"train_loss", 0.5}, {"test_accuracy", 0.82}}}}};
}

std::string full_report() {
  ReportContent content;
  add_result(chart_predict_result(), "predict.json", content);
  add_result(chart_compare_result(), "compare.json", content);
  add_result(train_result("a training run with a rather long name"), "train.json", content);
  return render_report_html(content);
}

}  // namespace

TEST_CASE("the ideal speedup is y = x on the speedup chart's axes, between its points too") {
  const std::string svg = svg_titled(full_report(), "Speedup over one accelerator");
  const AxisMap x = read_axis(svg, 'x');
  const AxisMap y = read_axis(svg, 'y');
  const std::vector<std::pair<double, double>> ideal = polyline_of(svg, "ideal \\(linear\\)");
  REQUIRE(ideal.size() >= 2);
  auto check_on_diagonal = [&](double px, double py) {
    CAPTURE(px, py, x.value(px), y.value(py));
    CHECK(y.value(py) == Approx(x.value(px)).epsilon(0.01));
  };
  // every vertex, and the middle of every segment (where a straight segment leaves y = x unless both axes are alike)
  for (std::size_t i = 0; i < ideal.size(); ++i) {
    check_on_diagonal(ideal[i].first, ideal[i].second);
    if (i > 0) {
      check_on_diagonal((ideal[i - 1].first + ideal[i].first) / 2, (ideal[i - 1].second + ideal[i].second) / 2);
    }
  }
  // it reaches the largest count, 32, where a 98%-efficient ring is drawn just below it
  CHECK(x.value(ideal.back().first) == Approx(32).epsilon(0.01));
  const std::vector<std::pair<double, double>> ring = polyline_of(svg, "ring");
  CHECK(y.value(ring.back().second) == Approx(0.98 * 32).epsilon(0.01));

  // the efficiency chart's ideal is 100% at every count
  const std::string efficiency = svg_titled(full_report(), "Scaling efficiency (speedup / accelerators)");
  const AxisMap ey = read_axis(efficiency, 'y');
  for (const auto& [px, py] : polyline_of(efficiency, "ideal"))
    CHECK(ey.value(py) == Approx(100).epsilon(0.001));
}

TEST_CASE("an algorithm has one colour in every chart of the report, and no two algorithms share one") {
  const std::string html = full_report();
  std::map<std::string, std::set<std::string>> colours;  // name -> colours it is drawn in
  const std::regex line("<g class=\"series\" data-series=\"([^\"]+)\">\\s*<polyline fill=\"none\" stroke=\"([^\"]+)\"");
  const std::regex cell("<rect class=\"cell\" data-winner=\"([^\"]+)\"[^>]* fill=\"([^\"]+)\"");
  const std::regex legend("(?:stroke|fill)=\"(#[0-9A-Fa-f]{6})\"[^>]*/><text class=\"legend\"[^>]*>([^<]*)</text>");
  for (const std::regex* re : {&line, &cell}) {
    for (auto it = std::sregex_iterator(html.begin(), html.end(), *re); it != std::sregex_iterator(); ++it)
      colours[(*it)[1].str()].insert((*it)[2].str());
  }
  for (auto it = std::sregex_iterator(html.begin(), html.end(), legend); it != std::sregex_iterator(); ++it)
    colours[(*it)[2].str()].insert((*it)[1].str());
  for (const char* algorithm : {"ring", "direct", "butterfly"}) {
    CAPTURE(algorithm);
    REQUIRE(colours.count(algorithm) == 1);
    CHECK(colours[algorithm] == std::set<std::string>{std::string(*algorithm_colour(algorithm))});
  }
  CHECK(colours["ring"] != colours["direct"]);
  // every allreduce algorithm has a colour of its own
  std::set<std::string_view> taken;
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.collective != Collective::allreduce) continue;
    CAPTURE(info.name);
    REQUIRE(algorithm_colour(info.name).has_value());
    CHECK(taken.insert(*algorithm_colour(info.name)).second);
    CHECK(*algorithm_colour(info.name) != reference_colour);
  }
  // other series take colours no algorithm has, the same one each time
  SeriesColours series;
  const std::string run = series.colour("a run");
  CHECK(taken.count(run) == 0);
  CHECK(series.colour("another run") != run);
  CHECK(series.colour("a run") == run);
  CHECK(series.colour("ring") == *algorithm_colour("ring"));
}

TEST_CASE("every legend and title fits inside its chart") {
  const std::string html = full_report();
  const std::regex view_box("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\"");
  const std::regex text("<text class=\"(legend|title)\" x=\"([0-9.]+)\" y=\"([0-9.]+)\">([^<]*)</text>");
  std::size_t legends = 0;
  for (const std::string& svg : svgs_of(html)) {
    std::smatch box;
    REQUIRE(std::regex_search(svg, box, view_box));
    const double width = std::stod(box[1].str());
    const double height = std::stod(box[2].str());
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
      const std::string words = (*it)[4].str();
      const double font_px = (*it)[1].str() == "title" ? 14 : 11;  // the style sheet's sizes
      // 0.62 em a character: wider than the average character of the usual sans-serif fonts (the Chromium test
      // measures the real extents)
      const double right = std::stod((*it)[2].str()) + 0.62 * font_px * static_cast<double>(words.size());
      CAPTURE(words, right, width);
      CHECK(right <= width);
      CHECK(std::stod((*it)[3].str()) <= height);
      legends += (*it)[1].str() == "legend" ? 1 : 0;
    }
  }
  CHECK(html.find(">exposed communication</text>") != std::string::npos);
  CHECK(html.find(">a training run with a rather long name (allreduce, 4 workers)</text>") != std::string::npos);
  CHECK(legends > 20);

  // a chart of many series grows to hold its legend
  LinePlot plot;
  plot.title = "t";
  for (int i = 0; i < 30; ++i)
    plot.series.push_back({"series " + std::to_string(i), {{1, 1}, {2, 2}}, false, ""});
  const std::string svg = render_line_plot(plot);
  std::smatch box;
  REQUIRE(std::regex_search(svg, box, view_box));
  CHECK(std::stod(box[2].str()) >= 36 + 30 * 18);
}
