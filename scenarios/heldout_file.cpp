#include "scenarios/heldout_file.hpp"

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "scenarios/json_reader.hpp"

namespace dtsim {
namespace {

constexpr int most_devices = 1 << 24;

constexpr std::array<FieldSpec, 7> band_fields{{
    ranged_field("rows", FieldType::integer, "", "held-out rows the band was taken over", 0, 1 << 30),
    ranged_field("median_abs_error", FieldType::number, "", "median |predicted / measured - 1|", 0, unbounded),
    ranged_field("p10_error", FieldType::number, "", "10th percentile of predicted / measured - 1", -1, unbounded),
    ranged_field("p90_error", FieldType::number, "", "90th percentile of predicted / measured - 1", -1, unbounded),
    ranged_field("min_devices", FieldType::integer, "", "devices of the smallest run among the rows", 0, most_devices),
    ranged_field("max_devices", FieldType::integer, "", "devices of the largest run among the rows", 0, most_devices),
    value_field("models", FieldType::raw, "[]", "the dtsim models the training rows train (names, sorted)"),
}};
// A device's band: its name, then band_fields.
constexpr std::array<FieldSpec, 8> device_band_fields = [] {
  std::array<FieldSpec, 8> fields{};
  fields[0] = value_field("device", FieldType::text, "", "the dtsim device the rows were predicted with");
  for (std::size_t i = 0; i < band_fields.size(); ++i)
    fields[i + 1] = band_fields[i];
  return fields;
}();
// A size class's band: its name (collective_size_class), then band_fields.
constexpr std::array<FieldSpec, 8> size_band_fields = [] {
  std::array<FieldSpec, 8> fields{};
  fields[0] = choice_field("size", "", "the size class of each rank's buffer", "< 8 KiB|8 KiB to 1 MiB|>= 1 MiB");
  for (std::size_t i = 0; i < band_fields.size(); ++i)
    fields[i + 1] = band_fields[i];
  return fields;
}();

constexpr std::array<FieldSpec, 8> heldout_fields{{
    value_field("generated_by", FieldType::text, "", "the command that wrote the file"),
    object_field("training", true, "every predicted held-out training run (throughput)", band_fields),
    object_list_field("by_device", "the same, by device", device_band_fields),
    object_field("pooled_devices", true,
                 "held-out runs of parts whose efficiencies were pooled from other parts (no fit row of the part)",
                 band_fields),
    object_field("speedup", true,
                 "held-out multi-device runs against the held-out one-device run of the same configuration and "
                 "source (predicted / measured speedup - 1)",
                 band_fields),
    object_field("collectives", true, "held-out nccl-tests and rccl-tests runs (bus bandwidth)", band_fields),
    object_list_field("collectives_by_size", "the same by size class", size_band_fields),
    choice_field("split", "", "the rows the errors were taken over: the test split", "test"),
}};

constexpr std::array<FieldSpec, 1> heldout_document_fields{{
    object_field("heldout", true, "dtsim's errors on published runs no fit has seen", heldout_fields),
}};

ErrorBand read_band(const JsonObject& o) {
  ErrorBand b;
  b.rows = static_cast<int>(o.integer("rows"));
  b.median_abs_error = o.number("median_abs_error");
  b.p10_error = o.number("p10_error");
  b.p90_error = o.number("p90_error");
  b.min_devices = static_cast<int>(o.integer("min_devices"));
  b.max_devices = static_cast<int>(o.integer("max_devices"));
  if (b.p10_error > b.p90_error) {
    throw ScenarioError(o.path_of("p10_error") + ": expected at most p90_error (" + std::to_string(b.p90_error) +
                        "), got " + std::to_string(b.p10_error));
  }
  const nlohmann::json models = o.has("models") ? o.json("models") : nlohmann::json::array();
  if (!models.is_array()) throw ScenarioError(o.path_of("models") + ": expected a list of model names");
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (!models[i].is_string() || models[i].get<std::string>().empty()) {
      throw ScenarioError(o.path_of("models") + "[" + std::to_string(i) + "]: expected a model name");
    }
    b.models.push_back(models[i].get<std::string>());
  }
  if (b.min_devices > b.max_devices) {
    throw ScenarioError(o.path_of("min_devices") + ": expected at most max_devices (" + std::to_string(b.max_devices) +
                        "), got " + std::to_string(b.min_devices));
  }
  return b;
}

nlohmann::json band_json(const ErrorBand& b) {
  return nlohmann::json{
      {"rows", b.rows},           {"median_abs_error", b.median_abs_error}, {"p10_error", b.p10_error},
      {"p90_error", b.p90_error}, {"min_devices", b.min_devices},           {"max_devices", b.max_devices},
      {"models", b.models}};
}

}  // namespace

HeldoutErrors parse_heldout(const nlohmann::json& document) {
  const JsonObject root(document, "", heldout_document_fields);
  const JsonObject h = root.object("heldout");
  HeldoutErrors e;
  e.generated_by = h.text("generated_by");
  h.choice("split");  // (only "test" is accepted)
  e.training = read_band(h.object("training"));
  // a list of named bands (by device, by size class): each name once
  auto named_bands = [&h](const char* list, const char* key, bool choice) {
    std::vector<std::pair<std::string, ErrorBand>> out;
    for (const JsonObject& o : h.objects(list)) {
      const std::string name = choice ? o.choice(key) : o.text(key);
      for (const auto& [seen, band] : out) {
        if (seen == name) throw ScenarioError(o.path_of(key) + ": '" + name + "' is listed twice");
      }
      out.emplace_back(name, read_band(o));
    }
    return out;
  };
  e.by_device = named_bands("by_device", "device", false);
  e.pooled_devices = read_band(h.object("pooled_devices"));
  e.speedup = read_band(h.object("speedup"));
  e.collectives = read_band(h.object("collectives"));
  e.collectives_by_size = named_bands("collectives_by_size", "size", true);
  return e;
}

HeldoutErrors load_heldout_file(const std::string& path) { return parse_json_file(path, parse_heldout); }

nlohmann::json heldout_json(const HeldoutErrors& errors) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& [name, band] : errors.by_device) {
    nlohmann::json d = band_json(band);
    d["device"] = name;
    devices.push_back(d);
  }
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& [size, band] : errors.collectives_by_size) {
    nlohmann::json c = band_json(band);
    c["size"] = size;
    sizes.push_back(c);
  }
  return nlohmann::json{{"heldout",
                         {{"generated_by", errors.generated_by},
                          {"split", "test"},
                          {"training", band_json(errors.training)},
                          {"by_device", devices},
                          {"pooled_devices", band_json(errors.pooled_devices)},
                          {"speedup", band_json(errors.speedup)},
                          {"collectives", band_json(errors.collectives)},
                          {"collectives_by_size", sizes}}}};
}

std::string default_heldout_path(const std::string& data_dir) {
  return data_dir + "/validation/published/heldout.json";
}

std::optional<HeldoutErrors> load_shipped_heldout(const std::string& data_dir) {
  const std::string path = default_heldout_path(data_dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return load_heldout_file(path);
}

}  // namespace dtsim
