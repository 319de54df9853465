// Reports people look at: the HTML report, trace-event files, link utilisation and the progress line.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "reports/collective_report.hpp"
#include "reports/csv_table.hpp"
#include "reports/format.hpp"
#include "reports/grounding.hpp"
#include "reports/html_report.hpp"
#include "reports/output_file.hpp"
#include "reports/progress.hpp"
#include "reports/svg_plot.hpp"
#include "reports/trace_file.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/device_file.hpp"
#include "sim/link_load.hpp"
#include "sim/link_usage.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

// Empty when `html` is well formed: every element closed in order (void elements and "/>" excepted), attributes
// quoted, every '&' an entity; otherwise what is wrong and where.
std::string well_formed_error(const std::string& html) {
  static const std::vector<std::string> void_elements{"meta", "br", "img", "input", "link", "hr"};
  std::vector<std::string> open;
  std::size_t i = 0;
  auto where = [&](std::size_t at) { return " at offset " + std::to_string(at); };
  while (i < html.size()) {
    const char c = html[i];
    if (c == '&') {
      const std::size_t semi = html.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return "bare '&'" + where(i);
      const std::string entity = html.substr(i, semi - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" && entity != "&#39;") {
        return "unknown entity " + entity + where(i);
      }
      i = semi + 1;
      continue;
    }
    if (c == '>') return "stray '>'" + where(i);
    if (c != '<') {
      ++i;
      continue;
    }
    if (html.compare(i, 9, "<!DOCTYPE") == 0) {
      i = html.find('>', i) + 1;
      continue;
    }
    const bool closing = i + 1 < html.size() && html[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    std::string name;
    while (j < html.size() && (std::isalnum(static_cast<unsigned char>(html[j])) != 0 || html[j] == '-'))
      name += html[j++];
    if (name.empty()) return "tag without a name" + where(i);
    bool self_closing = false;
    // attributes: name="value"
    while (j < html.size() && html[j] != '>') {
      if (html[j] == '/' && j + 1 < html.size() && html[j + 1] == '>') {
        self_closing = true;
        ++j;
        break;
      }
      if (std::isspace(static_cast<unsigned char>(html[j])) != 0) {
        ++j;
        continue;
      }
      while (j < html.size() && html[j] != '=' && html[j] != '>' &&
             std::isspace(static_cast<unsigned char>(html[j])) == 0)
        ++j;
      if (j >= html.size() || html[j] != '=') return "attribute without a value in <" + name + ">" + where(j);
      if (html[j + 1] != '"') return "unquoted attribute in <" + name + ">" + where(j);
      const std::size_t end = html.find('"', j + 2);
      if (end == std::string::npos) return "unterminated attribute" + where(j);
      if (html.substr(j + 2, end - j - 2).find('<') != std::string::npos) return "'<' in an attribute" + where(j);
      j = end + 1;
    }
    if (j >= html.size()) return "unterminated tag <" + name + ">" + where(i);
    i = j + 1;
    if (closing) {
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">") + where(i);
      }
      open.pop_back();
    } else if (!self_closing && std::find(void_elements.begin(), void_elements.end(), name) == void_elements.end()) {
      open.push_back(name);
      if (name == "style") {  // raw text up to </style>
        const std::size_t end = html.find("</style>", i);
        if (end == std::string::npos) return "unterminated <style>";
        i = end;
      }
    }
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return "";
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

nlohmann::json predict_result() {
  nlohmann::json results = nlohmann::json::array();
  auto row = [](int accelerators, const char* algorithm, double step_s, double speedup) {
    return nlohmann::json{{"accelerators", accelerators},
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
                          {"bottleneck", "compute"}};
  };
  results.push_back(row(1, "none", 0.31, 1.0));
  for (int a : {8, 64}) {
    results.push_back(row(a, "ring", 0.31 + 0.001 * a, a * 0.31 / (0.31 + 0.001 * a)));
    results.push_back(row(a, "tree", 0.31 + 0.002 * a, a * 0.31 / (0.31 + 0.002 * a)));
  }
  return {{"scenario", "test <scenario> & co"},
          {"model", "resnet50"},
          {"device", "v100"},
          {"cluster", "c"},
          {"scaling", "weak"},
          {"results", results}};
}

nlohmann::json compare_result() {
  nlohmann::json runs = nlohmann::json::array();
  // butterfly wins small sizes, ring large ones: one crossover per rank count, at 1 MB
  for (int ranks : {8, 64}) {
    for (std::uint64_t bytes : {1000ULL, 1000000ULL, 100000000ULL}) {
      runs.push_back({{"algorithm", "ring"},
                      {"ranks", ranks},
                      {"bytes", bytes},
                      {"time_s", 1e-5 * ranks + bytes * 2e-10},
                      {"busbw_Bps", 1e9}});
      runs.push_back({{"algorithm", "butterfly"},
                      {"ranks", ranks},
                      {"bytes", bytes},
                      {"time_s", 1e-6 * ranks + bytes * 1e-9},
                      {"busbw_Bps", 1e9}});
    }
  }
  return runs;
}

}  // namespace

