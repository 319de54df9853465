#include "scenarios/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace dtsim {
namespace {

struct Unit {
  std::string_view name;
  double scale;
};

// Splits "12.5MB" into 12.5 and "MB"; the number must be a plain decimal (optionally with an exponent).
bool split_number(std::string_view text, double& value, std::string_view& unit) {
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
  if (!int_part && !frac_part) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const std::size_t exp_start = j;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9')
      ++j;
    if (j > exp_start) i = j;
  }
  const std::string number(text.substr(0, i));
  std::size_t used = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != number.size() || !std::isfinite(value)) return false;
  unit = text.substr(i);
  return true;
}

template <std::size_t N>
double parse_with_units(std::string_view text, const std::array<Unit, N>& units, const char* expected) {
  double value = 0;
  std::string_view unit;
  if (split_number(text, value, unit)) {
    for (const Unit& u : units) {
      if (u.name == unit) return value * u.scale;
    }
  }
  throw std::invalid_argument(std::string("expected ") + expected + ", got '" + std::string(text) + "'");
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

constexpr const char* size_form = "a size like 100MB (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
constexpr const char* bandwidth_form =
    "a bandwidth > 0 like 25Gbps (units bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps)";
constexpr const char* time_form = "a duration >= 0 like 1us (units s, ms, us, ns)";

}  // namespace

std::uint64_t parse_bytes(std::string_view text) {
  const double bytes = parse_with_units(text, size_units, size_form);
  if (bytes < 0 || bytes >= 1.8e19 || bytes != std::floor(bytes)) {
    throw std::invalid_argument(std::string("expected a whole number of bytes (") + size_form + "), got '" +
                                std::string(text) + "'");
  }
  return static_cast<std::uint64_t>(bytes);
}

double parse_bandwidth_Bps(std::string_view text) {
  const double bps = parse_with_units(text, bandwidth_units, bandwidth_form);
  if (!(bps > 0))
    throw std::invalid_argument(std::string("expected ") + bandwidth_form + ", got '" + std::string(text) + "'");
  return bps;
}

double parse_seconds(std::string_view text) { return parse_with_units(text, time_units, time_form); }

long long parse_integer(std::string_view text, long long min, long long max) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    throw std::invalid_argument("expected a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
                                "], got '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace dtsim
