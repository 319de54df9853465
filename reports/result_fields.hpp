// Reading the fields of a result file (dtsim's --json output) for `dtsim report`: every missing or mistyped field
// throws ResultFileError naming its JSON path, e.g. "results[2].speedup: missing".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace dtsim {

// A result file that is not what dtsim writes; the message starts with the JSON path, e.g. "results[2].speedup: ...".
struct ResultFileError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace result_fields {

// `path` is the JSON path of `object` ("" for the document itself).
std::string join(const std::string& path, const char* key);  // path.key
std::string at(const std::string& path, std::size_t i);      // path[i]
const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& path);
double number(const nlohmann::json& object, const char* key, const std::string& path);           // finite
std::uint64_t count(const nlohmann::json& object, const char* key, const std::string& path);     // whole, >= 0
int positive(const nlohmann::json& object, const char* key, const std::string& path);            // 1 to 2^30
double non_negative(const nlohmann::json& object, const char* key, const std::string& path);     // finite, >= 0
double positive_number(const nlohmann::json& object, const char* key, const std::string& path);  // finite, > 0
std::string text(const nlohmann::json& object, const char* key, const std::string& path);
bool boolean(const nlohmann::json& object, const char* key, const std::string& path);
const nlohmann::json& list(const nlohmann::json& object, const char* key, const std::string& path);  // not empty

}  // namespace result_fields
}  // namespace dtsim