TEST_CASE("the HTML report is well formed, self-contained and holds every expected series") {
  ReportContent content;
  add_result(predict_result(), "predict.json", content);
  add_result(compare_result(), "compare.json", content);
  nlohmann::json train{{"name", "sync"},
                       {"mode", "allreduce"},
                       {"workers", 4},
                       {"target_accuracy", 0.8},
                       {"time_to_target_s", 2.0},
                       {"points",
                        {{{"epoch", 0}, {"time_s", 0}, {"train_loss", 0}, {"test_accuracy", 0.1}},
                         {{"epoch", 1}, {"time_s", 2.0}, {"train_loss", 0.5}, {"test_accuracy", 0.82}}}}};
  add_result(train, "train.json", content);
  nlohmann::json validation{{"command", "dtsim validate"},
                            {"summary", {{"median_abs_error", 0.02}, {"p90_abs_error", 0.06}}},
                            {"cases",
                             {{{"ranks", 4},
                               {"rate_bps", 1e9},
                               {"algorithm", "ring"},
                               {"bytes", 4194304},
                               {"measured_s", 0.0562},
                               {"predicted_s", 0.0569}}}}};
  add_result(validation, "validation.json", content);
  const std::string html = render_report_html(content);
  INFO(html.substr(0, 400));
  CHECK(well_formed_error(html) == "");
  // no resource is fetched: no src or href attributes, no script
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  // predict: speedup and efficiency per algorithm with the ideal line, a breakdown per algorithm
  // ring: speedup and efficiency, the compare charts at 8 and 64 ranks, the validation scatter
  CHECK(count_of(html, "data-series=\"ring\"") == 5);
  CHECK(count_of(html, "data-series=\"ideal (linear)\"") == 1);
  CHECK(count_of(html, "data-series=\"exposed communication\"") == 2);  // ring and tree
  CHECK(html.find("test &lt;scenario&gt; &amp; co") != std::string::npos);
  CHECK(html.find("speedup (x one accelerator)") != std::string::npos);
  CHECK(html.find("time per step (s)") != std::string::npos);
  // compare: one chart per rank count, a winner map of 2 x 3 cells, the crossover at 1 MB
  CHECK(count_of(html, "data-series=\"butterfly\"") == 2);
  CHECK(count_of(html, "class=\"cell\"") == 6);
  CHECK(count_of(html, "data-winner=\"butterfly\"") == 2);
  CHECK(count_of(html, "data-winner=\"ring\"") == 4);
  CHECK(html.find("message size per rank (bytes)") != std::string::npos);
  // train and validation
  CHECK(html.find("test accuracy (%)") != std::string::npos);
  CHECK(html.find("data-series=\"sync (allreduce, 4 workers)\"") != std::string::npos);
  CHECK(html.find("+1.2%") != std::string::npos);  // (0.0569 - 0.0562) / 0.0562
  CHECK(html.find("median |error| 2.0%") != std::string::npos);
}

TEST_CASE(
    "the report's links table: links alike in one row with their count, or an older file's links by utilisation") {
  auto link = [](const char* name, double busy, double utilisation) {
    return nlohmann::json{{"name", name}, {"bytes", 1000}, {"busy_fraction", busy}, {"utilisation", utilisation}};
  };
  nlohmann::json doc = predict_result();
  // as dtsim wrote them before links were ranked by utilisation: the busiest first
  doc["links"] = {
      {"accelerators", 64}, {"algorithm", "ring"}, {"busiest", {link("pcie a", 0.9, 0.1), link("nic a", 0.8, 0.8)}}};
  ReportContent older;
  add_result(doc, "old.json", older);
  std::string html = render_report_html(older);
  CHECK(html.find("<h3>Most utilised links at 64 accelerators (ring)</h3>") != std::string::npos);
  CHECK(html.find(">nic a<") < html.find(">pcie a<"));
  doc["links"]["groups"] = {{{"kind", "nic"},
                             {"count", 8},
                             {"capacity_Bps", 3.125e9},
                             {"bytes", 287516610},
                             {"busy_fraction", 0.81},
                             {"utilisation", 0.809},
                             {"first", "nic 5 -> fabric switch 24 (nic)"}}};
  ReportContent grouped;
  add_result(doc, "new.json", grouped);
  html = render_report_html(grouped);
  CHECK(well_formed_error(html).empty());
  CHECK(html.find("<tr><td>8 × nic links, e.g. nic 5 -&gt; fabric switch 24 (nic)</td><td>25 Gbit/s</td><td>287.5 MB"
                  "</td><td>81.0%</td><td>80.9%</td></tr>") != std::string::npos);
  CHECK(html.find(">pcie a<") == std::string::npos);  // the groups stand for the links
  doc["links"]["groups"][0].erase("count");
  ReportContent bad;
  CHECK_THROWS_WITH(add_result(doc, "bad.json", bad), "links.groups[0].count: missing");
}

TEST_CASE("times and rates fit a table's column at any magnitude and keep their digits below one") {
  using dtsim::format_seconds;
  using dtsim::format_throughput;
  CHECK(format_seconds(2.5e-3) == "2.5 ms");
  CHECK(format_seconds(3600) == "3600 s");
  CHECK(format_seconds(9999) == "9999 s");
  CHECK(format_seconds(36000) == "10 h");
  CHECK(format_seconds(5.632e7) == "651.9 d");  // 15,644 h
  CHECK(format_seconds(1e4 * 86400) == "27.38 y");
  CHECK(format_seconds(3.15576e16) == "1e+09 y");
  for (double s = 1e-9; s < 1e30; s *= 7.3)
    CHECK(format_seconds(s).size() <= 10);
  CHECK(format_throughput(2783.4) == "2783");
  CHECK(format_throughput(12.6) == "13");
  CHECK(format_throughput(2.5) == "2.5");
  CHECK(format_throughput(1.1e-6) == "1.1e-06");
  CHECK(format_throughput(0) == "0");
}

TEST_CASE("crossovers name the size where the fastest algorithm changes") {
  ReportContent content;
  add_result(compare_result(), "c.json", content);
  const std::vector<Crossover> c = crossovers(content.compares.front());
  REQUIRE(c.size() == 2);
  for (const Crossover& x : c) {
    CHECK(x.bytes == 1000000);
    CHECK(x.before == "butterfly");
    CHECK(x.after == "ring");
  }
}

