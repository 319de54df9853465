#include "scenarios/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace dtsim {
namespace {

struct Unit {
  std::string_view name;
  double scale;
};

// The length of the plain decimal number (digits, an optional fraction, an optional exponent) that `text` starts
// with, or 0 when it starts with none.
std::size_t number_length(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      ++i;
    return i > start;
  };
  const bool int_part = digits();
  bool frac_part = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    frac_part = digits();
  }
  if (!int_part && !frac_part) return 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const std::size_t exp_start = j;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9')
      ++j;
    if (j > exp_start) i = j;
  }
  return i;
}

// Reads the number text[0, length) as a finite double; false when it is out of the double range.
bool read_double(std::string_view text, std::size_t length, double& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + length, value);
  return ec == std::errc() && end == text.data() + length && std::isfinite(value);
}

// Splits "12.5MB" into 12.5 and "MB"; the number must be a plain decimal (optionally with an exponent) within the
// range of a double.
bool split_number(std::string_view text, double& value, std::string_view& unit) {
  const std::size_t length = number_length(text);
  if (length == 0 || !read_double(text, length, value)) return false;
  unit = text.substr(length);
  return true;
}

template <std::size_t N>
const Unit* find_unit(std::string_view name, const std::array<Unit, N>& units) {
  for (const Unit& u : units) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

constexpr std::array<Unit, 9> size_units{{{"B", 1},
                                          {"KB", 1e3},
                                          {"MB", 1e6},
                                          {"GB", 1e9},
                                          {"TB", 1e12},
                                          {"KiB", 1024.0},
                                          {"MiB", 1048576.0},
                                          {"GiB", 1073741824.0},
                                          {"TiB", 1099511627776.0}}};
constexpr std::array<Unit, 10> bandwidth_units{{{"bps", 1.0 / 8},
                                                {"Kbps", 1e3 / 8},
                                                {"Mbps", 1e6 / 8},
                                                {"Gbps", 1e9 / 8},
                                                {"Tbps", 1e12 / 8},
                                                {"Bps", 1},
                                                {"KBps", 1e3},
                                                {"MBps", 1e6},
                                                {"GBps", 1e9},
                                                {"TBps", 1e12}}};
constexpr std::array<Unit, 4> time_units{{{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}}};

constexpr const char* size_units_text = "units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
constexpr const char* bandwidth_units_text = "units bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps";
constexpr const char* time_units_text = "units s, ms, us, ns";

std::string number_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

// `value` in the unit of the largest scale not above it ("1000TBps"), or in the smallest unit when below them all.
template <std::size_t N>
std::string scaled_text(double value, const std::array<Unit, N>& units) {
  const Unit* best = nullptr;  // the largest scale not above the value
  const Unit* smallest = &units[0];
  for (const Unit& u : units) {
    if (u.scale < smallest->scale) smallest = &u;
    if (u.scale <= value && (best == nullptr || u.scale > best->scale)) best = &u;
  }
  if (best == nullptr) best = smallest;
  return number_text(value / best->scale) + std::string(best->name);
}

[[noreturn]] void refuse(const std::string& what, std::string_view text) {
  throw std::invalid_argument("expected " + what + ", got '" + std::string(text) + "'");
}

}  // namespace

std::string bytes_text(std::uint64_t bytes) {
  if (bytes == 0) return "0B";
  const Unit* best = &size_units[0];
  for (const Unit& u : size_units) {
    const auto scale = static_cast<std::uint64_t>(u.scale);
    if (bytes % scale == 0 && u.scale > best->scale) best = &u;
  }
  return std::to_string(bytes / static_cast<std::uint64_t>(best->scale)) + std::string(best->name);
}

std::string bandwidth_text(double Bps) { return scaled_text(Bps, bandwidth_units); }

