// CSV for other tools (RFC 4180): one header row, then one row per result; cells holding a comma, a quote or a line
// break are quoted, with quotes doubled. Numbers are written in full (the shortest text that reads back the same
// double), so a spreadsheet or pandas gets what the JSON output holds; units are in the column names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim {

std::string csv_text(std::string_view text);  // quoted when it must be
std::string csv_number(double value);         // shortest round trip, e.g. 0.0123, 1e-05
std::string csv_integer(long long value);
std::string csv_bool(bool value);  // true or false

class CsvTable {
public:
  explicit CsvTable(std::vector<std::string> columns);
  // Appends a row of cells already formatted (csv_text, csv_number, ...); throws std::logic_error when the row does
  // not have one cell per column.
  void add_row(std::vector<std::string> cells);
  std::string str() const;  // the header row and every row, each ending in '\n'

private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace dtsim