TEST_CASE("a result file that is not dtsim's is refused with the JSON path") {
  ReportContent content;
  nlohmann::json bad = predict_result();
  bad["results"][2].erase("speedup");
  CHECK_THROWS_WITH(add_result(bad, "p.json", content), "results[2].speedup: missing");
  bad = predict_result();
  bad["results"][1]["breakdown"]["forward_s"] = "fast";
  CHECK_THROWS_WITH(add_result(bad, "p.json", content),
                    Catch::Contains("results[1].breakdown.forward_s: expected a number"));
  CHECK_THROWS_WITH(add_result(nlohmann::json{{"x", 1}}, "x.json", content),
                    Catch::Contains("not a result of dtsim predict, compare, train or validate"));
  nlohmann::json runs = compare_result();
  runs[3]["ranks"] = -4;
  CHECK_THROWS_WITH(add_result(runs, "c.json", content), Catch::Contains("[3].ranks: expected a whole number"));
  // the same range whichever way a count is out of it (0 and -5 had been told different ones)
  for (const int accelerators : {0, -5}) {
    bad = predict_result();
    bad["results"][1]["accelerators"] = accelerators;
    CHECK_THROWS_WITH(
        add_result(bad, "p.json", content),
        "results[1].accelerators: expected a whole number in [1, 1073741824], got " + std::to_string(accelerators));
  }
  CHECK(content.sources.empty());
}

TEST_CASE("a training run that never reached its target (time_to_target_s -1, as train writes it) is drawn so") {
  nlohmann::json train{{"name", "slow"},
                       {"mode", "allreduce"},
                       {"workers", 4},
                       {"target_accuracy", 0.99},
                       {"time_to_target_s", -1.0},
                       {"points",
                        {{{"epoch", 0}, {"time_s", 0}, {"train_loss", 0}, {"test_accuracy", 0.1}},
                         {{"epoch", 1}, {"time_s", 2.0}, {"train_loss", 0.5}, {"test_accuracy", 0.82}}}}};
  ReportContent content;
  add_result(train, "train.json", content);
  CHECK_THAT(render_report_html(content), Catch::Contains("not reached"));
  train["time_to_target_s"] = -2.0;  // any other negative time is no time
  ReportContent refused;
  CHECK_THROWS_WITH(add_result(train, "train.json", refused),
                    "time_to_target_s: expected a number >= 0, or -1 for a target never reached, got -2.0");
}

