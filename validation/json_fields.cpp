#include "validation/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace dtsim {

double field_number(const nlohmann::json& object, const std::string& at, const char* key, double low, double high) {
  const std::string path = at + key;
  if (!object.is_object() || !object.contains(key)) throw std::invalid_argument(path + ": missing");
  const nlohmann::json& value = object.at(key);
  if (!value.is_number() || !(value.get<double>() >= low) || !(value.get<double>() <= high)) {
    std::ostringstream range;
    range.precision(10);
    range << low << ", " << high;
    throw std::invalid_argument(path + ": expected a number in [" + range.str() + "], got " + value.dump());
  }
  return value.get<double>();
}

double optional_number(const nlohmann::json& object, const std::string& at, const char* key, double low, double high,
                       double absent) {
  return object.contains(key) ? field_number(object, at, key, low, high) : absent;
}

void check_keys(const nlohmann::json& object, const std::string& at, std::initializer_list<std::string_view> known) {
  if (!object.is_object())
    throw std::invalid_argument((at.empty() ? "the file" : at.substr(0, at.size() - 1)) + ": expected an object, got " +
                                object.dump());
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string accepted;
    for (const std::string_view k : known)
      accepted += (accepted.empty() ? "" : ", ") + std::string(k);
    throw std::invalid_argument(at + key + ": unknown key (accepted: " + accepted + ")");
  }
}

int field_count(const nlohmann::json& object, const std::string& at, const char* key) {
  const double value = field_number(object, at, key, 1, 1 << 20);
  if (value != std::floor(value)) {
    throw std::invalid_argument(at + key + ": expected a whole number, got " + object.at(key).dump());
  }
  return static_cast<int>(value);
}

std::string field_text(const nlohmann::json& object, const std::string& at, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_string() ||
      object.at(key).get<std::string>().empty()) {
    throw std::invalid_argument(at + key + ": expected a non-empty string, got " +
                                (object.is_object() && object.contains(key) ? object.at(key).dump() : "nothing"));
  }
  return object.at(key).get<std::string>();
}

}  // namespace dtsim
