// The table of published collective measurements (validation/published/collectives.csv): nccl-tests and rccl-tests
// results by system, collective and message size, each with its source and in the fit or the test split. Read
// strictly: a missing source, an unknown collective, GPUs that are not nodes x GPUs per node, a row with no measured
// figure, a number that does not parse or a repeated id is a ScenarioError naming the file, line and column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim {

struct CollectiveMeasurement {
  std::string id;
  std::string system;  // as the source names it
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string interconnect;
  std::string collective;  // allreduce, allgather, reduce_scatter, alltoall, broadcast or reduce
  std::uint64_t size_bytes = 0;
  // nccl-tests' figures, 0 where the source does not give them: algbw = size / time; busbw = algbw x the
  // collective's factor (allreduce 2(n-1)/n, allgather, reduce_scatter and alltoall (n-1)/n, broadcast and reduce 1)
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  double time_us = 0;
  std::string library;
  std::string library_version;
  std::string source_url;
  std::string note;
  std::string split;  // "fit" or "test"
  int line = 0;
};

// The columns, in order, that the file's header must name.
const std::vector<std::string>& collective_table_columns();

std::vector<CollectiveMeasurement> load_collective_table(const std::string& path);

// nccl-tests' bus-bandwidth factor of a collective over n ranks (see CollectiveMeasurement).
double bus_factor(const std::string& collective, int ranks);

}  // namespace dtsim
