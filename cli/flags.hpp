// Command-line flags: each flag's name, value form, default and documentation in one table, parsed strictly
// (unknown, repeated or value-less flags are usage errors).
#pragma once

#include <array>
#include <initializer_list>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::cli {

// Bad input from the user: printed as one line, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  std::string choice(std::string_view name, std::initializer_list<std::string_view> accepted) const;
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
