#include "scenarios/device_file.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <vector>

#include "scenarios/builtin_files.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/json_text.hpp"

namespace dtsim {
namespace {

constexpr double max_flops = 1e19;  // 10 EFLOP/s: beyond any one part

constexpr std::array<FieldSpec, 4> source_fields{{
    value_field("url", FieldType::text, "", "the address of the document the figures were read from"),
    value_field("document", FieldType::text, "", "the document: datasheet, whitepaper or page, with its date"),
    value_field("table", FieldType::text, "", "the table, column or section of the document holding the figures"),
    value_field("notes", FieldType::text, "(none)",
                "which figures are secondary (not read in the vendor's own document) or derived, and how"),
}};

constexpr std::array<FieldSpec, 5> peak_fields{{
    ranged_field("fp32", FieldType::number, "",
                 "dense fp32 FLOP/s (GPUs: the CUDA-core / vector rate, not TF32 tensor math)", 1e6, max_flops),
    ranged_field("tf32", FieldType::number, "absent", "dense TF32 tensor FLOP/s; absent: the part has no TF32 math",
                 1e6, max_flops),
    ranged_field("fp16", FieldType::number, "absent",
                 "dense fp16 FLOP/s with fp32 accumulate (tensor cores where the part has them); absent: none", 1e6,
                 max_flops),
    ranged_field("bf16", FieldType::number, "absent", "dense bf16 FLOP/s with fp32 accumulate; absent: none", 1e6,
                 max_flops),
    ranged_field("fp8", FieldType::number, "absent", "dense fp8 FLOP/s with fp32 accumulate; absent: none", 1e6,
                 max_flops),
}};

constexpr std::array<FieldSpec, 4> fit_fields{{
    value_field("by", FieldType::text, "", "who or what fitted the efficiency parameters (a tool, a run, a paper)"),
    ranged_field("rows", FieldType::integer, "", "measurements the fit used", 1, 1e12),
    ranged_field("median_error", FieldType::number, "",
                 "median relative error of the fitted model on those rows (0.05 = 5%)", 0, 100),
    choice_field("scope", "device",
                 "device: fitted to measurements of this device; pooled: no measurement of this device was in the fit, "
                 "its parameters are those of the devices that had some",
                 "device|pooled"),
}};

constexpr std::array<FieldSpec, 17> device_fields{{
    value_field("name", FieldType::text, "", "the device's name in reports (a shipped file's name is its file name)"),
    value_field("description", FieldType::text, "(none)", "what part this is, and what one dtsim accelerator is"),
    object_field("source", true, "where the figures come from", source_fields),
    choice_field("kind", "gpu", "gpu (or any accelerator) or cpu (one socket); sets kernel_launch's default",
                 "gpu|cpu"),
    object_field("peak_flops", true,
                 "peak dense FLOP/s by precision (no sparsity); a precision absent here is one the part lacks, and "
                 "asking for it is an error",
                 peak_fields),
    value_field("memory", FieldType::size, "", "memory capacity, e.g. \"80GB\""),
    value_field("memory_bandwidth", FieldType::bandwidth, "", "peak memory bandwidth, e.g. \"2039GBps\""),
    ranged_field("efficiency", FieldType::number, "0.5",
                 "achieved / peak FLOP/s of large fp32 training kernels (the default is a guess, not a measurement)",
                 1e-6, 1),
    ranged_field("tensor_efficiency", FieldType::number, "0.5",
                 "achieved / peak FLOP/s of large kernels in tensor math: tf32, fp16, bf16, fp8 (the default is a "
                 "guess)",
                 1e-6, 1),
    ranged_field("half_efficiency_flops", FieldType::number, "0",
                 "FLOPs of one kernel at which it reaches half its achievable rate (F / (F + this) of it) in the "
                 "precision of the largest peak; a precision of a lower peak scales it by its peak / the largest (the "
                 "same seconds of work); 0: no size dependence",
                 0, 1e15),
    ranged_field("memory_efficiency", FieldType::number, "1", "achieved / peak bandwidth of memory-bound kernels", 1e-6,
                 1),
    ranged_field("grouped_half_channels", FieldType::number, "0",
                 "a grouped convolution whose groups reduce over c input channels each (1: depthwise) runs at c / (c + "
                 "this) of the rate of an ungrouped one of its FLOPs and bytes; 0: the same rate",
                 0, 4096),
    ranged_field("conv_tensor_rate", FieldType::number, "1",
                 "a convolution's math in fp16, bf16 or fp8 runs at this times the rate tensor_efficiency gives a "
                 "GEMM of its FLOPs (cuDNN's convolutions against cuBLAS's GEMMs; fitted with the other efficiencies)",
                 0.25, 4),
    ranged_field("conv_tf32_rate", FieldType::number, "1", "the same for a convolution in tf32 math", 0.25, 4),
    ranged_field("gemm_tf32_rate", FieldType::number, "1",
                 "a GEMM's math (linear layers, attention, the LM head) in tf32 runs at this times the rate "
                 "tensor_efficiency gives it in fp16 or bf16 (fitted with the other efficiencies)",
                 0.25, 4),
    value_field("kernel_launch", FieldType::duration, "3us (gpu), 1us (cpu)",
                "device time between two kernels of a stream (the host's dispatch time is the runtime's, "
                "docs/compute.md)"),
    object_field("fit", false,
                 "where fitted efficiency parameters came from (absent: datasheet figures and default efficiencies)",
                 fit_fields),
}};

constexpr std::array<FieldSpec, 1> device_document_fields{{
    object_field("device", true, "the device", device_fields),
}};

struct Alias {
  std::string_view name;
  std::string_view file;
};
// The built-in names of dtsim before device files, each the part it described.
constexpr std::array<Alias, 5> aliases{{
    {"v100", "v100-sxm2-32gb"},
    {"a100", "a100-sxm4-80gb"},
    {"h100", "h100-sxm5-80gb"},
    {"rtx3090", "rtx-3090"},
    {"xeon-8380", "xeon-platinum-8380"},
}};

std::string source_text(const JsonObject& s) {
  std::string text = s.text("document") + ", " + s.text("table") + " (" + s.text("url") + ")";
  if (s.has("notes")) text += "; " + s.text("notes");
  return text;
}

}  // namespace

Device read_device(const nlohmann::json& value, const std::string& path) {
  const JsonObject d(value, path, device_fields);
  Device device;
  device.name = d.text("name");
  if (device.name.empty()) throw ScenarioError(d.path_of("name") + ": expected a non-empty string");
  device.description = d.text("description");
  device.source = source_text(d.object("source"));
  device.kind = d.choice("kind") == "gpu" ? DeviceKind::gpu : DeviceKind::cpu;
  const JsonObject peaks = d.object("peak_flops");
  for (Precision p : all_precisions) {
    if (peaks.has(to_string(p))) device.set_peak_flops(p, peaks.number(to_string(p)));
  }
  device.memory_bytes = static_cast<double>(d.bytes("memory", 1));
  device.memory_Bps = d.bandwidth_Bps("memory_bandwidth");
  device.efficiency = d.number("efficiency");
  device.tensor_efficiency = d.number("tensor_efficiency");
  device.half_efficiency_flops = d.number("half_efficiency_flops");
  device.memory_efficiency = d.number("memory_efficiency");
  device.grouped_half_channels = d.number("grouped_half_channels");
  device.conv_tensor_rate = d.number("conv_tensor_rate");
  device.conv_tf32_rate = d.number("conv_tf32_rate");
  device.gemm_tf32_rate = d.number("gemm_tf32_rate");
  // back-to-back kernels on a GPU stream start about 3 us apart (Gray 2019, 'Getting Started with CUDA Graphs': 3.4 us
  // per short kernel launched from a graph); a CPU's "kernels" are function calls
  device.kernel_launch_s = d.has("kernel_launch")           ? d.seconds("kernel_launch")
                           : device.kind == DeviceKind::gpu ? 3e-6
                                                            : 1e-6;
  if (d.has("fit")) {
    const JsonObject fit = d.object("fit");
    device.fit =
        DeviceFit{fit.text("by"), fit.integer("rows"), fit.number("median_error"), fit.choice("scope") == "pooled"};
  }
  return device;
}

Device parse_device(const nlohmann::json& document) {
  const JsonObject root(document, "", device_document_fields);
  root.object("device");  // the document's own checks: an object, present
  return read_device(document.at("device"), "device");
}

Device load_device_file(const std::string& path) {
  Device device = parse_json_file(path, [&](const nlohmann::json& document) { return parse_device(document); });
  device.origin = path;
  return device;
}

std::string builtin_device_names(const std::string& data_dir) { return builtin_list(data_dir, "devices"); }

std::string device_alias_names() {
  std::string out;
  for (const Alias& a : aliases)
    out.append(out.empty() ? "" : ", ").append(a.name).append(" = ").append(a.file);
  return out;
}

Device load_named_device(const std::string& name, const std::string& base_dir, const std::string& data_dir) {
  std::filesystem::path file;
  if (names_a_path(name)) {
    file = path_from(name, base_dir);
  } else {
    std::string stem = name;
    for (const Alias& a : aliases) {
      if (a.name == name) stem = std::string(a.file);
    }
    file = builtin_dir(data_dir, "devices") / (stem + ".json");
    std::error_code ec;
    if (name.empty() || !std::filesystem::is_regular_file(file, ec)) {
      throw ScenarioError("unknown device '" + name + "' (built-in: " + builtin_device_names(data_dir) +
                          "; old names: " + device_alias_names() + "; or a path to a .json device file)");
    }
  }
  Device device = load_device_file(file.string());
  if (!names_a_path(name)) {
    device.origin = "scenarios/devices/" + file.filename().string();  // the same on every machine
  }
  return device;
}

std::string device_file_with_fit(const std::string& text, const Device& fitted) {
  if (!fitted.fit) throw ScenarioError("device_file_with_fit: " + fitted.name + " has no fit to write");
  parse_device(parse_json_text(text));
  static constexpr std::array<std::string_view, 9> replaced{"\"efficiency\"",
                                                            "\"tensor_efficiency\"",
                                                            "\"memory_efficiency\"",
                                                            "\"half_efficiency_flops\"",
                                                            "\"grouped_half_channels\"",
                                                            "\"conv_tensor_rate\"",
                                                            "\"conv_tf32_rate\"",
                                                            "\"gemm_tf32_rate\"",
                                                            "\"fit\""};
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find_first_not_of(' ');
    const std::string_view body =
        first == std::string::npos ? std::string_view{} : std::string_view(line).substr(first);
    if (std::any_of(replaced.begin(), replaced.end(), [&](std::string_view key) { return body.starts_with(key); })) {
      continue;
    }
    lines.push_back(line);
  }
  // the device object closes on the second-to-last "}" line; the fields go before it
  std::size_t close = lines.size();
  for (int braces = 0; close-- > 0;) {
    if (lines[close].find_first_not_of(' ') != std::string::npos && lines[close].find('}') != std::string::npos &&
        ++braces == 2) {
      break;
    }
  }
  if (close == 0 || close >= lines.size())
    throw ScenarioError(fitted.name + ": not a device file laid out one field a line");
  std::string& last = lines[close - 1];
  while (!last.empty() && (last.back() == ',' || last.back() == ' '))
    last.pop_back();
  last += ',';
  char buffer[1024];
  const DeviceFit& f = *fitted.fit;
  std::snprintf(
      buffer, sizeof buffer,
      "    \"efficiency\": %.4g,\n    \"tensor_efficiency\": %.4g,\n    \"memory_efficiency\": %.4g,\n"
      "    \"half_efficiency_flops\": %.4g,\n    \"grouped_half_channels\": %.4g,\n    \"conv_tensor_rate\": %.4g,\n"
      "    \"conv_tf32_rate\": %.4g,\n    \"gemm_tf32_rate\": %.4g,\n    \"fit\": {\"by\": %s, \"rows\": %lld, "
      "\"median_error\": %.4g, \"scope\": \"%s\"}",
      fitted.efficiency, fitted.tensor_efficiency, fitted.memory_efficiency, fitted.half_efficiency_flops,
      fitted.grouped_half_channels, fitted.conv_tensor_rate, fitted.conv_tf32_rate, fitted.gemm_tf32_rate,
      nlohmann::json(f.by).dump().c_str(), f.rows, f.median_error, f.pooled ? "pooled" : "device");
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(close), buffer);
  std::string out;
  for (const std::string& line : lines)
    out += line + '\n';
  parse_device(parse_json_text(out));  // what is written must load
  return out;
}

std::string device_fields_markdown() { return fields_markdown("device", device_fields); }

}  // namespace dtsim
