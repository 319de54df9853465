#include "sim/executor.hpp"

#include <sys/resource.h>
#include <cmath>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

namespace dtsim {

const char* to_string(SpanKind kind) {
  switch (kind) {
    case SpanKind::step: return "step";
    case SpanKind::reduce: return "reduce";
    case SpanKind::forward: return "forward";
    case SpanKind::backward: return "backward";
    case SpanKind::optimizer: return "optimizer";
    case SpanKind::allreduce: return "allreduce";
    case SpanKind::input_stall: return "input stall";
    case SpanKind::gradient: return "gradient";
    case SpanKind::exchange: return "push and pull";
  }
  return "?";
}

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::simgrid: return "simgrid";
    case Backend::flow: return "flow";
    case Backend::analytical: return "analytical";
  }
  return "?";
}

std::vector<int> channel_unit_accelerators(const std::vector<int>& accelerator_of, int channels) {
  std::vector<int> out;
  out.reserve(accelerator_of.size() * static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c)
    out.insert(out.end(), accelerator_of.begin(), accelerator_of.end());
  return out;
}

std::vector<int> training_unit_accelerators(const TrainingProgram& program, const std::vector<int>& accelerator_of) {
  if (accelerator_of.empty()) return {};
  std::vector<int> out = channel_unit_accelerators(accelerator_of, program.reduce_channels);
  out.insert(out.end(), program.helper_endpoints.begin(), program.helper_endpoints.end());
  return out;
}

int training_units(const TrainingProgram& program, int ranks) {
  return ranks * program.reduce_channels + static_cast<int>(program.helper_endpoints.size());
}

double bucket_wire_seconds(const Schedule& bucket, int channels, int ranks, double nic_Bps) {
  RankTraffic traffic;
  for (int c = 0; c < channels; ++c) {
    const RankTraffic t = rank_traffic(bucket, c * ranks);
    traffic.sent_bytes += t.sent_bytes;
    traffic.received_bytes += t.received_bytes;
  }
  return static_cast<double>(std::max(traffic.sent_bytes, traffic.received_bytes)) / nic_Bps;
}

std::string check_transport_sharing(const std::vector<double>& bucket_wire_s, std::size_t buckets,
                                    double compute_rate_while_transporting, double transport_rate_while_computing) {
  if (!bucket_wire_s.empty() && bucket_wire_s.size() != buckets) return "one wire time per bucket, or none";
  for (const double wire_s : bucket_wire_s) {
    if (!(wire_s >= 0) || !std::isfinite(wire_s)) return "wire times must be finite and >= 0";
  }
  if (!(compute_rate_while_transporting > 0 && compute_rate_while_transporting <= 1) ||
      !(transport_rate_while_computing > 0 && transport_rate_while_computing <= 1)) {
    return "the rates compute and transport keep while both run must be in (0, 1]";
  }
  return {};
}

std::string check_training_program(const TrainingProgram& program, int ranks, std::size_t placed) {
  if (ranks < 1) return "needs at least 1 rank";
  if (program.forward_s.size() != program.backward_s.size()) {
    return "forward and backward times for different layer counts";
  }
  if (program.bucket_ready_after.size() != program.buckets.size()) return "one ready layer per bucket";
  if (program.reduce_channels < 1) return "reduce_channels >= 1";
  for (std::size_t b = 0; b < program.buckets.size(); ++b) {
    if (program.buckets[b].ranks != training_units(program, ranks)) return "bucket over other ranks";
    if (program.bucket_ready_after[b] >= program.backward_s.size() ||
        (b > 0 && program.bucket_ready_after[b] > program.bucket_ready_after[b - 1])) {
      return "buckets must become ready in backward order";
    }
  }
  if (program.steps < 1 || program.prefetch < 1) return "steps, prefetch >= 1";
  if (std::string problem =
          check_transport_sharing(program.bucket_wire_s, program.buckets.size(),
                                  program.compute_rate_while_transporting, program.transport_rate_while_computing);
      !problem.empty()) {
    return problem;
  }
  if (placed > 0 && placed != static_cast<std::size_t>(ranks)) {
    return std::to_string(ranks) + " ranks but " + std::to_string(placed) + " placed on the cluster";
  }
  return {};
}

std::uint64_t executed_op_count(const Schedule& schedule, RunMemory executor) {
  return executor == RunMemory::flow ? schedule.op_count() : expanded_op_count(schedule);
}

