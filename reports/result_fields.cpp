#include "reports/result_fields.hpp"

#include <cmath>

namespace dtsim::result_fields {

namespace {

const char* type_name(const nlohmann::json& v) { return v.type_name(); }

}  // namespace

std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& path) {
  if (!object.is_object()) {
    throw ResultFileError((path.empty() ? std::string("the document") : path) + ": expected an object, got " +
                          type_name(object));
  }
  const auto it = object.find(key);
  if (it == object.end()) throw ResultFileError(join(path, key) + ": missing");
  return *it;
}

double number(const nlohmann::json& object, const char* key, const std::string& path) {
  const nlohmann::json& v = member(object, key, path);
  if (!v.is_number()) throw ResultFileError(join(path, key) + ": expected a number, got " + type_name(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw ResultFileError(join(path, key) + ": expected a finite number");
  return d;
}

double non_negative(const nlohmann::json& object, const char* key, const std::string& path) {
  const double v = number(object, key, path);
  if (v < 0) throw ResultFileError(join(path, key) + ": expected a number >= 0, got " + object[key].dump());
  return v;
}

double positive_number(const nlohmann::json& object, const char* key, const std::string& path) {
  const double v = number(object, key, path);
  if (v <= 0) throw ResultFileError(join(path, key) + ": expected a number > 0, got " + object[key].dump());
  return v;
}

std::uint64_t count(const nlohmann::json& object, const char* key, const std::string& path) {
  const nlohmann::json& v = member(object, key, path);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    throw ResultFileError(join(path, key) + ": expected a whole number >= 0, got " + v.dump());
  }
  return v.get<std::uint64_t>();
}

int positive(const nlohmann::json& object, const char* key, const std::string& path) {
  const nlohmann::json& v = member(object, key, path);
  const bool whole = v.is_number_unsigned() || v.is_number_integer();
  if (!whole || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > (std::int64_t{1} << 30)) {
    throw ResultFileError(join(path, key) + ": expected a whole number in [1, 1073741824], got " + v.dump());
  }
  return static_cast<int>(v.get<std::int64_t>());
}

std::string text(const nlohmann::json& object, const char* key, const std::string& path) {
  const nlohmann::json& v = member(object, key, path);
  if (!v.is_string()) throw ResultFileError(join(path, key) + ": expected a string, got " + type_name(v));
  return v.get<std::string>();
}

bool boolean(const nlohmann::json& object, const char* key, const std::string& path) {
  const nlohmann::json& v = member(object, key, path);
  if (!v.is_boolean()) throw ResultFileError(join(path, key) + ": expected true or false, got " + type_name(v));
  return v.get<bool>();
}

const nlohmann::json& list(const nlohmann::json& object, const char* key, const std::string& path) {
  const nlohmann::json& v = member(object, key, path);
  if (!v.is_array()) throw ResultFileError(join(path, key) + ": expected a list, got " + type_name(v));
  if (v.empty()) throw ResultFileError(join(path, key) + ": expected at least one entry");
  return v;
}

}  // namespace dtsim::result_fields
