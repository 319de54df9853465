#include "reports/result_csv.hpp"

#include "reports/csv_table.hpp"
#include "reports/predict_report.hpp"

namespace dtsim {

std::vector<std::string> predict_csv_columns() {
  return {"accelerators",
          "nodes",
          "algorithm",
          "local_batch",
          "global_batch",
          "fits",
          "step_s",
          "samples_per_s",
          "speedup",
          "efficiency",
          "forward_s",
          "backward_s",
          "exposed_comm_s",
          "input_stall_s",
          "optimizer_s",
          "comm_s",
          "memory_bytes",
          "backend",
          "bottleneck",
          "samples_per_s_low",
          "samples_per_s_high",
          "speedup_low",
          "speedup_high",
          "reductions",
          "tokens_per_s"};
}

namespace {

std::string range_low(const std::optional<ValueRange>& r) { return r ? csv_number(r->first) : ""; }
std::string range_high(const std::optional<ValueRange>& r) { return r ? csv_number(r->second) : ""; }
// samples/s x the sequence of a language model that fits; empty otherwise
std::string tokens_cell(bool fits, double samples_per_s, int tokens_per_sample) {
  return fits && tokens_per_sample > 0 ? csv_number(samples_per_s * tokens_per_sample) : "";
}

}  // namespace

std::vector<std::string> predict_csv_cells(const Prediction& p, const std::optional<ValueRange>& samples,
                                           const std::optional<ValueRange>& speedup, int tokens_per_sample) {
  const TrainingResult& s = p.step;
  return {csv_integer(p.accelerators),
          csv_integer(p.nodes),
          csv_text(p.algorithm),
          csv_integer(p.local_batch),
          csv_integer(p.global_batch),
          csv_bool(p.fits),
          csv_number(s.step_s),
          csv_number(p.samples_per_s),
          csv_number(p.speedup),
          csv_number(p.efficiency),
          csv_number(s.forward_s),
          csv_number(s.backward_s),
          csv_number(s.exposed_comm_s),
          csv_number(s.input_stall_s),
          csv_number(s.optimizer_s),
          csv_number(s.comm_s),
          csv_number(p.memory.total_bytes()),
          csv_text(to_string(p.backend)),
          csv_text(p.bottleneck),
          range_low(samples),
          range_high(samples),
          range_low(speedup),
          range_high(speedup),
          csv_text(reductions_cell(p.reductions)),
          tokens_cell(p.fits, p.samples_per_s, tokens_per_sample)};
}

std::string predict_csv(const std::vector<Prediction>& results) {
  CsvTable table(predict_csv_columns());
  for (const Prediction& p : results)
    table.add_row(predict_csv_cells(p));
  return table.str();
}

std::vector<std::string> parallel_csv_columns() {
  return {"accelerators",
          "nodes",
          "data",
          "context",
          "tensor",
          "pipeline",
          "micro_batches",
          "schedule",
          "sharding",
          "expert",
          "async_tensor",
          "replica_batch",
          "global_batch",
          "micro_batch",
          "fits",
          "step_s",
          "time_per_sample_s",
          "samples_per_s",
          "compute_s",
          "tensor_comm_s",
          "expert_comm_s",
          "context_comm_s",
          "bubble_s",
          "bubble_fraction",
          "data_exposed_s",
          "input_stall_s",
          "optimizer_s",
          "data_comm_s",
          "memory_bytes",
          "data_parallel_sent_bytes",
          "tensor_parallel_sent_bytes",
          "pipeline_sent_bytes",
          "expert_parallel_sent_bytes",
          "context_parallel_sent_bytes",
          "bottleneck",
          "samples_per_s_low",
          "samples_per_s_high",
          "tokens_per_s"};
}

std::vector<std::string> parallel_csv_cells(const ParallelPrediction& p, const std::optional<ValueRange>& samples,
                                            int tokens_per_sample) {
  const ParallelLayout& l = p.layout;
  return {csv_integer(p.accelerators),
          csv_integer(p.nodes),
          csv_integer(l.data),
          csv_integer(l.context),
          csv_integer(l.tensor),
          csv_integer(l.pipeline),
          csv_integer(l.micro_batches),
          csv_text(to_string(l.schedule)),
          csv_text(to_string(l.sharding)),
          csv_integer(l.expert),
          csv_bool(l.async_tensor),
          csv_integer(p.replica_batch),
          csv_integer(p.global_batch),
          csv_number(p.micro_batch),
          csv_bool(p.fits),
          csv_number(p.step_s),
          csv_number(p.fits && p.global_batch > 0 ? p.step_s / p.global_batch : 0.0),
          csv_number(p.samples_per_s),
          csv_number(p.compute_s),
          csv_number(p.tensor_comm_s),
          csv_number(p.expert_comm_s),
          csv_number(p.context_comm_s),
          csv_number(p.bubble_s),
          csv_number(p.bubble_fraction),
          csv_number(p.data_exposed_s),
          csv_number(p.input_stall_s),
          csv_number(p.optimizer_s),
          csv_number(p.data_comm_s),
          csv_number(p.memory.total_bytes()),
          csv_number(p.volume.data_bytes),
          csv_number(p.volume.tensor_bytes),
          csv_number(p.volume.pipeline_bytes),
          csv_number(p.volume.expert_bytes),
          csv_number(p.volume.context_bytes),
          csv_text(p.bottleneck),
          range_low(samples),
          range_high(samples),
          tokens_cell(p.fits, p.samples_per_s, tokens_per_sample)};
}

std::string parallel_csv(const std::vector<ParallelPrediction>& results) {
  CsvTable table(parallel_csv_columns());
  for (const ParallelPrediction& p : results)
    table.add_row(parallel_csv_cells(p));
  return table.str();
}

std::vector<std::string> collective_csv_columns() {
  return {"algorithm", "collective",    "ranks",         "helper_ranks", "bytes",     "backend",
          "network",   "bandwidth_Bps", "latency_s",     "time_s",       "algbw_Bps", "busbw_Bps",
          "messages",  "sent_bytes",    "closed_form_s", "sim_wall_s",   "protocol",  "channels"};
}

std::vector<std::string> collective_csv_cells(const CollectiveRun& run) {
  return {csv_text(run.algorithm),
          csv_text(run.collective),
          csv_integer(run.ranks),
          csv_integer(run.helper_ranks),
          csv_integer(static_cast<long long>(run.bytes)),
          csv_text(run.backend),
          csv_text(run.cluster.empty() ? "star" : run.cluster),
          run.cluster.empty() ? csv_number(run.cost.bandwidth_Bps) : "",
          run.cluster.empty() ? csv_number(run.cost.alpha_s) : "",
          csv_number(run.result.time_s),
          csv_number(algbw_Bps(run)),
          csv_number(busbw_Bps(run)),
          csv_integer(static_cast<long long>(run.result.messages)),
          csv_integer(static_cast<long long>(run.result.bytes_sent)),
          run.closed_form_s >= 0 ? csv_number(run.closed_form_s) : "",
          csv_number(run.result.wall_s),
          csv_text(to_string(run.protocol)),
          csv_integer(run.channels)};
}

std::string collective_csv(const CollectiveRun& run) {
  CsvTable table(collective_csv_columns());
  table.add_row(collective_csv_cells(run));
  return table.str();
}

}  // namespace dtsim
