// JSON text to a document, with the limits every file dtsim reads is held to: at most max_json_depth nested objects
// and arrays (a file nested 50,000 deep is refused at level 65, never built, copied or printed), every number within a
// double's range (1e400 is refused, not read as infinity), and every key once per object (a repeated key is refused:
// nlohmann's parser would silently keep the last). Errors are ScenarioErrors naming the JSON path or the line.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace dtsim {

inline constexpr std::size_t max_json_depth = 64;

// Throws ScenarioError, e.g. "cluster.nodes: duplicate key (each key may appear once in an object)",
// "not valid JSON (line 3, column 14: number 1e400 is beyond a double's range, about 1.8e308)",
// "not valid JSON (parse error at line 1, column 2: syntax error ...)",
// "a[0][0][0]...: nested deeper than 64 levels (objects and arrays)".
nlohmann::json parse_json_text(const std::string& text);

}  // namespace dtsim