std::uint64_t estimated_schedule_bytes(const Schedule& schedule, RunMemory executor) {
  const std::uint64_t repeats = executor == RunMemory::flow ? schedule.repeats.size() : 0;
  return executed_op_count(schedule, executor) * sizeof(Op) +
         static_cast<std::uint64_t>(schedule.ranks) * sizeof(std::uint64_t) +
         schedule.chunks.size() * (sizeof(Chunk) + sizeof(Span)) + repeats * sizeof(StepRepeat);
}

std::uint64_t estimated_payload_bytes(const Schedule& schedule) {
  double in_flight = 0;  // by rank, its largest step's sends
  for (int r = 0; r < schedule.ranks; ++r) {
    double step = 0;
    double largest = 0;
    for (const Op& op : schedule.rank_ops(r)) {
      if (op.starts_step()) step = 0;
      if (op.kind() == OpKind::send) step += static_cast<double>(schedule.span_bytes(op.span()));
      largest = std::max(largest, step);
    }
    in_flight += largest;
  }
  double largest_chunk = 0;
  for (const Chunk& c : schedule.chunks)
    largest_chunk = std::max(largest_chunk, static_cast<double>(c.size_bytes));
  const double total = static_cast<double>(schedule.ranks) * static_cast<double>(schedule.bytes) + in_flight +
                       2 * largest_chunk;  // a double for each 4-byte float
  constexpr auto most = std::numeric_limits<std::uint64_t>::max();
  return total >= 1.8e19 ? most : static_cast<std::uint64_t>(total);  // (1.8e19: just below `most`)
}

std::uint64_t estimated_run_bytes(const Schedule& schedule, RunMemory executor, bool real_payload) {
  if (real_payload) {
    const std::uint64_t run = estimated_run_bytes(schedule, executor);
    const std::uint64_t payload = estimated_payload_bytes(schedule);
    constexpr auto most = std::numeric_limits<std::uint64_t>::max();
    return payload > most - run ? most : run + payload;
  }
  const auto ranks = static_cast<std::uint64_t>(schedule.ranks);
  // channels: distinct (sender, receiver) pairs, which SimGrid keeps a mailbox for
  std::uint64_t channels = 0;
  std::vector<int> last_sender(static_cast<std::size_t>(schedule.ranks), -1);  // by receiver: the last rank counted
  for (int r = 0; r < schedule.ranks; ++r) {
    for (const Op& op : schedule.rank_ops(r)) {
      if (op.kind() != OpKind::send) continue;
      int& last = last_sender[static_cast<std::size_t>(op.peer())];
      if (last != r) ++channels;
      last = r;
    }
  }
  const std::uint64_t schedule_bytes = estimated_schedule_bytes(schedule, executor);
  // fitted to peak RSS of `dtsim collective` (ring and direct, 64 to 4096 ranks; docs/benchmarks.md)
  switch (executor) {
    case RunMemory::simgrid: return 30'000'000 + schedule_bytes + channels * 2'500 + ranks * 16'000;
    case RunMemory::flow: return 35'000'000 + schedule_bytes + channels * 300 + ranks * 600;
    // (analytical: the step walker's channel queues, about 180 bytes a channel: direct at 1024 and 2048 ranks)
    case RunMemory::analytical: return 35'000'000 + schedule_bytes + channels * 200 + ranks * 200;
  }
  return schedule_bytes;
}

std::uint64_t available_memory_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "MemAvailable: %lu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

double estimated_simgrid_seconds(const Schedule& schedule) {
  constexpr double seconds_per_message_in_flight = 0.6e-9;
  double in_flight = 0;  // each rank's largest step's sends, summed over the ranks
  for (int r = 0; r < schedule.ranks; ++r) {
    std::uint64_t largest = 0, step = 0;
    for (const Op& op : schedule.rank_ops(r)) {
      if (op.starts_step()) step = 0;
      if (op.kind() == OpKind::send) largest = std::max(largest, ++step);
    }
    in_flight += static_cast<double>(largest);
  }
  // (compact schedules: each repeated step's sends counted again, without expanding)
  const auto messages = static_cast<double>(expanded_send_count(schedule));
  return messages * (simgrid_seconds_per_message + seconds_per_message_in_flight * in_flight);
}

}  // namespace dtsim
