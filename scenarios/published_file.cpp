#include "scenarios/published_file.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <set>

#include "scenarios/input_file.hpp"
#include "scenarios/json_reader.hpp"

namespace dtsim {
namespace {

int whole(const std::string& text, const std::string& where, int low, int high, bool may_be_empty) {
  if (text.empty() && may_be_empty) return 0;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    throw ScenarioError(where + ": expected a whole number in [" + std::to_string(low) + ", " + std::to_string(high) +
                        "]" + (may_be_empty ? " or nothing" : "") + ", got '" + text + "'");
  }
  return value;
}

double positive(const std::string& text, const std::string& where) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
    throw ScenarioError(where + ": expected a positive number, got '" + text + "'");
  }
  return value;
}

}  // namespace

const std::vector<std::string>& published_columns() {
  static const std::vector<std::string> columns{"id",
                                                "device",
                                                "device_count",
                                                "nodes",
                                                "interconnect",
                                                "framework",
                                                "software_version",
                                                "model",
                                                "precision",
                                                "batch_per_device",
                                                "sequence_length",
                                                "throughput",
                                                "throughput_unit",
                                                "source_url",
                                                "source_locator",
                                                "notes",
                                                "split"};
  return columns;
}

std::vector<std::string> split_csv_record(const std::string& line, const std::string& where) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw ScenarioError(where + ": a quoted field is not closed on its line");
  return fields;
}

std::vector<PublishedRow> load_published_table(const std::string& path) {
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw ScenarioError(problem);
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) throw ScenarioError(path + ": empty (expected a header line)");
  const std::vector<std::string>& columns = published_columns();
  const std::vector<std::string> header = split_csv_record(line, path + ":1");
  if (header != columns) {
    std::string expected;
    for (const std::string& c : columns)
      expected += (expected.empty() ? "" : ",") + c;
    throw ScenarioError(path + ":1: the header must be " + expected);
  }
  std::vector<PublishedRow> rows;
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
    PublishedRow r;
    r.line = number;
    r.id = f[0];
    if (r.id.empty()) throw ScenarioError(field(0) + ": empty");
    if (!ids.insert(r.id).second) throw ScenarioError(field(0) + ": '" + r.id + "' is already a row's id");
    r.device = f[1];
    r.device_count = whole(f[2], field(2), 1, 1 << 20, false);
    r.nodes = whole(f[3], field(3), 1, 1 << 20, false);
    r.interconnect = f[4];
    r.framework = f[5];
    r.software_version = f[6];
    r.model = f[7];
    r.precision = f[8];
    static const std::set<std::string> precisions{"fp32", "tf32", "amp", "bf16", "fp8"};
    if (precisions.count(r.precision) == 0) {
      throw ScenarioError(field(8) + ": expected fp32, tf32, amp, bf16 or fp8, got '" + r.precision + "'");
    }
    r.batch_per_device = whole(f[9], field(9), 1, 1 << 24, true);
    r.sequence_length = whole(f[10], field(10), 1, 1 << 24, true);
    r.throughput = positive(f[11], field(11));
    r.throughput_unit = f[12];
    r.source_url = f[13];
    r.source_locator = f[14];
    if (!r.source_url.starts_with("https://") && !r.source_url.starts_with("http://")) {
      throw ScenarioError(field(13) + ": every row needs its source's URL, got '" + r.source_url + "'");
    }
    if (r.source_locator.empty()) throw ScenarioError(field(14) + ": every row needs where in the source it is");
    r.notes = f[15];
    r.split = f[16];
    if (r.split != "fit" && r.split != "test") {
      throw ScenarioError(field(16) + ": expected fit or test, got '" + r.split + "'");
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw ScenarioError(path + ": no rows");
  return rows;
}

}  // namespace dtsim
