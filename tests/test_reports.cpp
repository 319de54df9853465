// Reports people look at: the HTML report, trace-event files, link utilisation and the progress line.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/parameter_server.hpp"
#include "algorithms/ring.hpp"
#include "reports/csv_table.hpp"
#include "reports/html_report.hpp"
#include "reports/progress.hpp"
#include "reports/svg_plot.hpp"
#include "reports/trace_file.hpp"
#include "sim/link_usage.hpp"
#include "sim/simgrid_executor.hpp"

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
  CHECK(content.sources.empty());
}

TEST_CASE("line plots map log axes by decades and skip points a log axis cannot show") {
  LinePlot plot;
  plot.title = "t";
  plot.x.label = "x";
  plot.x.log = true;
  plot.y.label = "y";
  plot.series.push_back({"s", {{10, 1}, {1000, 2}, {0, 3}}, false});  // x = 0 cannot be drawn on a log axis
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
  options.servers = 1;
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
  options.servers = 2;  // on hosts of their own: ranks 6 and 7
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
