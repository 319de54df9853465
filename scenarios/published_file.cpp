#include "scenarios/published_file.hpp"

#include <algorithm>
#include <set>

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
                                                "throughput",
                                                "throughput_unit",
                                                "source_url",
                                                "source_locator",
                                                "notes",
                                                "split"};
  return columns;
}

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
    r.throughput = csv_positive(f, 13);
    r.throughput_unit = f.fields[14];
    r.source_url = csv_source_url(f, 15);
    r.source_locator = csv_source_locator(f, 16);
    r.notes = f.fields[17];
    r.split = csv_split(f, 18);
    rows.push_back(std::move(r));
  });
  return rows;
}

}  // namespace dtsim
