#include "scenarios/published_file.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "scenarios/csv_table.hpp"

namespace dtsim {

const std::vector<std::string>& published_columns() {
  static const std::vector<std::string> columns{"id",
                                                "device",
                                                "device_count",
                                                "nodes",
                                                "interconnect",
                                                "framework",
                                                "software_version",
                                                "model",
                                                "precision",
                                                "batch_per_device",
                                                "sequence_length",
                                                "memory_format",
                                                "accumulation",
                                                "layout",
                                                "recompute",
                                                "compiled",
                                                "throughput",
                                                "throughput_unit",
                                                "source_url",
                                                "source_locator",
                                                "notes",
                                                "split"};
  return columns;
}

namespace {

// The `layout` column (PublishedLayout): every token known, every count a whole number from 1, and the ranks it names
// adding up to the row's devices.
PublishedLayout parse_layout(const CsvRecord& f, std::size_t i, int devices) {
  PublishedLayout l;
  const std::string& text = f.fields[i];
  std::istringstream words(text);
  std::string word;
  const auto count = [&](const std::string& value) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || n < 1 || n > (1 << 20)) {
      throw ScenarioError(f.where(i) + ": expected a whole number from 1 in '" + word + "'");
    }
    return n;
  };
  static const std::map<std::string, int PublishedLayout::*> counts{
      {"fsdp", &PublishedLayout::fsdp},  {"hsdp", &PublishedLayout::hsdp},
      {"tp", &PublishedLayout::tensor},  {"pp", &PublishedLayout::pipeline},
      {"cp", &PublishedLayout::context}, {"micro", &PublishedLayout::micro_batches}};
  while (words >> word) {
    l.given = true;
    const std::size_t eq = word.find('=');
    const std::string key = word.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    const auto counted = counts.find(key);
    if (word == "async-tp") {
      l.async_tp = true;
    } else if (eq != std::string::npos && counted != counts.end()) {
      l.*(counted->second) = count(value);
    } else if (eq != std::string::npos && key == "schedule") {
      if (value != "1f1b" && value != "interleaved-1f1b" && value != "gpipe") {
        throw ScenarioError(f.where(i) + ": expected schedule=1f1b, interleaved-1f1b or gpipe, got '" + word + "'");
      }
      l.schedule = value;
    } else {
      throw ScenarioError(f.where(i) +
                          ": expected fsdp=N, hsdp=N, tp=N, pp=N, cp=N, micro=N, schedule=S or async-tp, got '" + word +
                          "'");
    }
  }
  if (!l.given) return l;
  if (l.fsdp > 0 && l.hsdp > 0) throw ScenarioError(f.where(i) + ": fsdp and hsdp together");
  const long long named = static_cast<long long>(std::max({l.fsdp, l.hsdp, 1})) * l.model_parallel();
  if (l.fsdp > 0 ? named != devices : devices % named != 0) {
    throw ScenarioError(f.where(i) + ": '" + text + "' lays out " + std::to_string(named) + " devices, the row has " +
                        std::to_string(devices) + (l.fsdp > 0 ? "" : " (not a multiple)"));
  }
  return l;
}

}  // namespace

std::vector<PublishedRow> load_published_table(const std::string& path) {
  std::vector<PublishedRow> rows;
  read_csv_table(path, published_columns(), [&](const CsvRecord& f) {
    PublishedRow r;
    r.line = f.line;
    r.id = f.fields[0];
    r.device = f.fields[1];
    r.device_count = csv_whole(f, 2, 1, 1 << 20);
    r.nodes = csv_whole(f, 3, 1, 1 << 20);
    r.interconnect = f.fields[4];
    r.framework = f.fields[5];
    r.software_version = f.fields[6];
    r.model = f.fields[7];
    r.precision = f.fields[8];
    static const std::set<std::string> precisions{"fp32", "tf32", "amp", "bf16", "fp8"};
    if (precisions.count(r.precision) == 0) {
      throw ScenarioError(f.where(8) + ": expected fp32, tf32, amp, bf16 or fp8, got '" + r.precision + "'");
    }
    r.batch_per_device = csv_whole(f, 9, 1, 1 << 24, true);
    r.sequence_length = csv_whole(f, 10, 1, 1 << 24, true);
    r.memory_format = f.fields[11];
    if (!r.memory_format.empty() && r.memory_format != "nchw" && r.memory_format != "nhwc") {
      throw ScenarioError(f.where(11) + ": expected nchw, nhwc or nothing, got '" + r.memory_format + "'");
    }
    r.accumulation = std::max(1, csv_whole(f, 12, 1, 1 << 24, true));  // blank: none stated
    r.layout = parse_layout(f, 13, r.device_count);
    r.recompute = f.fields[14];
    static const std::set<std::string> recomputes{"", "none", "selective", "selective_op", "selective_layer", "full"};
    if (recomputes.count(r.recompute) == 0) {
      throw ScenarioError(f.where(14) +
                          ": expected none, selective, selective_op, selective_layer, full or nothing, got '" +
                          r.recompute + "'");
    }
    r.compiled = f.fields[15];
    if (!r.compiled.empty() && r.compiled != "yes" && r.compiled != "no") {
      throw ScenarioError(f.where(15) + ": expected yes, no or nothing, got '" + r.compiled + "'");
    }
    r.throughput = csv_positive(f, 16);
    r.throughput_unit = f.fields[17];
    r.source_url = csv_source_url(f, 18);
    r.source_locator = csv_source_locator(f, 19);
    r.notes = f.fields[20];
    r.split = csv_split(f, 21);
    rows.push_back(std::move(r));
  });
  return rows;
}

}  // namespace dtsim