namespace {

nlohmann::json published_case(const char* id, const char* device, double measured, double predicted) {
  const double error = (predicted - measured) / measured;
  return {{"id", id},
          {"device", device},
          {"model", "resnet50"},
          {"precision", "amp"},
          {"batch_per_device", 256},
          {"devices", 8},
          {"measured", measured},
          {"unit", "images/s total"},
          {"split", "test"},
          {"source", std::string("https://example.org/") + id},
          {"dtsim_device", device},
          {"dtsim_model", "resnet50"},
          {"predicted", predicted},
          {"error", error},
          {"fits", true}};
}

nlohmann::json published_result() {
  nlohmann::json cases = nlohmann::json::array();
  cases.push_back(published_case("a-small", "dev-a", 100, 150));
  cases.push_back(published_case("a-large", "dev-a", 10000, 9000));
  cases.push_back(published_case("b-worst", "dev-b", 500, 200));  // -60%: the worst
  cases.push_back(published_case("b-close", "dev-b", 2000, 2100));
  cases.push_back(published_case("c-only", "dev-c", 50000, 60000));
  auto not_modelled = [](const char* id, const char* why) {
    return nlohmann::json{{"id", id},
                          {"device", "x"},
                          {"model", "y"},
                          {"precision", "fp32"},
                          {"batch_per_device", 0},
                          {"devices", 1},
                          {"measured", 10.0},
                          {"unit", "tokens/s total"},
                          {"split", "test"},
                          {"source", "https://example.org/n"},
                          {"not_modelled", why}};
  };
  cases.push_back(not_modelled("n1", "no dtsim model of y"));
  cases.push_back(not_modelled("n2", "no dtsim model of y"));
  cases.push_back(not_modelled("n3", "no dtsim device for x"));
  auto stats = [](int rows, double median, double p90) {
    return nlohmann::json{{"rows", rows}, {"median_abs_error", median}, {"p90_abs_error", p90}};
  };
  return {
      {"split", "test"},
      {"overall", stats(5, 0.2, 0.5)},
      {"by_device", {{"dev-a", stats(2, 0.3, 0.45)}, {"dev-b", stats(2, 0.325, 0.6)}, {"dev-c", stats(1, 0.2, 0.2)}}},
      {"by_model", {{"resnet50", stats(5, 0.2, 0.5)}}},
      {"cases", cases}};
}

std::vector<std::pair<double, double>> svg_pairs(const std::string& text) {  // "x1,y1 x2,y2 ..."
  std::vector<std::pair<double, double>> out;
  std::istringstream in(text);
  std::string pair;
  while (in >> pair) {
    const std::size_t comma = pair.find(',');
    out.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return out;
}

// The text of attribute `name` of each element `tag` in the series group `series` of `svg`.
std::vector<std::string> series_attributes(const std::string& svg, const std::string& series, const std::string& tag,
                                           const std::string& name) {
  const std::size_t begin = svg.find("data-series=\"" + series + "\"");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = svg.find("</g>", begin);
  std::vector<std::string> out;
  for (std::size_t at = svg.find("<" + tag + " ", begin); at < end; at = svg.find("<" + tag + " ", at + 1)) {
    const std::size_t v = svg.find(name + "=\"", at) + name.size() + 2;
    out.push_back(svg.substr(v, svg.find('"', v) - v));
  }
  return out;
}

}  // namespace

TEST_CASE("published validation: one point per predicted row and y = x with its 20% band on y = x in data space") {
  ReportContent content;
  add_result(published_result(), "published.json", content);
  REQUIRE(content.published.size() == 1);
  CHECK(content.validations.empty());
  const std::string html = render_report_html(content);
  CHECK(well_formed_error(html).empty());
  CHECK(html.find("<h2>Published measurements: predicted against measured (split test)</h2>") != std::string::npos);
  CHECK(html.find("Published throughput: predicted against measured (split test)") != std::string::npos);
  const std::size_t svg_begin = html.find("<svg");
  const std::string svg = html.substr(svg_begin, html.find("</svg>") - svg_begin);
  CHECK(count_of(svg, "<circle") == 5);    // the not-modelled rows are not drawn
  CHECK(count_of(svg, "<polyline") == 3);  // a scatter: only the reference lines are lines
  for (const auto& [device, points] :
       std::vector<std::pair<std::string, std::size_t>>{{"dev-a", 2}, {"dev-b", 2}, {"dev-c", 1}}) {
    CHECK(series_attributes(svg, device, "circle", "cx").size() == points);
  }
  // three devices, three colours
  std::set<std::string> fills;
  for (const char* device : {"dev-a", "dev-b", "dev-c"})
    fills.insert(series_attributes(svg, device, "circle", "fill").front());
  CHECK(fills.size() == 3);
  // the pixel mapping of each axis from dev-a's two points (measured 100 and 10000, predicted 150 and 9000)
  const std::vector<std::string> cx = series_attributes(svg, "dev-a", "circle", "cx");
  const std::vector<std::string> cy = series_attributes(svg, "dev-a", "circle", "cy");
  const double x_per_decade = (std::stod(cx[1]) - std::stod(cx[0])) / (4 - 2);
  const double y_per_decade = (std::stod(cy[1]) - std::stod(cy[0])) / (std::log10(9000) - std::log10(150));
  auto data_x = [&](double px) { return std::pow(10.0, 2 + (px - std::stod(cx[0])) / x_per_decade); };
  auto data_y = [&](double py) { return std::pow(10.0, std::log10(150) + (py - std::stod(cy[0])) / y_per_decade); };
  const auto line = svg_pairs(series_attributes(svg, "prediction = measurement", "polyline", "points").front());
  REQUIRE(line.size() == 2);
  for (const auto& [px, py] : line)
    CHECK(std::fabs(std::log10(data_y(py) / data_x(px))) < 0.005);  // on y = x
  // from the least value drawn (100 measured) to the greatest (60000 predicted)
  CHECK(std::fabs(std::log10(data_x(line.front().first) / 100)) < 0.005);
  CHECK(std::fabs(std::log10(data_x(line.back().first) / 60000)) < 0.005);
  const auto high = svg_pairs(series_attributes(svg, "prediction 20% high", "polyline", "points").front());
  const auto low = svg_pairs(series_attributes(svg, "prediction 20% low", "polyline", "points").front());
  for (const auto& [px, py] : high)
    CHECK(data_y(py) / data_x(px) == Approx(1.2).epsilon(0.01));
  for (const auto& [px, py] : low)
    CHECK(data_y(py) / data_x(px) == Approx(0.8).epsilon(0.01));
  // the legend's longest name fits inside the chart
  CHECK(html.find(">prediction = measurement</text>") != std::string::npos);
}

TEST_CASE("published validation: error tables and the worst rows first with their sources and the rows not modelled") {
  ReportContent content;
  add_result(published_result(), "published.json", content);
  const std::string html = render_report_html(content);
  CHECK(html.find("<tr><td class=\"words\">device</td><td class=\"words\">dev-b</td><td>2</td><td>32.5%</td>"
                  "<td>60.0%</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><td class=\"words\">model</td><td class=\"words\">resnet50</td><td>5</td>") !=
        std::string::npos);
  CHECK(html.find("<td class=\"words\">overall</td><td class=\"words\">all rows predicted</td><td>5</td><td>20.0%"
                  "</td><td>50.0%</td>") != std::string::npos);
  const std::size_t worst = html.find("<table class=\"published-worst\">");
  REQUIRE(worst != std::string::npos);
  const std::size_t first_row = html.find("<tbody>", worst);
  CHECK(html.find("<tr><td class=\"words\">b-worst</td>", first_row) == first_row + 8);
  CHECK(html.find("-60.0%", first_row) < html.find("a-small", first_row));  // -60% before +50%
  CHECK(html.find("<a href=\"https://example.org/b-worst\" rel=\"noreferrer\">source</a>") != std::string::npos);
  CHECK(html.find("<tr><td>2</td><td class=\"words\">no dtsim model of y</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><td>1</td><td class=\"words\">no dtsim device for x</td></tr>") != std::string::npos);
  CHECK(html.find("Not modelled: 3 rows") != std::string::npos);
  const std::vector<const PublishedReportCase*> rows = worst_published_rows(content.published.front(), 2);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]->id == "b-worst");
  CHECK(rows[1]->id == "a-small");
  // a source that is not a web address is shown, never linked
  nlohmann::json doc = published_result();
  doc["cases"][0]["source"] = "javascript:alert(1)";
  ReportContent odd;
  add_result(doc, "odd.json", odd);
  CHECK(render_report_html(odd).find("href=\"javascript") == std::string::npos);
}

