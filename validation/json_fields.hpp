// Reading the JSON files a validation wrote (validation.json, pytorch-validation.json) back, strictly: each field read
// is named by its JSON path when it is missing, of the wrong type or out of range, and an object with a key its writer
// never writes is refused (e.g. `cases[3].bogus: unknown key (accepted: ...)`), so that --repredict never predicts
// from a silently ignored or defaulted field.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace dtsim {

// A number in [low, high] at `at` + `key` (at: the object's path with its trailing dot, e.g. "cases[0].").
double field_number(const nlohmann::json& object, const std::string& at, const char* key, double low, double high);
// An optional field: its value when present (checked as field_number checks), `absent` otherwise.
double optional_number(const nlohmann::json& object, const std::string& at, const char* key, double low, double high,
                       double absent);
// A whole number in [1, 2^20].
int field_count(const nlohmann::json& object, const std::string& at, const char* key);
// A string (at least one character).
std::string field_text(const nlohmann::json& object, const std::string& at, const char* key);
// `object` is an object whose keys are all in `known` (what the file's writer writes).
void check_keys(const nlohmann::json& object, const std::string& at, std::initializer_list<std::string_view> known);

}  // namespace dtsim
