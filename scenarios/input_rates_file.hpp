// The input pipelines' fitted rates (validation/published/input-rates.json): how many images one host core decodes and
// augments a second in the published runs that loaded ImageNet on their CPUs, as `dtsim calibrate --published` fits
// them on the fit split and `dtsim validate --published` reads them. Read strictly: an unknown key, a missing field or
// a value out of range is a ScenarioError naming the JSON path.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace dtsim {

struct PublishedInputRates {
  std::string generated_by;
  double decode_per_core = 0;              // images a core a second: random crop and flip
  double decode_per_core_autoaugment = 0;  // the same with AutoAugment
  int rows = 0;                            // fit rows each was fitted on
  int autoaugment_rows = 0;
};

// Reads {"input_rates": {...}}; throws ScenarioError naming the JSON path of the first problem.
PublishedInputRates parse_input_rates(const nlohmann::json& document);
// Reads and parses a file; an unreadable file or bad JSON is a ScenarioError naming the file.
PublishedInputRates load_input_rates_file(const std::string& path);
// The document parse_input_rates reads.
nlohmann::json input_rates_json(const PublishedInputRates& rates);
// data_dir/validation/published/input-rates.json
std::string default_input_rates_path(const std::string& data_dir);
// The shipped file's rates; nothing when the file does not exist (a ScenarioError when it exists and is bad).
std::optional<PublishedInputRates> load_shipped_input_rates(const std::string& data_dir);

}  // namespace dtsim