TEST_CASE("a malformed published validation is refused with the JSON path") {
  ReportContent content;
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases{
      {[](nlohmann::json& d) { d["cases"] = 3; }, "cases: expected a list, got number"},
      {[](nlohmann::json& d) { d["cases"][1].erase("measured"); }, "cases[1].measured: missing"},
      {[](nlohmann::json& d) { d["cases"][2]["measured"] = 0; }, "cases[2].measured: expected a number > 0"},
      {[](nlohmann::json& d) { d["cases"][0].erase("predicted"); }, "cases[0].predicted: missing"},
      {[](nlohmann::json& d) { d["cases"][6]["predicted"] = 3.0; },
       "cases[6]: expected either \"predicted\" or \"not_modelled\", got both"},
      {[](nlohmann::json& d) { d["cases"][3]["fits"] = "yes"; }, "cases[3].fits: expected true or false"},
      {[](nlohmann::json& d) { d["by_device"]["dev-b"].erase("rows"); }, "by_device[\"dev-b\"].rows: missing"},
      {[](nlohmann::json& d) { d["by_model"] = nlohmann::json::array(); }, "by_model: expected an object of names"},
      {[](nlohmann::json& d) { d.erase("overall"); }, "overall: missing"},
      {[](nlohmann::json& d) { d["split"] = "train"; }, "split: expected fit, test or all, got \"train\""},
  };
  for (const auto& [change, message] : cases) {
    nlohmann::json doc = published_result();
    change(doc);
    CAPTURE(message);
    CHECK_THROWS_WITH(add_result(doc, "p.json", content), Catch::StartsWith(message));
  }
  CHECK(content.sources.empty());
  // validate's validation.json ("cases" and "summary") is still the other kind
  nlohmann::json validation{{"summary", {{"median_abs_error", 0.02}, {"p90_abs_error", 0.06}}},
                            {"cases",
                             {{{"ranks", 4},
                               {"rate_bps", 1e9},
                               {"algorithm", "ring"},
                               {"bytes", 4194304},
                               {"measured_s", 0.0562},
                               {"predicted_s", 0.0569}}}}};
  add_result(validation, "validation.json", content);
  CHECK(content.validations.size() == 1);
  CHECK(content.published.empty());
}

TEST_CASE("line plots map log axes by decades and skip points a log axis cannot show") {
  LinePlot plot;
  plot.title = "t";
  plot.x.label = "x";
  plot.x.log = true;
  plot.y.label = "y";
  plot.series.push_back({"s", {{10, 1}, {1000, 2}, {0, 3}}, false, ""});  // x = 0 cannot be drawn on a log axis
  const std::string svg = render_line_plot(plot);
  CHECK(well_formed_error(svg).empty());
  CHECK(count_of(svg, "<circle") == 2);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
}

TEST_CASE("a recorded ring on a star: every link carries 2(P-1)/P of the buffer, busy while its messages move") {
  const int ranks = 4;
  const std::uint64_t bytes = 4000000;
  SimGridOptions sg;
  sg.cost.alpha_s = 1e-6;
  sg.record_trace = true;
  const ExecutionResult r = run_simgrid(ring_allreduce(ranks, bytes), sg);
  REQUIRE(r.trace.transfers.size() == static_cast<std::size_t>(ranks * 2 * (ranks - 1)));
  const std::vector<LinkUsage> links = star_link_usage(r.trace, ranks, sg.cost.bandwidth_Bps, r.time_s);
  REQUIRE(links.size() == 2 * ranks);
  for (const LinkUsage& l : links) {
    CAPTURE(l.name);
    CHECK(l.bytes == 2 * (ranks - 1) * bytes / ranks);
    // busy while each of its 2(P-1) messages is on the wire; idle while the reductions run
    const double message_s = sg.cost.alpha_s + static_cast<double>(bytes / ranks) / sg.cost.bandwidth_Bps;
    CHECK(l.busy_s == Approx(2 * (ranks - 1) * message_s).epsilon(1e-6));
    CHECK(l.busy_fraction == Approx(l.busy_s / r.time_s));
    CHECK(l.busy_fraction < 1.0);
    CHECK(l.utilisation == Approx(static_cast<double>(l.bytes) / (sg.cost.bandwidth_Bps * r.time_s)));
  }
  // the recorded steps: 2(P-1) per rank, in order, ending when the rank finished
  std::map<int, std::vector<const SpanRecord*>> steps;
  for (const SpanRecord& s : r.trace.spans) {
    if (s.kind == SpanKind::step) steps[s.rank].push_back(&s);
  }
  REQUIRE(steps.size() == static_cast<std::size_t>(ranks));
  for (const auto& [rank, list] : steps) {
    REQUIRE(list.size() == static_cast<std::size_t>(2 * (ranks - 1)));
    CHECK(list.back()->end_s == Approx(r.rank_finish_s[static_cast<std::size_t>(rank)]));
    for (std::size_t k = 1; k < list.size(); ++k)
      CHECK(list[k]->start_s >= list[k - 1]->end_s - 1e-12);
  }
}

TEST_CASE("a parameter server's links: the server's downlink is the busiest (incast)") {
  const int workers = 4;
  AlgorithmOptions options;
  options.set("servers", 1);
  const Schedule s = parameter_server_allreduce(workers, 4000000, options);
  SimGridOptions sg;
  sg.record_trace = true;
  const ExecutionResult r = run_simgrid(s, sg);
  const std::vector<LinkUsage> links = star_link_usage(r.trace, s.ranks, sg.cost.bandwidth_Bps, r.time_s);
  REQUIRE(!links.empty());
  const std::string server = "rank " + std::to_string(s.ranks - 1);
  CHECK((links[0].name == server + " down" || links[0].name == server + " up"));
  CHECK(links[0].bytes == workers * 4000000ULL);
}