std::string seconds_text(double seconds) { return seconds == 0 ? "0s" : scaled_text(seconds, time_units); }

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::uint64_t parse_bytes(std::string_view text, std::uint64_t min, std::uint64_t max) {
  const std::string form = std::string("a size like 100MB (") + size_units_text + ")";
  const std::string in_range =
      "a whole number of bytes in [" + bytes_text(min) + ", " + bytes_text(max) + "] (" + size_units_text + ")";
  const std::size_t length = number_length(text);
  const Unit* unit = length == 0 ? nullptr : find_unit(text.substr(length), size_units);
  if (unit == nullptr) refuse(form, text);
  const std::string_view number = text.substr(0, length);
  std::uint64_t bytes = 0;
  if (number.find_first_not_of("0123456789") == std::string_view::npos) {  // a whole number: exact, with overflow
    std::uint64_t count = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), count);
    if (ec != std::errc() || end != number.data() + number.size() ||
        __builtin_mul_overflow(count, static_cast<std::uint64_t>(unit->scale), &bytes)) {
      refuse(in_range, text);
    }
  } else {  // a fraction or an exponent: through a double, exact below 2^53
    double value = 0;
    if (!read_double(text, length, value)) refuse(in_range, text);
    const double scaled = value * unit->scale;
    if (!(scaled <= static_cast<double>(max)) || scaled >= 0x1p64) refuse(in_range, text);  // (2^64: no cast)
    if (scaled != std::floor(scaled)) refuse("a whole number of bytes (" + form + ")", text);
    bytes = static_cast<std::uint64_t>(scaled);
  }
  if (bytes < min || bytes > max) refuse(in_range, text);
  return bytes;
}

double parse_bandwidth_Bps(std::string_view text, double min, double max) {
  double value = 0;
  std::string_view unit_name;
  const Unit* unit = split_number(text, value, unit_name) ? find_unit(unit_name, bandwidth_units) : nullptr;
  const std::string range = "[" + bandwidth_text(min) + ", " + bandwidth_text(max) + "]";
  if (unit == nullptr) {
    refuse(std::string("a bandwidth in ") + range + " like 25Gbps (" + bandwidth_units_text + ")", text);
  }
  const double Bps = value * unit->scale;
  if (!(Bps >= min && Bps <= max)) {
    refuse(std::string("a bandwidth in ") + range + " like 25Gbps (" + bandwidth_units_text + ")", text);
  }
  return Bps;
}

double parse_seconds(std::string_view text, double min, double max) {
  double value = 0;
  std::string_view unit_name;
  const Unit* unit = split_number(text, value, unit_name) ? find_unit(unit_name, time_units) : nullptr;
  const std::string what =
      "a duration in [" + seconds_text(min) + ", " + seconds_text(max) + "] like 1us (" + time_units_text + ")";
  if (unit == nullptr) refuse(what, text);
  const double seconds = value * unit->scale;
  if (!(seconds >= min && seconds <= max)) refuse(what, text);
  return seconds;
}

double parse_long_seconds(std::string_view text, double min, double max) {
  static constexpr std::array<Unit, 4> long_units{{{"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}}};
  double value = 0;
  std::string_view unit_name;
  const Unit* unit = split_number(text, value, unit_name) ? find_unit(unit_name, long_units) : nullptr;
  const std::string what =
      "a duration in [" + seconds_text(min) + ", " + seconds_text(max) + "] like 30d or 10min (units s, min, h, d)";
  if (unit == nullptr) refuse(what, text);
  const double seconds = value * unit->scale;
  if (!(seconds >= min && seconds <= max)) refuse(what, text);
  return seconds;
}

double parse_rate_per_h(std::string_view text) {
  static constexpr std::array<Unit, 3> per_units{{{"/h", 1}, {"/day", 1.0 / 24}, {"/year", 1.0 / (24 * 365.25)}}};
  // (at most one a second: a component failing faster is no hardware, and 1e300/h overflowed the goodput's figures)
  constexpr double most_per_h = 3600;
  const std::string what = "a rate like 1.2e-5/h (per /h, /day or /year), from 0 to 3600/h";
  const std::size_t length = number_length(text);
  double value = 0;
  const Unit* unit = length == 0 ? nullptr : find_unit(text.substr(length), per_units);
  if (unit == nullptr || !read_double(text, length, value) || !std::isfinite(value) || value < 0 ||
      value * unit->scale > most_per_h) {
    refuse(what, text);
  }
  return value * unit->scale;
}

long long parse_integer(std::string_view text, long long min, long long max) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    refuse("a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]", text);
  }
  return value;
}

double parse_number(std::string_view text, double min, double max, bool min_exclusive) {
  const std::string what =
      std::string("a number in ") + (min_exclusive ? "(" : "[") + number_text(min) + ", " + number_text(max) + "]";
  const bool negative = !text.empty() && text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  const std::size_t length = number_length(digits);
  double value = 0;
  if (length == 0 || length != digits.size() || !read_double(digits, length, value)) refuse(what, text);
  if (negative) value = -value;
  if (!(min_exclusive ? value > min : value >= min) || !(value <= max)) refuse(what, text);
  return value;
}

}  // namespace dtsim
