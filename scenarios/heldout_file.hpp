// The held-out error file (validation/published/heldout.json): the spread of dtsim's errors on the published runs no
// fit has seen, as `dtsim validate --published --write-heldout FILE` writes it and predict and explain read it
// (models/heldout_errors.hpp). Read strictly: an unknown key, a missing field or a value out of range is a
// ScenarioError naming the JSON path.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "models/heldout_errors.hpp"

namespace dtsim {

// Reads {"heldout": {...}}; throws ScenarioError naming the JSON path of the first problem.
HeldoutErrors parse_heldout(const nlohmann::json& document);
// Reads and parses a file; an unreadable file or bad JSON is a ScenarioError naming the file.
HeldoutErrors load_heldout_file(const std::string& path);
// The document parse_heldout reads.
nlohmann::json heldout_json(const HeldoutErrors& errors);
// data_dir/validation/published/heldout.json
std::string default_heldout_path(const std::string& data_dir);
// The shipped file's errors; nothing when the file does not exist (a ScenarioError when it exists and is bad).
std::optional<HeldoutErrors> load_shipped_heldout(const std::string& data_dir);

}  // namespace dtsim