TEST_CASE("links alike are grouped with a count, the most utilised group first") {
  auto link = [](const std::string& name, const char* kind, double capacity_Bps, std::uint64_t bytes, double busy) {
    LinkUsage l;
    l.name = name;
    l.kind = kind;
    l.capacity_Bps = capacity_Bps;
    l.bytes = bytes;
    l.busy_fraction = busy;
    l.utilisation = static_cast<double>(bytes) / capacity_Bps;  // over a run of one second
    return l;
  };
  std::vector<LinkUsage> links;
  for (int i = 0; i < 16; ++i)
    links.push_back(link("pcie " + std::to_string(i), "pcie", 25e9, 2500000000, 0.8));
  links.push_back(link("pcie idle", "pcie", 25e9, 1250000000, 0.8));
  for (int i = 0; i < 8; ++i)
    links.push_back(link("nic " + std::to_string(i), "nic", 3.125e9, 2500000000, 0.8));
  const std::vector<LinkGroup> groups = group_links(links);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].kind == "nic");
  CHECK(groups[0].count == 8);
  CHECK(groups[0].utilisation == Approx(0.8));
  CHECK(groups[0].first == "nic 0");
  CHECK(groups[1].kind == "pcie");
  CHECK(groups[1].count == 16);
  CHECK(groups[1].bytes == 2500000000);
  CHECK(groups[2].count == 1);
  CHECK(groups[2].first == "pcie idle");
  const std::string text = links_text(links, 5, 1.0);
  CHECK_THAT(text, Catch::Contains("busiest links (of 25 loaded, in 3 groups"));
  CHECK_THAT(text, Catch::Contains("util  80.0%  busy  80.0%  2.5 GB  8 x nic (25 Gbit/s), e.g. nic 0\n"));
  CHECK_THAT(text, Catch::Contains("16 x pcie (25 GB/s), e.g. pcie 0\n"));
  CHECK(text.find("8 x nic") < text.find("16 x pcie"));
  CHECK_THAT(text, Catch::Contains("  pcie idle\n"));
  const nlohmann::json json = link_groups_json(links, 2);
  REQUIRE(json.size() == 2);
  CHECK(json[0]["kind"] == "nic");
  CHECK(json[0]["count"] == 8);
}

namespace {

// pcie4-100g with a 25 GbE NIC: four A100s per node behind one PCIe switch, and `nodes` nodes.
ClusterSpec pcie_25gbe(int nodes) {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/pcie4-100g.json");
  spec.nodes = nodes;
  spec.node.nic.bandwidth_Bps = 25e9 / 8;
  return spec;
}

}  // namespace

TEST_CASE("a ring on 25 GbE nodes of 4 GPUs: the NIC links are the most utilised, measured and counted alike") {
  const Topology topology(pcie_25gbe(4));
  std::vector<int> accelerator_of(16);
  for (int p = 0; p < 16; ++p)
    accelerator_of[static_cast<std::size_t>(p)] = p;
  const Schedule ring = ring_allreduce(16, 64000000);
  SimGridOptions sg;
  sg.topology = &topology;
  sg.accelerator_of = accelerator_of;
  sg.record_trace = true;
  const ExecutionResult r = run_simgrid(ring, sg);
  const std::vector<LinkUsage> links = cluster_link_usage(r.trace, topology, accelerator_of, r.time_s);
  REQUIRE(links.size() > 8);
  for (std::size_t i = 1; i < links.size(); ++i)
    CHECK(links[i - 1].utilisation >= links[i].utilisation);
  CHECK(links.front().kind == "nic");
  const std::vector<LinkGroup> groups = group_links(links);
  REQUIRE(!groups.empty());
  CHECK(groups[0].kind == "nic");
  CHECK(groups[0].count == 8);  // each direction of the 4 nodes' NIC links
  std::size_t counted = 0;
  for (const LinkGroup& g : groups)
    counted += g.count;
  CHECK(counted == links.size());

  // the same bytes on every link from the schedule and the routes alone, and the same class most utilised
  const std::vector<double> bytes = step_link_bytes({ring}, topology, accelerator_of);
  REQUIRE(bytes.size() == 2 * topology.links().size());
  std::map<std::string, double> measured;
  for (const LinkUsage& l : links)
    measured[l.name] = static_cast<double>(l.bytes);
  std::size_t loaded = 0;
  for (double b : bytes)
    loaded += b > 0 ? 1 : 0;
  CHECK(loaded == links.size());
  double nic_bytes = 0;
  for (const LinkUsage& l : links)
    nic_bytes = l.kind == "nic" ? static_cast<double>(l.bytes) : nic_bytes;
  CHECK(nic_bytes == Approx(2.0 * 15 / 16 * 64000000));  // 2(P-1)/P of the buffer, as every ring link
  const LinkClassLoad most = most_utilised_link_class(bytes, topology, r.time_s);
  CHECK(most.link_class == "nic");
  CHECK(most.links == 8);
  CHECK(most.utilisation == Approx(links.front().utilisation).epsilon(1e-9));
}

