#include "reports/csv_table.hpp"

#include <array>
#include <charconv>
#include <stdexcept>

namespace dtsim {
namespace {

void append_line(std::string& out, const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += cells[i];
  }
  out += '\n';
}

}  // namespace

std::string csv_text(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::string csv_number(double value) {
  std::array<char, 32> text{};
  const auto [end, error] = std::to_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc()) throw std::logic_error("csv_number: no room for a double");
  return std::string(text.data(), end);
}

std::string csv_integer(long long value) { return std::to_string(value); }

std::string csv_bool(bool value) { return value ? "true" : "false"; }

CsvTable::CsvTable(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void CsvTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::logic_error("CSV row of " + std::to_string(cells.size()) + " cells for " +
                           std::to_string(columns_.size()) + " columns");
  }
  rows_.push_back(std::move(cells));
}

std::string CsvTable::str() const {
  std::string out;
  std::vector<std::string> header;
  for (const std::string& c : columns_)
    header.push_back(csv_text(c));
  append_line(out, header);
  for (const auto& row : rows_)
    append_line(out, row);
  return out;
}

}  // namespace dtsim
