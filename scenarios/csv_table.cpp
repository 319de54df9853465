#include "scenarios/csv_table.hpp"

#include <cmath>
#include <fstream>
#include <set>

#include "scenarios/input_file.hpp"

namespace dtsim {

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

void read_csv_table(const std::string& path, const std::vector<std::string>& columns,
                    const std::function<void(const CsvRecord&)>& row) {
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw ScenarioError(problem);
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) throw ScenarioError(path + ": empty (expected a header line)");
  if (split_csv_record(line, path + ":1") != columns) {
    std::string expected;
    for (const std::string& c : columns)
      expected += (expected.empty() ? "" : ",") + c;
    throw ScenarioError(path + ":1: the header must be " + expected);
  }
  std::set<std::string> ids;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string at = path + ":" + std::to_string(number);
    const std::vector<std::string> fields = split_csv_record(line, at);
    if (fields.size() != columns.size()) {
      throw ScenarioError(at + ": " + std::to_string(fields.size()) + " fields, expected " +
                          std::to_string(columns.size()));
    }
    const CsvRecord record{fields, columns, number, at};
    if (fields[0].empty()) throw ScenarioError(record.where(0) + ": empty");
    if (!ids.insert(fields[0]).second) {
      throw ScenarioError(record.where(0) + ": '" + fields[0] + "' is already a row's id");
    }
    row(record);
  }
  if (ids.empty()) throw ScenarioError(path + ": no rows");
}

double csv_positive(const CsvRecord& r, std::size_t i, bool may_be_empty) {
  const std::string& text = r.fields[i];
  if (text.empty() && may_be_empty) return 0;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
    throw ScenarioError(r.where(i) + ": expected a positive number" + (may_be_empty ? " or nothing" : "") + ", got '" +
                        text + "'");
  }
  return value;
}

std::string csv_source_url(const CsvRecord& r, std::size_t i) {
  const std::string& url = r.fields[i];
  if (!url.starts_with("https://") && !url.starts_with("http://")) {
    throw ScenarioError(r.where(i) + ": every row needs its source's URL, got '" + url + "'");
  }
  return url;
}

std::string csv_source_locator(const CsvRecord& r, std::size_t i) {
  if (r.fields[i].empty()) throw ScenarioError(r.where(i) + ": every row needs where in the source it is");
  return r.fields[i];
}

std::string csv_split(const CsvRecord& r, std::size_t i) {
  const std::string& split = r.fields[i];
  if (split != "fit" && split != "test")
    throw ScenarioError(r.where(i) + ": expected fit or test, got '" + split + "'");
  return split;
}

}  // namespace dtsim
