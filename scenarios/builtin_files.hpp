// The built-in files of one kind (data_dir/scenarios/KIND/NAME.json: devices, models, clusters) and how a name given
// by a user reaches a file: a path, or a built-in name. The device, model and cluster loaders share these.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim {

// data_dir/scenarios/KIND
std::filesystem::path builtin_dir(const std::string& data_dir, std::string_view kind);
// The stems of the .json files there, sorted; empty when the folder cannot be read.
std::vector<std::string> builtin_names(const std::string& data_dir, std::string_view kind);
// The same, comma-separated ("a10, a100-pcie-80gb, ...").
std::string builtin_list(const std::string& data_dir, std::string_view kind);
// Whether a device or model name is a path to a file (a .json ending or a '/') rather than a built-in name.
bool names_a_path(std::string_view name);
// A path as given, relative ones taken from `base_dir`.
std::filesystem::path path_from(std::string_view name, const std::string& base_dir);

}  // namespace dtsim
