// `dtsim report`: result files of predict, compare, train and validate (their --json output, or validate's
// validation.json) read into typed tables at the edge, and rendered as one self-contained HTML page: inline SVG
// charts, no scripts from elsewhere, no network access.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/framework_report.hpp"
#include "reports/published_chart.hpp"

namespace dtsim {

struct LinkRow {
  std::string name;
  std::uint64_t bytes = 0;
  double busy_fraction = 0;
  double utilisation = 0;
};

// Links alike, as predict --json lists them in links.groups.
struct LinkGroupRow {
  std::string kind;
  std::uint64_t count = 0;
  double capacity_Bps = 0;
  std::uint64_t bytes = 0;  // per link
  double busy_fraction = 0;
  double utilisation = 0;
  std::string first;
};

struct PredictRow {
  int accelerators = 0;
  std::string algorithm;
  bool fits = true;
  double step_s = 0;
  double samples_per_s = 0;
  double speedup = 0;
  double efficiency = 0;
  double forward_s = 0;
  double backward_s = 0;
  double exposed_comm_s = 0;
  double input_stall_s = 0;
  double optimizer_s = 0;
  std::string bottleneck;
  // what 80% of the held-out published runs would have measured (predict's trust; absent in older results): low, high
  std::optional<std::pair<double, double>> samples_per_s_range;
  std::optional<std::pair<double, double>> speedup_range;
  // predict --samples: the sampled step (samples 0: not sampled)
  int samples = 0;
  double mean_s = 0;
  double p99_s = 0;
  std::vector<std::pair<double, int>> histogram;  // (bin centre in seconds, samples in it)
};

struct PredictTable {
  std::string scenario;
  std::string model;
  std::string device;
  std::string cluster;
  std::string scaling;
  // predict's trust object in words ("" when the result has none): which held-out runs, and their band
  std::string trust;
  std::vector<PredictRow> rows;
  int links_accelerators = 0;  // > 0: the most utilised links of that configuration
  std::string links_algorithm;
  std::vector<LinkRow> links;             // links.busiest
  std::vector<LinkGroupRow> link_groups;  // links.groups (results of dtsim before it grouped links have none)
};

struct CompareRow {
  std::string algorithm;
  int ranks = 0;
  std::uint64_t bytes = 0;
  double time_s = 0;
  double busbw_Bps = 0;
};

struct CompareTable {
  std::string collective = "allreduce";  // every row's (results from before compare --collective have none)
  std::vector<CompareRow> rows;
};

struct TrainPoint {
  double epoch = 0;
  double time_s = 0;
  double train_loss = 0;
  double test_accuracy = 0;
};

struct TrainCurve {
  std::string name;
  std::string mode;
  int workers = 0;
  double target_accuracy = 0;
  double time_to_target_s = -1;
  std::vector<TrainPoint> points;
};

struct ValidationRow {
  int ranks = 0;
  double rate_bps = 0;
  std::string algorithm;
  std::uint64_t bytes = 0;
  double measured_s = 0;
  double predicted_s = 0;
  double error = 0;
};

struct ValidationTable {
  std::string command;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  std::vector<ValidationRow> rows;
};

struct ReportContent {
  std::vector<std::string> sources;  // the files read, in order
  std::vector<PredictTable> predicts;
  std::vector<CompareTable> compares;
  std::vector<TrainCurve> trains;
  std::vector<ValidationTable> validations;
  std::vector<PublishedReport> published;   // validate --published --json
  std::vector<FrameworkReport> frameworks;  // validate --framework pytorch (pytorch-validation.json)
};

// Recognises the kind of result by its shape (compare: a list of runs; predict: "results"; train: "points";
// validate --published: "cases" with "split", "overall", "by_device" or "by_model"; validate's validation.json:
// "cases") and adds it to `content`. Throws ResultFileError.
void add_result(const nlohmann::json& document, const std::string& source, ReportContent& content);

std::string render_report_html(const ReportContent& content);

// Sizes at which the fastest algorithm changes, per rank count: (ranks, bytes where the new winner first wins,
// the winner before, the winner after).
struct Crossover {
  int ranks = 0;
  std::uint64_t bytes = 0;
  std::string before;
  std::string after;
};
std::vector<Crossover> crossovers(const CompareTable& table);

}  // namespace dtsim
