// The one JSON reader's limits (depth, number range, duplicate keys, input files) and its field tables' required keys.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "scenarios/input_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"

using namespace dtsim;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json_text(text);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("JSON text: nesting is bounded, refused at the first level too deep with its path, never built deeper") {
  CHECK(parse_json_text(nested_arrays(max_json_depth)).is_array());
  CHECK_THAT(error_of(nested_arrays(max_json_depth + 1)),
             Catch::EndsWith(": nested deeper than 64 levels (objects and arrays)"));
  // 50,000 levels (what crashed every loader with a stack overflow): refused, as fast as any other error
  CHECK_THAT(error_of(nested_arrays(50000)), Catch::StartsWith("[0][0][0]") && Catch::Contains("deeper than 64"));
  CHECK_THAT(error_of(std::string(50000, '[')), Catch::Contains("deeper than 64"));  // unclosed, too
  // the path names the keys and indexes on the way down, as JsonObject's paths do
  std::string deep = R"({"cluster": {"nodes": [1, )" + nested_arrays(max_json_depth - 2) + "]}}";
  CHECK_THAT(error_of(deep), Catch::StartsWith("cluster.nodes[1][0][0]"));
  std::string deep_objects;
  for (std::size_t i = 0; i < 100; ++i)
    deep_objects += R"({"a": )";
  deep_objects += "1" + std::string(100, '}');
  const std::string message = error_of(deep_objects);
  CHECK_THAT(message, Catch::StartsWith("a.a.a.a.") && Catch::Contains("...: nested deeper than 64 levels"));
  CHECK(message.size() < 160);  // the path is cut short, not printed 65 levels long
}

TEST_CASE("JSON text: a number beyond a double's range is refused with its line and column") {
  CHECK(error_of("{\"a\": 1,\n \"b\": 1e400}") ==
        "not valid JSON (line 2, column 7: number 1e400 is beyond a double's range, about 1.8e308)");
  CHECK_THAT(error_of("[-1e999]"), Catch::StartsWith("not valid JSON (line 1, column 2: number -1e999 is beyond"));
  // the largest doubles, tiny ones and integers past 64 bits (read as doubles) are numbers
  CHECK(parse_json_text("[1.7e308, 1e-400, 123456789012345678901234567890]").size() == 3);
}

TEST_CASE("JSON text: a repeated key is refused naming its path, where nlohmann would keep the last silently") {
  CHECK(error_of(R"({"cluster": {"nodes": 8, "nodes": 3}})") ==
        "cluster.nodes: duplicate key (each key may appear once in an object)");
  CHECK(error_of(R"({"a": [{"k": 1}, {"k": 1, "j": {}, "k": 2}]})") ==
        "a[1].k: duplicate key (each key may appear once in an object)");
  CHECK(error_of(R"({"x": 1, "x": 1})") == "x: duplicate key (each key may appear once in an object)");
  // the same key in different objects is fine
  const nlohmann::json j = parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 3}, {"k": 4}]})");
  CHECK(j["k"][1]["k"] == 4);
  CHECK(j["b"]["k"] == 2);
}

TEST_CASE("JSON text: syntax errors say where, without nlohmann's exception prefix, and values come through whole") {
  CHECK_THAT(error_of("{\"a\": tru}"),
             Catch::StartsWith("not valid JSON (parse error at line 1, column 10: syntax error"));
  CHECK_THAT(error_of(""), Catch::StartsWith("not valid JSON (parse error at line 1, column 1"));
  CHECK_THAT(error_of("{} {}"), Catch::StartsWith("not valid JSON ("));
  CHECK(error_of("{} {}").find("[json.exception") == std::string::npos);
  const std::string text = R"({"s": "x\u00e9", "n": null, "b": false, "i": -3, "u": 18446744073709551615,
                              "f": 2.5, "a": [[], {}, [1, [2]]], "o": {"p": {"q": true}}})";
  CHECK(parse_json_text(text) == nlohmann::json::parse(text));
  CHECK(parse_json_text("7") == 7);
}

TEST_CASE("input files: a directory, a device or a missing file is refused up front, naming it") {
  const std::string dir = std::filesystem::temp_directory_path() / ("dtsim-json-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CHECK(input_file_problem(dir) == dir + ": is a directory, not a file");
  CHECK(input_file_problem("/dev/zero") == "/dev/zero: not a regular file (a device or socket)");
  CHECK(input_file_problem(dir + "/none.json") == dir + "/none.json: cannot read the file (no such file)");
  CHECK(input_file_problem("") == "'': cannot read the file (an empty path)");
  const std::string fifo = dir + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(input_file_problem(fifo).empty());  // `<(...)` works
  const std::string file = dir + "/ok.json";
  std::ofstream(file) << R"({"a": 1})";
  CHECK(input_file_problem(file).empty());
  CHECK(read_json_file(file)["a"] == 1);
  CHECK_THROWS_WITH(read_json_file(dir), dir + ": is a directory, not a file");
  CHECK_THROWS_WITH(read_json_file("/dev/zero"), "/dev/zero: not a regular file (a device or socket)");
  std::ofstream(file) << "{\"a\": 1, \"a\": 2}";
  CHECK_THROWS_WITH(read_json_file(file), file + ": a: duplicate key (each key may appear once in an object)");
  std::ofstream(file) << nested_arrays(100000);
  CHECK_THROWS_WITH(read_json_file(file), Catch::StartsWith(file + ": [0][0]") && Catch::Contains("deeper than 64"));
  std::filesystem::remove_all(dir);
}

namespace {

constexpr std::array<FieldSpec, 2> inner_fields{{
    value_field("need", FieldType::integer, "", "required"),
    value_field("have", FieldType::integer, "5", "has a default"),
}};
constexpr std::array<FieldSpec, 5> outer_fields{{
    value_field("raw", FieldType::raw, "", "required though never read"),
    choice_field("kind", "a", "a or b", "a|b"),
    required_when(value_field("radius", FieldType::number, "", "b: its radius"), "kind is b"),
    object_field("inner", false, "optional, its fields required when present", inner_fields),
    object_list_field("list", "entries", inner_fields),
}};

std::string read_error(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  try {
    const JsonObject o(j, "top", outer_fields);
    if (o.choice("kind") == "b") o.number("radius");
    o.object("inner");
    o.objects("list");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("field tables: every key without a default is required where its object is, read or not") {
  CHECK(read_error(R"({"raw": 1})") == "no error");
  CHECK(read_error(R"({})") == "top.raw: missing; expected any JSON value (kept as measured)");
  // required only where it applies: the reader asks for it there
  CHECK(read_error(R"({"raw": 1, "kind": "b"})") == "top.radius: missing; expected a number");
  CHECK(read_error(R"({"raw": 1, "kind": "b", "radius": 2})") == "no error");
  // an optional object may be absent; present, its required fields must be there
  CHECK(read_error(R"({"raw": 1, "inner": {"have": 1}})") == "top.inner.need: missing; expected a whole number");
  CHECK(read_error(R"({"raw": 1, "inner": {"need": 1}})") == "no error");
  CHECK(read_error(R"({"raw": 1, "list": [{"need": 1}, {}]})") == "top.list[1].need: missing; expected a whole number");
  // the reference says so
  const std::string doc = fields_markdown("top", outer_fields);
  CHECK_THAT(doc, Catch::Contains("| `raw` | any JSON value (kept as measured) | required |"));
  CHECK_THAT(doc, Catch::Contains("| `radius` | a number | required when kind is b |"));
}