TEST_CASE("link bytes from a compact schedule count every repetition, as its full form does") {
  const Topology topology(pcie_25gbe(4));
  std::vector<int> accelerator_of(16);
  for (int p = 0; p < 16; ++p)
    accelerator_of[static_cast<std::size_t>(p)] = (p * 5) % 16;  // spread over the nodes
  for (const char* algorithm : {"ring", "hierarchical", "rabenseifner", "direct", "ps"}) {
    CAPTURE(algorithm);
    AlgorithmOptions options;
    options.set("ranks-per-node", 4);
    options.set("servers", 4);
    options.set("ps-placement", "colocated");
    options.set("server-stride", 4);
    const Schedule compact = find_algorithm(algorithm).build(16, 10000000, options);
    const std::vector<double> a = step_link_bytes({compact}, topology, accelerator_of);
    const std::vector<double> b = step_link_bytes({expand(compact)}, topology, accelerator_of);
    REQUIRE(a.size() == b.size());
    double total = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i] == b[i]);
      total += a[i];
    }
    CHECK(total > 0);
  }
  // a step repeated with a stride that visits half the chunks before it cycles (gcd(2, 8) = 2), more than twice over
  std::vector<Chunk> chunks;
  std::uint64_t offset = 0;
  for (std::uint64_t size = 1; size <= 128; size *= 2) {
    chunks.push_back({offset, size});
    offset += size;
  }
  ScheduleBuilder builder(Collective::allgather, "strided", 2, offset, chunks);
  builder.begin_rank(0);
  builder.begin_step();
  builder.add(Op::send(1, 3));
  builder.repeat_step(9, 2, 0, 8);  // chunks 3, 5, 7, 1, 3, ... 10 times: 2 x (8 + 32 + 128 + 2) + 8 + 32
  builder.begin_rank(1);
  builder.begin_step();
  builder.add(Op::recv_copy(0, 3));
  builder.repeat_step(9, 2, 0, 8);
  const Schedule strided = builder.finish();
  const std::vector<double> compact_bytes = step_link_bytes({strided}, topology, {0, 5});
  const std::vector<double> full_bytes = step_link_bytes({expand(strided)}, topology, {0, 5});
  CHECK(compact_bytes == full_bytes);
  CHECK(*std::max_element(compact_bytes.begin(), compact_bytes.end()) == 2 * (8 + 32 + 128 + 2) + 8 + 32);
  // past the limit on transfers (as stored: the full ring's 480 sends, where its compact form stores 32): nothing
  // rather than a partial count
  CHECK(step_link_bytes({expand(ring_allreduce(16, 1000000))}, topology, accelerator_of, 100).empty());
  CHECK_FALSE(step_link_bytes({ring_allreduce(16, 1000000)}, topology, accelerator_of, 100).empty());
}

TEST_CASE("the trace is valid trace-event JSON: named tracks, complete events, nested per track") {
  const int ranks = 4;
  SimGridOptions sg;
  sg.record_trace = true;
  const ExecutionResult r = run_simgrid(ring_allreduce(ranks, 4000000), sg);
  const std::vector<LinkUsage> links = star_link_usage(r.trace, ranks, sg.cost.bandwidth_Bps, r.time_s);
  const nlohmann::json doc = trace_events(r.trace, ranks, links, "ring");
  // round trip through text, as a viewer reads it
  const nlohmann::json read = nlohmann::json::parse(doc.dump());
  REQUIRE(read.contains("traceEvents"));
  REQUIRE(read["traceEvents"].is_array());
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  std::map<std::pair<int, int>, std::string> names;
  std::size_t steps = 0;
  for (const nlohmann::json& e : read["traceEvents"]) {
    REQUIRE(e["name"].is_string());
    REQUIRE(e["ph"].is_string());
    REQUIRE(e["pid"].is_number_integer());
    const std::string ph = e["ph"];
    if (ph == "M") {
      REQUIRE(e["args"]["name"].is_string());
      if (e["name"] == "thread_name") names[{e["pid"], e["tid"]}] = e["args"]["name"];
      continue;
    }
    REQUIRE(ph == "X");
    REQUIRE(e["tid"].is_number_integer());
    REQUIRE(e["ts"].is_number());
    REQUIRE(e["dur"].is_number());
    CHECK(e["ts"].get<double>() >= 0);
    CHECK(e["dur"].get<double>() >= 0);
    tracks[{e["pid"], e["tid"]}].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    if (e["name"].get<std::string>().rfind("step ", 0) == 0) ++steps;
  }
  CHECK(steps == static_cast<std::size_t>(ranks * 2 * (ranks - 1)));
  for (auto& [track, spans] : tracks) {
    CAPTURE(track.first, track.second);
    CHECK(names.count(track) == 1);  // every track with events is named
    // complete events on one track must nest or follow each other
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> ends;
    for (const auto& [start, end] : spans) {
      while (!ends.empty() && ends.back() <= start + 1e-6)
        ends.pop_back();
      if (!ends.empty()) CHECK(end <= ends.back() + 1e-6);
      ends.push_back(end);
    }
  }
  CHECK(names.at({2, 0}) == links.front().name);
  std::size_t link_tracks = 0;
  for (const auto& [track, name] : names)
    link_tracks += track.first == 2 ? 1 : 0;
  CHECK(link_tracks == 2 * ranks);
}

