// Command-line flags: each flag's name, value form, default and documentation in one table, parsed strictly
// (unknown, repeated or value-less flags, and empty values, are usage errors). Numbers, sizes, durations and rates
// are read through the typed accessors, each with the flag's accepted range (scenarios/units), so that a value out
// of range or beyond what the arithmetic behind it can hold is refused naming the flag and the range.
#pragma once

#include <algorithm>

#include <array>
#include <cmath>
#include <initializer_list>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/units.hpp"

namespace dtsim::cli {

// Bad input from the user: printed as one line, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a std::bad_alloc no estimate caught says (bad input too: a request larger than this machine's memory).
inline constexpr const char* out_of_memory_text =
    "out of memory: the request needs more memory than this machine has available (ask for less)";

struct FlagSpec {
  std::string_view name;           // without the leading "--"
  std::string_view value_form;     // empty for a switch
  std::string_view default_value;  // shown in help; used when the flag is absent
  std::string_view doc;
};

class Flags {
public:
  Flags(std::span<const FlagSpec> specs, std::span<char* const> args);

  bool has(std::string_view name) const;
  // Whether the command declares the flag at all.
  bool accepts(std::string_view name) const;
  std::string get(std::string_view name) const;  // the given value, or the default
  // The value, which must be one of `accepted` ("--NAME: expected A or B, got 'X'" otherwise).
  std::string choice(std::string_view name, std::initializer_list<std::string_view> accepted) const {
    return choice(name, std::span<const std::string_view>(accepted.begin(), accepted.size()));
  }
  std::string choice(std::string_view name, std::span<const std::string_view> accepted) const;
  // The value as a whole number in [min, max], a size in bytes, a duration in seconds, a bandwidth in bytes/s, or a
  // plain number, each within the given range (parse_integer, parse_bytes, ... of scenarios/units).
  long long integer(std::string_view name, long long min, long long max) const;
  std::uint64_t bytes(std::string_view name, std::uint64_t min, std::uint64_t max) const;
  double seconds(std::string_view name, double min, double max) const;
  double bandwidth_Bps(std::string_view name, double min, double max) const;
  double number(std::string_view name, double min, double max, bool min_exclusive = false) const;
  // A flag the chosen command, algorithm or mode does not use: given, it is a UsageError "--NAME: `why`".
  void refuse_unless(std::string_view name, bool applies, const std::string& why) const;
  // Runs parse(value) and turns std::invalid_argument into a UsageError naming the flag.
  template <typename Parse>
  auto parse(std::string_view name, Parse parse_fn) const {
    const std::string value = get(name);
    try {
      return parse_fn(value);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--" + std::string(name) + ": " + e.what());
    }
  }

private:
  const FlagSpec& spec(std::string_view name) const;
  std::span<const FlagSpec> specs_;
  std::map<std::string, std::string, std::less<>> values_;
};

std::string flags_help(std::span<const FlagSpec> specs);

// The directory of the running dtsim binary (where its helper programs are built).
std::string executable_directory();

// Comma-separated values ("a,,b" keeps the empty middle entry, so that it is reported).
inline std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ','))
    parts.push_back(part);
  if (!text.empty() && text.back() == ',') parts.emplace_back();
  return parts;
}

// Throws std::invalid_argument for a name `names` (split from `list`) holds twice: the same variant or algorithm would
// run twice.
inline void check_distinct_names(const std::vector<std::string>& names, const std::string& list) {
  for (auto it = names.begin(); it != names.end(); ++it) {
    if (std::find(names.begin(), it, *it) != it)
      throw std::invalid_argument("'" + *it + "' given twice in '" + list + "'");
  }
}

// Expands "a,b,...,z" geometrically (ratio b/a) and "a,...,z" with `default_ratio`; plain lists pass through.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, Parse parse_one, double default_ratio) {
  const std::vector<std::string> parts = split(text);
  if (parts.empty()) throw std::invalid_argument("expected a comma-separated list, got ''");
  std::vector<T> values;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != "...") {
      values.push_back(parse_one(parts[i]));
      continue;
    }
    if (values.empty() || i + 1 != parts.size() - 1) {
      throw std::invalid_argument("'...' needs a first value before it and exactly one last value after it, got '" +
                                  text + "'");
    }
    const T last = parse_one(parts[i + 1]);
    const double ratio =
        values.size() >= 2 ? static_cast<double>(values.back()) / values[values.size() - 2] : default_ratio;
    if (!(ratio > 1.0)) throw std::invalid_argument("'" + text + "' must grow before '...'");
    if (!(static_cast<double>(values.back()) > 0)) {  // (0 times any ratio stays 0: the range would never end)
      throw std::invalid_argument("'" + text + "': the value before '...' must be above 0");
    }
    double v = static_cast<double>(values.back());
    while (v * ratio <= static_cast<double>(last) * (1 + 1e-9)) {
      v *= ratio;
      values.push_back(static_cast<T>(std::llround(v)));
    }
    if (values.back() != last) {
      throw std::invalid_argument("'" + text + "' does not reach its last value by factors of " +
                                  std::to_string(ratio));
    }
    break;
  }
  std::vector<T> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw std::invalid_argument("'" + text + "' lists the same value twice; give each once");
  return values;
}

// One flag table from several, in order, made when first needed (the algorithm option flags come from the registry).
inline std::vector<FlagSpec> concat_flags(std::initializer_list<std::span<const FlagSpec>> tables) {
  std::vector<FlagSpec> all;
  for (std::span<const FlagSpec> table : tables)
    all.insert(all.end(), table.begin(), table.end());
  return all;
}

// One flag table from two (a command's own flags, then shared ones).
template <std::size_t A, std::size_t B>
constexpr std::array<FlagSpec, A + B> join_flags(const std::array<FlagSpec, A>& first,
                                                 const std::array<FlagSpec, B>& second) {
  std::array<FlagSpec, A + B> all{};
  for (std::size_t i = 0; i < A; ++i)
    all[i] = first[i];
  for (std::size_t i = 0; i < B; ++i)
    all[A + i] = second[i];
  return all;
}

}  // namespace dtsim::cli
