// The table of published training throughputs (validation/published/measurements.csv): one row per measurement of a
// real run (hardware, software, model, precision, per-device batch, devices, measured throughput, source), each in the
// fit or the test split. Read strictly: a row without a source, a split other than fit/test, a number that does not
// parse or a repeated id is a ScenarioError naming the file, line and column.
#pragma once

#include <string>
#include <vector>

namespace dtsim {

// How a run laid its devices out (the `layout` column), for rows that name one: a space-separated list of
// `fsdp=N` (parameters, gradients and optimizer states sharded over N data-parallel ranks: FSDP's full shard, ZeRO-3),
// `hsdp=N` (sharded over N, replicated over the rest), `tp=N` (tensor parallelism), `pp=N` (a pipeline of N stages),
// `schedule=1f1b|interleaved-1f1b|gpipe`, `micro=N` (micro-batches a step), `cp=N` (context parallelism) and
// `async-tp` (tensor parallelism's communication overlapped with its matrix products). Blank: plain data parallelism
// over every device (DDP, Horovod).
struct PublishedLayout {
  bool given = false;
  int fsdp = 0;  // data-parallel ranks the states are sharded over (0: none)
  int hsdp = 0;  // the shard group of hybrid sharding (0: none)
  int tensor = 1;
  int pipeline = 1;
  int context = 1;
  int micro_batches = 0;  // 0: not stated
  std::string schedule;   // "" when not stated
  bool async_tp = false;
  int model_parallel() const { return tensor * pipeline * context; }
};

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
  PublishedLayout layout;     // rows with a layout: batch_per_device is the batch of a data-parallel rank
  std::string recompute;      // none, selective, selective_op, selective_layer, full; "" not stated
  std::string compiled;       // yes, no; "" not stated
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
