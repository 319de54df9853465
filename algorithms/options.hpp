// What a schedule builder is given besides ranks and bytes: the settings every builder shares (element size, root)
// and the options algorithms declare for themselves, by name. An algorithm declares each of its options once, as an
// OptionSpec beside its builder (e.g. algorithms/parameter_server.hpp), and lists them in its registry entry; the
// CLI makes its flags, parses and checks their values, and refuses them for the algorithms that do not declare them
// from the specs alone, so that adding an algorithm with options of its own edits no shared struct.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace dtsim {

// What an algorithm option holds.
enum class OptionKind : std::uint8_t {
  count,      // a whole number in [min, max], e.g. --servers 4
  bytes,      // a size in [min, max] bytes, e.g. --segment-size 256KiB
  choice,     // one of `choices`, e.g. --ps-placement colocated
  allreduce,  // the name of an allreduce that can run inside another (AlgorithmInfo::nestable), e.g. --inter ring
};

// One option of an algorithm, as users write it: the flag --NAME.
struct OptionSpec {
  std::string_view name{};
  OptionKind kind = OptionKind::count;
  std::string_view value_form{};              // its value in --help, e.g. "S", "BYTES"
  std::string_view default_text{};            // the default as users would write it, e.g. "1MiB"
  std::uint64_t default_number = 0;           // count and bytes: the default
  std::uint64_t min = 0;                      // count and bytes: the valid range
  std::uint64_t max = 0;                      //
  std::array<std::string_view, 4> choices{};  // choice: the accepted words (unused ones empty)
  std::string_view doc{};                     // --help text, after the names of the algorithms that declare it
  std::string_view used_for{};                // the refusal of others: "only the ps allreduce " + used_for
  bool flag = true;                           // false: set by programs only (predict's server stride), no flag
  bool operator==(const OptionSpec&) const = default;
};

class AlgorithmOptions {
public:
  AlgorithmOptions() = default;
  explicit AlgorithmOptions(std::uint32_t bytes_per_element) : element_bytes(bytes_per_element) {}

  // Chunk boundaries fall on multiples of this many bytes (4 for float32 payloads); bytes must be a multiple of it.
  std::uint32_t element_bytes = 1;
  // Broadcast, reduce, gather and scatter: the root rank, in [0, ranks).
  std::uint32_t root = 0;

  // An algorithm option by the name its spec gives it: a number (count, bytes) or a word (choice, allreduce). The
  // values are checked at the edge (the CLI, from the specs) and by the builders that use them; a builder ignores
  // options it does not declare, so one set of options serves every algorithm (predict sets the parameter servers'
  // and the hierarchical allreduce's from the cluster whichever algorithm runs). AlgorithmInfo::build refuses a name
  // no registered algorithm declares.
  void set(std::string_view name, std::uint64_t value) { values_.insert_or_assign(std::string(name), value); }
  void set(std::string_view name, std::string value) { values_.insert_or_assign(std::string(name), std::move(value)); }
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  // The value set for the spec's option, or its default. Throws std::logic_error when it was set as the other type.
  std::uint64_t number(const OptionSpec& spec) const;
  std::string text(const OptionSpec& spec) const;
  // The names of the options set.
  std::vector<std::string> names() const;

private:
  std::map<std::string, std::variant<std::uint64_t, std::string>, std::less<>> values_;
};

// An option value the algorithm cannot use; `option` names it as users write it (e.g. "servers").
struct OptionError : std::invalid_argument {
  OptionError(std::string option_name, const std::string& message)
      : std::invalid_argument(message), option(std::move(option_name)) {}
  std::string option;
};

}  // namespace dtsim
