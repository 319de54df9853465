// Device files: the JSON description of one accelerator (or CPU socket) of the compute model, one file per part in
// scenarios/devices/ (docs/devices.md lists every field, its default and range, and the shipped parts' sources).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "models/devices.hpp"

namespace dtsim {

// Reads {"device": {...}}; throws ScenarioError naming the JSON path of the first problem.
Device parse_device(const nlohmann::json& document);
// Reads the device object itself (a file's "device", or a scenario's inline device at `path`).
Device read_device(const nlohmann::json& value, const std::string& path);
// Reads and parses a file; unreadable files and JSON syntax errors are ScenarioErrors naming the file.
Device load_device_file(const std::string& path);
// A device named as a scenario or --device names it: a path to a .json file (anything with a '/' or a .json ending,
// relative to `base_dir`), a built-in device (data_dir/scenarios/devices/NAME.json) or one of the old names, aliases
// of built-in files (v100, a100, h100, rtx3090, xeon-8380). Throws ScenarioError listing them when NAME is none.
Device load_named_device(const std::string& name, const std::string& base_dir, const std::string& data_dir);
// The built-in devices' names, comma-separated, and the aliases as "v100 = v100-sxm2-32gb, ...".
std::string builtin_device_names(const std::string& data_dir);
std::string device_alias_names();
// A device file's text with its efficiency fields and "fit" object replaced by `fitted`'s (efficiency,
// tensor_efficiency, memory_efficiency, half_efficiency_flops, grouped_half_channels, conv_tensor_rate, conv_tf32_rate,
// gemm_tf32_rate, fit); the rest of the text as it was. Throws ScenarioError when the text is not a device file, before
// or after.
std::string device_file_with_fit(const std::string& text, const Device& fitted);
// The field tables as Markdown (`dtsim help device-file`, docs/devices.md).
std::string device_fields_markdown();

}  // namespace dtsim
