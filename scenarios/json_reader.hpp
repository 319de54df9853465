// Strict reading of scenario JSON: every object is read against a table of its fields (name, type, default, range,
// documentation, as ns-3 attributes keep them together). An unknown key, a wrong type, a bad unit or a value out of
// range is a ScenarioError whose one-line message names the JSON path and what is accepted, e.g.
//   cluster.fabric.oversubscription: expected a number >= 1, got 0.5
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim {

struct ScenarioError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

enum class FieldType : std::uint8_t {
  text,
  choice,
  integer,
  number,
  bandwidth,
  duration,
  size,
  integer_list,
  object,
  object_list,
  name_or_object,  // a name (or a path) as a string, or an object read by its own reader (e.g. a scenario's device)
  boolean,         // JSON true or false
  raw              // any JSON value, kept for reference and not interpreted (raw samples, residuals)
};

// An open end of a field's range (FieldSpec::max).
inline constexpr double unbounded = std::numeric_limits<double>::infinity();

struct FieldSpec {
  std::string_view key;
  FieldType type = FieldType::text;
  std::string_view default_value;  // in the field's own notation; empty: the field is required
  std::string_view doc;
  double min = -std::numeric_limits<double>::infinity();  // integer, number, integer_list entries
  double max = std::numeric_limits<double>::infinity();
  std::string_view choices;                // choice: the accepted values separated by '|'
  std::span<const FieldSpec> fields = {};  // object: its own fields
  // A field without a default that only some objects need (e.g. "kind is fat-tree"): its reader asks for it where it
  // applies. Every other field without a default must be present wherever its object is.
  std::string_view required_when;
};

// Table entries, one helper per kind of field.
constexpr FieldSpec value_field(std::string_view key, FieldType type, std::string_view default_value,
                                std::string_view doc) {
  FieldSpec f;
  f.key = key;
  f.type = type;
  f.default_value = default_value;
  f.doc = doc;
  return f;
}
constexpr FieldSpec ranged_field(std::string_view key, FieldType type, std::string_view default_value,
                                 std::string_view doc, double min, double max) {
  FieldSpec f = value_field(key, type, default_value, doc);
  f.min = min;
  f.max = max;
  return f;
}
constexpr FieldSpec choice_field(std::string_view key, std::string_view default_value, std::string_view doc,
                                 std::string_view choices) {
  FieldSpec f = value_field(key, FieldType::choice, default_value, doc);
  f.choices = choices;
  return f;
}
// required: the object must be present; otherwise an absent object reads as {} (its fields' defaults).
constexpr FieldSpec object_field(std::string_view key, bool required, std::string_view doc,
                                 std::span<const FieldSpec> fields) {
  FieldSpec f = value_field(key, FieldType::object, required ? "required" : "", doc);
  f.fields = fields;
  return f;
}

// A field without a default that is required only where `when` holds (its reader checks).
constexpr FieldSpec required_when(FieldSpec f, std::string_view when) {
  f.required_when = when;
  return f;
}

// A list of objects, each read against `fields`; absent reads as an empty list.
constexpr FieldSpec object_list_field(std::string_view key, std::string_view doc, std::span<const FieldSpec> fields) {
  FieldSpec f = value_field(key, FieldType::object_list, "[]", doc);
  f.fields = fields;
  return f;
}

class JsonObject {
public:
  // Throws ScenarioError unless `value` is an object whose keys are all in `fields` and which holds every field the
  // table requires (no default, no required_when).
  JsonObject(const nlohmann::json& value, std::string path, std::span<const FieldSpec> fields);

  bool has(std::string_view key) const;
  // Whether the field is present and holds an object (a name_or_object field given inline).
  bool is_object(std::string_view key) const;
  // The field's JSON value as given; ScenarioError when it is absent.
  const nlohmann::json& json(std::string_view key) const;
  std::string text(std::string_view key) const;
  std::string choice(std::string_view key) const;
  long long integer(std::string_view key) const;
  double number(std::string_view key) const;
  double bandwidth_Bps(std::string_view key) const;
  double seconds(std::string_view key) const;
  // A size; below min_bytes (or not a size) is a ScenarioError naming the accepted range.
  std::uint64_t bytes(std::string_view key, std::uint64_t min_bytes = 0) const;
  std::vector<long long> integer_list(std::string_view key) const;
  bool boolean(std::string_view key) const;
  // A name_or_object field's value (a string or an object; anything else is a ScenarioError).
  const nlohmann::json& name_or_object(std::string_view key) const;
  // The nested object (an empty one when absent and not required, so its fields take their defaults).
  JsonObject object(std::string_view key) const;
  std::vector<JsonObject> objects(std::string_view key) const;
  // The path of a field, e.g. "cluster.fabric.radix", for errors found after reading.
  std::string path_of(std::string_view key) const;

private:
  // check_required false: an absent optional object read as {} (its fields' readers report what is missing).
  JsonObject(const nlohmann::json& value, std::string path, std::span<const FieldSpec> fields, bool check_required);
  const FieldSpec& spec(std::string_view key) const;
  // The field's JSON value, or its default parsed as JSON-ish text; nullptr for an absent object.
  const nlohmann::json* value(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const std::string& expected, const nlohmann::json& got) const;

  const nlohmann::json* json_;
  std::string path_;
  std::span<const FieldSpec> fields_;
};

// Reads and parses a JSON file with parse_json_text's limits (depth, number range, duplicate keys): ScenarioError
// "PATH: cannot read the file (...)", "PATH: is a directory, not a file", "PATH: not valid JSON (...)",
// "PATH: a.b: duplicate key (...)".
nlohmann::json read_json_file(const std::string& path);

// Reads `path` and returns parse(document), with every ScenarioError prefixed by the path.
template <typename Parse>
auto parse_json_file(const std::string& path, Parse parse) {
  const nlohmann::json document = read_json_file(path);
  try {
    return parse(document);
  } catch (const ScenarioError& e) {
    throw ScenarioError(path + ": " + e.what());
  }
}

// Markdown table of an object's fields (and, below it, of its nested objects'), for docs and `--help`.
std::string fields_markdown(std::string_view path, std::span<const FieldSpec> fields);

}  // namespace dtsim
