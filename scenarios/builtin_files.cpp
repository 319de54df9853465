#include "scenarios/builtin_files.hpp"

#include <algorithm>

namespace dtsim {

std::filesystem::path builtin_dir(const std::string& data_dir, std::string_view kind) {
  return std::filesystem::path(data_dir) / "scenarios" / kind;
}

std::vector<std::string> builtin_names(const std::string& data_dir, std::string_view kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(builtin_dir(data_dir, kind), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string builtin_list(const std::string& data_dir, std::string_view kind) {
  std::string out;
  for (const std::string& n : builtin_names(data_dir, kind))
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool names_a_path(std::string_view name) { return name.ends_with(".json") || name.find('/') != std::string_view::npos; }

std::filesystem::path path_from(std::string_view name, const std::string& base_dir) {
  std::filesystem::path file(name);
  return file.is_relative() ? std::filesystem::path(base_dir) / file : file;
}

}  // namespace dtsim
