#include "scenarios/collective_table.hpp"

#include <set>

#include "scenarios/csv_table.hpp"

namespace dtsim {

const std::vector<std::string>& collective_table_columns() {
  static const std::vector<std::string> columns{
      "id",         "system",     "gpus",    "nodes",   "gpus_per_node",   "interconnect", "collective", "size_bytes",
      "algbw_GBps", "busbw_GBps", "time_us", "library", "library_version", "source_url",   "note",       "split"};
  return columns;
}

double bus_factor(const std::string& collective, int ranks) {
  const double n = ranks;
  if (collective == "allreduce") return 2 * (n - 1) / n;
  if (collective == "allgather" || collective == "reduce_scatter" || collective == "alltoall") return (n - 1) / n;
  return 1;
}

std::vector<CollectiveMeasurement> load_collective_table(const std::string& path) {
  static const std::set<std::string> collectives{"allreduce", "allgather", "reduce_scatter",
                                                 "alltoall",  "broadcast", "reduce"};
  std::vector<CollectiveMeasurement> rows;
  read_csv_table(path, collective_table_columns(), [&](const CsvRecord& f) {
    CollectiveMeasurement r;
    r.line = f.line;
    r.id = f.fields[0];
    r.system = f.fields[1];
    if (r.system.empty()) throw ScenarioError(f.where(1) + ": empty");
    r.gpus = csv_whole(f, 2, 1, 1 << 20);
    r.nodes = csv_whole(f, 3, 1, 1 << 20);
    r.gpus_per_node = csv_whole(f, 4, 1, 1024);
    if (r.gpus != r.nodes * r.gpus_per_node) {
      throw ScenarioError(f.where(2) + ": " + std::to_string(r.gpus) + " is not nodes x gpus_per_node (" +
                          std::to_string(r.nodes * r.gpus_per_node) + ")");
    }
    r.interconnect = f.fields[5];
    r.collective = f.fields[6];
    if (collectives.count(r.collective) == 0) {
      throw ScenarioError(f.where(6) +
                          ": expected allreduce, allgather, reduce_scatter, alltoall, broadcast or reduce, got '" +
                          r.collective + "'");
    }
    r.size_bytes = csv_whole<std::uint64_t>(f, 7, 1, std::uint64_t{1} << 50);
    r.algbw_GBps = csv_positive(f, 8, true);
    r.busbw_GBps = csv_positive(f, 9, true);
    r.time_us = csv_positive(f, 10, true);
    if (r.algbw_GBps == 0 && r.busbw_GBps == 0 && r.time_us == 0) {
      throw ScenarioError(f.where(8) + ": a row needs a measured algbw_GBps, busbw_GBps or time_us");
    }
    r.library = f.fields[11];
    if (r.library.empty()) throw ScenarioError(f.where(11) + ": every row names its library (NCCL, RCCL, ...)");
    r.library_version = f.fields[12];
    r.source_url = csv_source_url(f, 13);
    r.note = csv_source_locator(f, 14);
    r.split = csv_split(f, 15);
    rows.push_back(std::move(r));
  });
  return rows;
}

}  // namespace dtsim
