// The table of published training throughputs (validation/published/measurements.csv): one row per measurement of a
// real run (hardware, software, model, precision, per-device batch, devices, measured throughput, source), each in the
// fit or the test split. Read strictly: a row without a source, a split other than fit/test, a number that does not
// parse or a repeated id is a ScenarioError naming the file, line and column.
#pragma once

#include <string>
#include <vector>

namespace dtsim {

struct PublishedRow {
  std::string id;
  std::string device;  // as the source names it (canonicalised, e.g. a100-sxm4-80gb)
  int device_count = 1;
  int nodes = 1;
  std::string interconnect;
  std::string framework;
  std::string software_version;
  std::string model;          // as the source names it
  std::string precision;      // fp32, tf32, amp, bf16, fp8
  int batch_per_device = 0;   // 0: the source does not state it
  int sequence_length = 0;    // 0: not a sequence model or not stated
  std::string memory_format;  // nchw or nhwc for a convolutional network, "" otherwise
  int accumulation = 1;       // micro-batches per optimizer step (gradient accumulation) as the source states; 1: none
  double throughput = 0;
  std::string throughput_unit;  // e.g. "images/s total"
  std::string source_url;
  std::string source_locator;
  std::string notes;
  std::string split;  // "fit" or "test"
  int line = 0;       // in the file, for messages
};

// The columns, in order, that the file's header must name.
const std::vector<std::string>& published_columns();

std::vector<PublishedRow> load_published_table(const std::string& path);

}  // namespace dtsim
