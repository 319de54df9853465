#include "scenarios/collective_table.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <set>

#include "scenarios/input_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/published_file.hpp"

namespace dtsim {
namespace {

template <typename Number>
Number whole(const std::string& text, const std::string& where, Number low, Number high) {
  Number value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    throw ScenarioError(where + ": expected a whole number in [" + std::to_string(low) + ", " + std::to_string(high) +
                        "], got '" + text + "'");
  }
  return value;
}

double positive_or_nothing(const std::string& text, const std::string& where) {
  if (text.empty()) return 0;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
    throw ScenarioError(where + ": expected a positive number or nothing, got '" + text + "'");
  }
  return value;
}

}  // namespace

const std::vector<std::string>& collective_table_columns() {
  static const std::vector<std::string> columns{
      "id",         "system",     "gpus",    "nodes",   "gpus_per_node",   "interconnect", "collective", "size_bytes",
      "algbw_GBps", "busbw_GBps", "time_us", "library", "library_version", "source_url",   "note",       "split"};
  return columns;
}

double bus_factor(const std::string& collective, int ranks) {
  const double n = ranks;
  if (collective == "allreduce") return 2 * (n - 1) / n;
  if (collective == "allgather" || collective == "reduce_scatter" || collective == "alltoall") return (n - 1) / n;
  return 1;
}

std::vector<CollectiveMeasurement> load_collective_table(const std::string& path) {
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw ScenarioError(problem);
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) throw ScenarioError(path + ": empty (expected a header line)");
  const std::vector<std::string>& columns = collective_table_columns();
  if (split_csv_record(line, path + ":1") != columns) {
    std::string expected;
    for (const std::string& c : columns)
      expected += (expected.empty() ? "" : ",") + c;
    throw ScenarioError(path + ":1: the header must be " + expected);
  }
  static const std::set<std::string> collectives{"allreduce", "allgather", "reduce_scatter",
                                                 "alltoall",  "broadcast", "reduce"};
  std::vector<CollectiveMeasurement> rows;
  std::set<std::string> ids;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string at = path + ":" + std::to_string(number);
    const std::vector<std::string> f = split_csv_record(line, at);
    if (f.size() != columns.size()) {
      throw ScenarioError(at + ": " + std::to_string(f.size()) + " fields, expected " + std::to_string(columns.size()));
    }
    auto field = [&](std::size_t i) { return at + " (" + columns[i] + ")"; };
    CollectiveMeasurement r;
    r.line = number;
    r.id = f[0];
    if (r.id.empty()) throw ScenarioError(field(0) + ": empty");
    if (!ids.insert(r.id).second) throw ScenarioError(field(0) + ": '" + r.id + "' is already a row's id");
    r.system = f[1];
    if (r.system.empty()) throw ScenarioError(field(1) + ": empty");
    r.gpus = whole(f[2], field(2), 1, 1 << 20);
    r.nodes = whole(f[3], field(3), 1, 1 << 20);
    r.gpus_per_node = whole(f[4], field(4), 1, 1024);
    if (r.gpus != r.nodes * r.gpus_per_node) {
      throw ScenarioError(field(2) + ": " + std::to_string(r.gpus) + " is not nodes x gpus_per_node (" +
                          std::to_string(r.nodes * r.gpus_per_node) + ")");
    }
    r.interconnect = f[5];
    r.collective = f[6];
    if (collectives.count(r.collective) == 0) {
      throw ScenarioError(field(6) +
                          ": expected allreduce, allgather, reduce_scatter, alltoall, broadcast or reduce, "
                          "got '" +
                          r.collective + "'");
    }
    r.size_bytes = whole<std::uint64_t>(f[7], field(7), 1, std::uint64_t{1} << 50);
    r.algbw_GBps = positive_or_nothing(f[8], field(8));
    r.busbw_GBps = positive_or_nothing(f[9], field(9));
    r.time_us = positive_or_nothing(f[10], field(10));
    if (r.algbw_GBps == 0 && r.busbw_GBps == 0 && r.time_us == 0) {
      throw ScenarioError(field(8) + ": a row needs a measured algbw_GBps, busbw_GBps or time_us");
    }
    r.library = f[11];
    if (r.library.empty()) throw ScenarioError(field(11) + ": every row names its library (NCCL, RCCL, ...)");
    r.library_version = f[12];
    r.source_url = f[13];
    if (!r.source_url.starts_with("https://") && !r.source_url.starts_with("http://")) {
      throw ScenarioError(field(13) + ": every row needs its source's URL, got '" + r.source_url + "'");
    }
    r.note = f[14];
    if (r.note.empty()) throw ScenarioError(field(14) + ": every row needs where in the source it is");
    r.split = f[15];
    if (r.split != "fit" && r.split != "test") {
      throw ScenarioError(field(15) + ": expected fit or test, got '" + r.split + "'");
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw ScenarioError(path + ": no rows");
  return rows;
}

}  // namespace dtsim