TEST_CASE("trace files: classes of ranks, the streamed file is the trace_events document, its size counted exactly") {
  AlgorithmOptions options;
  options.set("servers", 2);  // on hosts of their own: ranks 6 and 7
  const Schedule s = parameter_server_allreduce(6, 4000000, options);
  REQUIRE(s.ranks == 8);
  SimGridOptions sg;
  sg.record_trace = true;
  const ExecutionResult r = run_simgrid(s, sg);
  const std::vector<LinkUsage> links = star_link_usage(r.trace, s.ranks, sg.cost.bandwidth_Bps, r.time_s);
  // workers do one work, servers another
  const std::vector<int> classes = rank_classes(r.trace, s.ranks);
  CHECK(classes == std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1});
  const int slowest = slowest_rank(r.trace, s.ranks);
  double latest = 0;
  for (const SpanRecord& span : r.trace.spans)
    latest = std::max(latest, span.end_s);
  bool slowest_ends_last = false;
  for (const SpanRecord& span : r.trace.spans)
    slowest_ends_last = slowest_ends_last || (span.rank == slowest && span.end_s == latest);
  CHECK(slowest_ends_last);
  std::vector<int> expected{0, 6, slowest};
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  CHECK(representative_ranks(r.trace, s.ranks) == expected);

  // every rank shown: the same events as trace_events, and trace_bytes is what is written
  TraceContent all{&r.trace, s.ranks, {0, 1, 2, 3, 4, 5, 6, 7}, links, "ps"};
  std::ostringstream text;
  write_trace(text, all);
  CHECK(trace_bytes(all) == text.str().size());
  const nlohmann::json doc = nlohmann::json::parse(text.str());
  CHECK(doc["traceEvents"] == trace_events(r.trace, s.ranks, links, "ps")["traceEvents"]);
  CHECK(doc["otherData"]["ranks"] == 8);
  // two ranks shown: only their tracks, and a smaller file
  TraceContent two = all;
  two.shown = {1, 6};
  std::ostringstream two_text;
  write_trace(two_text, two);
  CHECK(trace_bytes(two) == two_text.str().size());
  CHECK(trace_bytes(two) < trace_bytes(all));
  std::set<int> ranks_seen;
  const nlohmann::json two_doc = nlohmann::json::parse(two_text.str());
  for (const nlohmann::json& e : two_doc["traceEvents"]) {
    if (e["pid"] == 1 && e.contains("tid")) ranks_seen.insert(e["tid"].get<int>() / 2);
  }
  CHECK(ranks_seen == std::set<int>{1, 6});
}

TEST_CASE("the progress line counts items and estimates the rest, and is silent where not shown") {
  std::ostringstream out;
  {
    ProgressLine progress("sweep", 3, &out);
    CHECK(progress.shown());
    progress.next("first");
    progress.next("second");
    CHECK(out.str().find("sweep 1/3 first") != std::string::npos);
    CHECK(out.str().find("sweep 2/3 second") != std::string::npos);
    CHECK(out.str().find("left") != std::string::npos);
  }
  CHECK(out.str().back() == '\r');  // erased at the end
  ProgressLine hidden("sweep", 3, nullptr);
  hidden.next("x");
  CHECK_FALSE(hidden.shown());
}

TEST_CASE("CSV cells: quoted only when they must be, numbers in full, rows checked against the header") {
  CHECK(csv_text("ring") == "ring");
  CHECK(csv_text("compute: 97%, of the step") == "\"compute: 97%, of the step\"");
  CHECK(csv_text("a \"b\"") == "\"a \"\"b\"\"\"");
  CHECK(csv_text("two\nlines") == "\"two\nlines\"");
  CHECK(std::stod(csv_number(0.1 + 0.2)) == 0.1 + 0.2);
  CHECK(csv_number(1e-5) == "1e-05");
  CHECK(csv_number(2.5) == "2.5");
  CHECK(csv_integer(-3) == "-3");
  CsvTable table({"name", "time_s"});
  table.add_row({csv_text("x,y"), csv_number(0.25)});
  CHECK(table.str() == "name,time_s\n\"x,y\",0.25\n");
  CHECK_THROWS_AS(table.add_row({"only one"}), std::logic_error);
}

TEST_CASE("writing a file removes the temporaries killed processes left beside it, and no other") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "dtsim-output-file-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string target = (dir / "out.json").string();
  pid_t dead = ::fork();  // a PID that no longer runs
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  for (const std::string& name : {"out.json.tmp" + std::to_string(dead), std::string("out.json.tmp1"),
                                  std::string("other.json.tmp") + std::to_string(dead)}) {
    std::ofstream(dir / name) << "left over";
  }
  write_file_atomically(target, [](std::ostream& out) { out << "{}"; });
  CHECK(!std::filesystem::exists(dir / ("out.json.tmp" + std::to_string(dead))));   // its process is gone
  CHECK(std::filesystem::exists(dir / "out.json.tmp1"));                            // PID 1 runs
  CHECK(std::filesystem::exists(dir / ("other.json.tmp" + std::to_string(dead))));  // another file's
  CHECK(std::filesystem::exists(target));
  std::filesystem::remove_all(dir);
}

TEST_CASE("grounding says whether a device was fitted to its own measurements, pooled, or datasheet only") {
  const Device a100 = load_named_device("a100", ".", DTSIM_SOURCE_DIR);
  REQUIRE(a100.fit);
  CHECK(std::string(device_figures(a100)) == "fitted");
  CHECK_THAT(grounding_text(a100),
             Catch::Contains("fitted to " + std::to_string(a100.fit->rows) + " published measurements of this part"));
  const Device t4 = load_named_device("t4", ".", DTSIM_SOURCE_DIR);  // no T4 row in the published table's fit split
  CHECK(std::string(device_figures(t4)) == "pooled");
  CHECK_THAT(grounding_text(t4), Catch::Contains("pooled from"));
  Device own = a100;
  own.fit.reset();
  CHECK(std::string(device_figures(own)) == "datasheet");
  CHECK_THAT(grounding_text(own), Catch::Contains("fitted to no measurement"));
  CHECK(grounding_json(own).size() == 1);
  CHECK(grounding_json(a100)["fit_rows"] == a100.fit->rows);
}
