#include "scenarios/input_rates_file.hpp"

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "scenarios/json_reader.hpp"

namespace dtsim {
namespace {

// (the fit searches 10 to 10,000 images a core a second: validation/published_fit.cpp)
constexpr std::array<FieldSpec, 5> input_rates_fields{{
    value_field("generated_by", FieldType::text, "", "the command that wrote the file"),
    ranged_field("decode_per_core", FieldType::number, "",
                 "images one host core decodes and augments a second (random crop and flip), fitted", 10, 10000),
    ranged_field("decode_per_core_autoaugment", FieldType::number, "", "the same with AutoAugment, fitted", 10, 10000),
    ranged_field("rows", FieldType::integer, "", "fit rows decode_per_core was fitted on", 0, 1 << 30),
    ranged_field("autoaugment_rows", FieldType::integer, "", "fit rows decode_per_core_autoaugment was fitted on", 0,
                 1 << 30),
}};

constexpr std::array<FieldSpec, 1> input_rates_document_fields{{
    object_field("input_rates", true, "the fitted rates of the published runs' input pipelines", input_rates_fields),
}};

}  // namespace

PublishedInputRates parse_input_rates(const nlohmann::json& document) {
  const JsonObject root(document, "", input_rates_document_fields);
  const JsonObject o = root.object("input_rates");
  PublishedInputRates r;
  r.generated_by = o.text("generated_by");
  r.decode_per_core = o.number("decode_per_core");
  r.decode_per_core_autoaugment = o.number("decode_per_core_autoaugment");
  r.rows = static_cast<int>(o.integer("rows"));
  r.autoaugment_rows = static_cast<int>(o.integer("autoaugment_rows"));
  return r;
}

PublishedInputRates load_input_rates_file(const std::string& path) { return parse_json_file(path, parse_input_rates); }

nlohmann::json input_rates_json(const PublishedInputRates& rates) {
  return nlohmann::json{{"input_rates",
                         {{"generated_by", rates.generated_by},
                          {"decode_per_core", rates.decode_per_core},
                          {"decode_per_core_autoaugment", rates.decode_per_core_autoaugment},
                          {"rows", rates.rows},
                          {"autoaugment_rows", rates.autoaugment_rows}}}};
}

std::string default_input_rates_path(const std::string& data_dir) {
  return data_dir + "/validation/published/input-rates.json";
}

std::optional<PublishedInputRates> load_shipped_input_rates(const std::string& data_dir) {
  const std::string path = default_input_rates_path(data_dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return load_input_rates_file(path);
}

}  // namespace dtsim
