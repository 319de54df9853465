// Strict CSV tables of published measurements (validation/published/*.csv): the header must name the expected
// columns in order, the first column is each row's id (non-empty, unique), every record has every field, and each
// problem is a ScenarioError naming the file, the line and the column. The loaders of each table
// (scenarios/published_file.hpp, scenarios/collective_table.hpp) check their own fields with the helpers here.
#pragma once

#include <charconv>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/json_reader.hpp"

namespace dtsim {

// RFC 4180 fields of one CSV record (quotes, doubled quotes, commas inside quotes); throws ScenarioError naming
// `where` on an unterminated quote.
std::vector<std::string> split_csv_record(const std::string& line, const std::string& where);

// One record of a table.
struct CsvRecord {
  const std::vector<std::string>& fields;
  const std::vector<std::string>& columns;
  int line = 0;
  std::string at;  // "path:line"
  // "path:line (column)", for messages about field i
  std::string where(std::size_t i) const { return at + " (" + columns[i] + ")"; }
};

// Reads the table at `path` (its header `columns`), calling row(record) for each non-blank record in order; refuses a
// table without rows.
void read_csv_table(const std::string& path, const std::vector<std::string>& columns,
                    const std::function<void(const CsvRecord&)>& row);

// Field i as a whole number in [low, high] (nothing: 0, where `may_be_empty`).
template <typename Number>
Number csv_whole(const CsvRecord& r, std::size_t i, Number low, Number high, bool may_be_empty = false) {
  const std::string& text = r.fields[i];
  if (text.empty() && may_be_empty) return 0;
  Number value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    throw ScenarioError(r.where(i) + ": expected a whole number in [" + std::to_string(low) + ", " +
                        std::to_string(high) + "]" + (may_be_empty ? " or nothing" : "") + ", got '" + text + "'");
  }
  return value;
}
// Field i as a positive finite number (nothing: 0, where `may_be_empty`).
double csv_positive(const CsvRecord& r, std::size_t i, bool may_be_empty = false);
// Field i as a source's URL (http or https), required.
std::string csv_source_url(const CsvRecord& r, std::size_t i);
// Field i as where in the source the number is, required.
std::string csv_source_locator(const CsvRecord& r, std::size_t i);
// Field i as the row's split: "fit" or "test".
std::string csv_split(const CsvRecord& r, std::size_t i);

}  // namespace dtsim
