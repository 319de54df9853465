// Model files: a network described as data, {"model": {...}}, of one of two kinds (docs/models.md lists every field):
//   "transformer": hyperparameters (layers, hidden, heads, kv_heads, ffn, vocab, sequence, MoE...), turned into layers
//   by models/transformer.cpp; "layers": a CNN or MLP by its layer list (conv, linear, pool, or custom rows of
//   explicit numbers), turned into layers by models/layer_list.cpp.
// The built-in models are such files, scenarios/models/NAME.json.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "models/model_zoo.hpp"

namespace dtsim {

// Reads a model object (the value of a "model" key); `path` names it in errors ("model", "scenario.model"). Throws
// ScenarioError naming the JSON path of the first problem and what is accepted.
Model parse_model(const nlohmann::json& value, const std::string& path);
// Reads {"model": {...}}.
Model parse_model_document(const nlohmann::json& document);
// Reads and parses a file; unreadable files and JSON syntax errors are ScenarioErrors naming the file.
Model load_model_file(const std::string& path);
// A model as a scenario or --model names it: a path (it ends in .json or holds a '/'; relative paths from `base_dir`)
// or a built-in name (data_dir/scenarios/models/NAME.json). Throws ScenarioError listing the built-in models when
// NAME is not one.
Model load_named_model(const std::string& name, const std::string& base_dir, const std::string& data_dir);
// The built-in models' names, comma-separated, sorted.
std::string builtin_models(const std::string& data_dir);
// The field tables as Markdown (`dtsim help model-file`).
std::string model_fields_markdown();

}  // namespace dtsim
