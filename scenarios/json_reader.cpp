#include "scenarios/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scenarios/input_file.hpp"
#include "scenarios/json_text.hpp"
#include "scenarios/units.hpp"

namespace dtsim {
namespace {

std::string json_number_text(double v) {
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string range_text(const FieldSpec& f, bool whole) {
  const bool low = std::isfinite(f.min);
  const bool high = std::isfinite(f.max);
  const std::string what = whole ? "a whole number" : "a number";
  if (low && high) return what + " in [" + json_number_text(f.min) + ", " + json_number_text(f.max) + "]";
  if (low) return what + " >= " + json_number_text(f.min);
  if (high) return what + " <= " + json_number_text(f.max);
  return what;
}

std::string choices_text(std::string_view choices) {
  std::string out;
  std::size_t start = 0;
  while (start <= choices.size()) {
    const std::size_t bar = choices.find('|', start);
    const std::string_view one = choices.substr(start, bar == std::string_view::npos ? bar : bar - start);
    if (!out.empty()) out += bar == std::string_view::npos ? " or " : ", ";
    out += '"' + std::string(one) + '"';
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

std::string expected_text(const FieldSpec& f) {
  switch (f.type) {
    case FieldType::text: return "a string";
    case FieldType::choice: return choices_text(f.choices);
    case FieldType::integer: return range_text(f, true);
    case FieldType::number: return range_text(f, false);
    case FieldType::bandwidth: return "a bandwidth string like \"100Gbps\" or \"25GBps\"";
    case FieldType::duration: return "a duration string like \"1us\" or \"0.5ms\"";
    case FieldType::size: return "a size string like \"100MB\" or \"64KiB\"";
    case FieldType::integer_list: {
      std::string one = range_text(f, true);  // "a whole number in [..]" -> "whole numbers in [..]"
      return "a non-empty list of whole numbers" + one.substr(std::string("a whole number").size());
    }
    case FieldType::object: return "an object";
    case FieldType::object_list: return "a list of objects";
    case FieldType::name_or_object: return "a name, a path to a .json file, or an object";
    case FieldType::boolean: return "true or false";
    case FieldType::raw: return "any JSON value (kept as measured)";
  }
  return "?";
}

std::string got_text(const nlohmann::json& got) {
  std::string text = got.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

JsonObject::JsonObject(const nlohmann::json& value, std::string path, std::span<const FieldSpec> fields)
    : JsonObject(value, std::move(path), fields, true) {}

JsonObject::JsonObject(const nlohmann::json& value, std::string path, std::span<const FieldSpec> fields,
                       bool check_required)
    : json_(&value), path_(std::move(path)), fields_(fields) {
  if (!value.is_object()) {
    throw ScenarioError((path_.empty() ? std::string("top level") : path_) + ": expected an object, got " +
                        got_text(value));
  }
  for (const auto& [key, v] : value.items()) {
    bool known = false;
    for (const FieldSpec& f : fields_)
      known |= f.key == key;
    if (!known) {
      std::string accepted;
      for (const FieldSpec& f : fields_)
        accepted += (accepted.empty() ? "" : ", ") + std::string(f.key);
      throw ScenarioError(path_of(key) + ": unknown key (accepted: " + accepted + ")");
    }
  }
  // every value given is checked against its field's type and range now, whether or not the reader asks for it
  // (a record like a fit's r_squared or a description is kept, never read, and must still be what the table says)
  for (const FieldSpec& f : fields_) {
    if (!value.contains(f.key)) continue;
    switch (f.type) {
      case FieldType::text: text(f.key); break;
      case FieldType::choice: choice(f.key); break;
      case FieldType::integer: integer(f.key); break;
      case FieldType::number: number(f.key); break;
      case FieldType::bandwidth: bandwidth_Bps(f.key); break;
      case FieldType::duration: seconds(f.key); break;
      case FieldType::size: bytes(f.key); break;
      case FieldType::integer_list: integer_list(f.key); break;
      case FieldType::boolean: boolean(f.key); break;
      default: break;  // objects and lists by their own readers; names or objects and raw values as given
    }
  }
  if (!check_required) return;
  for (const FieldSpec& f : fields_) {
    const bool required = f.type == FieldType::object ? f.default_value == "required"
                                                      : f.default_value.empty() && f.required_when.empty();
    if (required && !value.contains(f.key)) {
      throw ScenarioError(path_of(f.key) + ": missing; expected " + expected_text(f));
    }
  }
}

std::string JsonObject::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const FieldSpec& JsonObject::spec(std::string_view key) const {
  for (const FieldSpec& f : fields_) {
    if (f.key == key) return f;
  }
  throw std::logic_error("JsonObject: field '" + std::string(key) + "' is not in the table of " + path_);
}

bool JsonObject::has(std::string_view key) const { return json_->contains(key); }

bool JsonObject::is_object(std::string_view key) const {
  spec(key);
  const auto it = json_->find(key);
  return it != json_->end() && it->is_object();
}

const nlohmann::json& JsonObject::json(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const auto it = json_->find(key);
  if (it == json_->end()) throw ScenarioError(path_of(key) + ": missing; expected " + expected_text(f));
  return *it;
}

void JsonObject::fail(std::string_view key, const std::string& expected, const nlohmann::json& got) const {
  throw ScenarioError(path_of(key) + ": expected " + expected + ", got " + got_text(got));
}

const nlohmann::json* JsonObject::value(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const auto it = json_->find(key);
  if (it != json_->end()) return &*it;
  if (f.default_value.empty() && f.type != FieldType::object) {
    throw ScenarioError(path_of(key) + ": missing; expected " + expected_text(f));
  }
  return nullptr;
}

// Absent fields take their defaults, written in the same notation as the JSON value would be.
namespace {
nlohmann::json default_json(const FieldSpec& f) {
  switch (f.type) {
    case FieldType::integer:
    case FieldType::number:
    case FieldType::integer_list:
    case FieldType::boolean: return nlohmann::json::parse(f.default_value);
    default: return nlohmann::json(std::string(f.default_value));
  }
}
}  // namespace

std::string JsonObject::text(std::string_view key) const {
  const nlohmann::json* v = value(key);
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(spec(key));
  const nlohmann::json& j = v ? *v : fallback;
  if (!j.is_string()) fail(key, expected_text(spec(key)), j);
  std::string text = j.get<std::string>();
  // (a name or source is printed in tables, CSV and traces: a control character would break them)
  if (const auto bad = std::find_if(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
      bad != text.end()) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(static_cast<unsigned char>(*bad)));
    throw ScenarioError(path_of(key) + ": expected a string without control characters, got " + code +
                        " at character " + std::to_string(bad - text.begin() + 1));
  }
  return text;
}

std::string JsonObject::choice(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const nlohmann::json* v = value(key);
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(f);
  const nlohmann::json& j = v ? *v : fallback;
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    std::size_t start = 0;
    while (start <= f.choices.size()) {
      const std::size_t bar = f.choices.find('|', start);
      if (f.choices.substr(start, bar == std::string_view::npos ? bar : bar - start) == s) return s;
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
  }
  fail(key, expected_text(f), j);
}

long long JsonObject::integer(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const nlohmann::json* v = value(key);
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(f);
  const nlohmann::json& j = v ? *v : fallback;
  if (!j.is_number_integer() && !(j.is_number_float() && std::floor(j.get<double>()) == j.get<double>())) {
    fail(key, expected_text(f), j);
  }
  const double d = j.get<double>();
  if (d < f.min || d > f.max || std::fabs(d) > 9e15) fail(key, expected_text(f), j);
  return static_cast<long long>(d);
}

double JsonObject::number(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const nlohmann::json* v = value(key);
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(f);
  const nlohmann::json& j = v ? *v : fallback;
  if (!j.is_number()) fail(key, expected_text(f), j);
  const double d = j.get<double>();
  if (!std::isfinite(d) || d < f.min || d > f.max) fail(key, expected_text(f), j);
  return d;
}

namespace {
template <typename Parse>
auto parse_unit(const JsonObject& object, const nlohmann::json* v, const FieldSpec& f, Parse parse) {
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(f);
  const nlohmann::json& j = v ? *v : fallback;
  if (!j.is_string())
    throw ScenarioError(object.path_of(f.key) + ": expected " + expected_text(f) + ", got " + got_text(j));
  try {
    return parse(j.get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(object.path_of(f.key) + ": " + e.what());
  }
}
}  // namespace

double JsonObject::bandwidth_Bps(std::string_view key) const {
  return parse_unit(*this, value(key), spec(key), [](const std::string& s) { return parse_bandwidth_Bps(s); });
}

double JsonObject::seconds(std::string_view key) const {
  return parse_unit(*this, value(key), spec(key), [](const std::string& s) { return parse_seconds(s); });
}

std::uint64_t JsonObject::bytes(std::string_view key, std::uint64_t min_bytes) const {
  return parse_unit(*this, value(key), spec(key),
                    [min_bytes](const std::string& s) { return parse_bytes(s, min_bytes); });
}

std::vector<long long> JsonObject::integer_list(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const nlohmann::json* v = value(key);
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(f);
  const nlohmann::json& j = v ? *v : fallback;
  if (!j.is_array() || j.empty()) fail(key, expected_text(f), j);
  std::vector<long long> out;
  for (const nlohmann::json& e : j) {
    if (!e.is_number_integer()) fail(key, expected_text(f), j);
    const auto x = e.get<long long>();
    if (static_cast<double>(x) < f.min || static_cast<double>(x) > f.max) fail(key, expected_text(f), j);
    out.push_back(x);
  }
  return out;
}

bool JsonObject::boolean(std::string_view key) const {
  const FieldSpec& f = spec(key);
  const nlohmann::json* v = value(key);
  const nlohmann::json fallback = v ? nlohmann::json() : default_json(f);
  const nlohmann::json& j = v ? *v : fallback;
  if (!j.is_boolean()) fail(key, expected_text(f), j);
  return j.get<bool>();
}

const nlohmann::json& JsonObject::name_or_object(std::string_view key) const {
  const nlohmann::json* v = value(key);
  if (v == nullptr || !(v->is_string() || v->is_object())) {
    fail(key, expected_text(spec(key)), v ? *v : nlohmann::json());
  }
  return *v;
}

JsonObject JsonObject::object(std::string_view key) const {
  static const nlohmann::json empty = nlohmann::json::object();
  const FieldSpec& f = spec(key);
  const auto it = json_->find(key);
  if (it == json_->end()) {
    if (f.default_value == "required") throw ScenarioError(path_of(key) + ": missing; expected an object");
    return JsonObject(empty, path_of(key), f.fields, false);
  }
  return JsonObject(*it, path_of(key), f.fields);
}

std::vector<JsonObject> JsonObject::objects(std::string_view key) const {
  const FieldSpec& f = spec(key);
  std::vector<JsonObject> out;
  const auto it = json_->find(key);
  if (it == json_->end()) return out;
  if (!it->is_array()) fail(key, expected_text(f), *it);
  for (std::size_t i = 0; i < it->size(); ++i)
    out.emplace_back((*it)[i], path_of(key) + "[" + std::to_string(i) + "]", f.fields);
  return out;
}

nlohmann::json read_json_file(const std::string& path) {
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw ScenarioError(problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot read the file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ScenarioError(path + ": cannot read the file");
  try {
    return parse_json_text(text);
  } catch (const ScenarioError& e) {
    throw ScenarioError(path + ": " + e.what());
  }
}

std::string fields_markdown(std::string_view path, std::span<const FieldSpec> fields) {
  // appends rather than operator+ chains: GCC 12 warns falsely (-Wrestrict) on those
  std::string out = "`";
  out.append(path).append("`\n\n| key | accepts | default | meaning |\n|---|---|---|---|\n");
  std::string nested;
  for (const FieldSpec& f : fields) {
    out.append("| `").append(f.key).append("` | ").append(expected_text(f)).append(" | ");
    if (f.type == FieldType::object) {
      out.append(f.default_value == "required" ? "required" : "optional");
    } else if (!f.required_when.empty()) {
      out.append("required when ").append(f.required_when);
    } else if (f.default_value.empty()) {
      out.append("required");
    } else {
      out.append("`").append(f.default_value).append("`");
    }
    out.append(" | ").append(f.doc).append(" |\n");
    if (f.type == FieldType::object || f.type == FieldType::object_list) {
      std::string inner(path);
      inner.append(".").append(f.key).append(f.type == FieldType::object_list ? "[]" : "");
      nested.append("\n").append(fields_markdown(inner, f.fields));
    }
  }
  return out + nested;
}

}  // namespace dtsim
