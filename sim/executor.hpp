// What every executor of a Schedule returns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/schedule.hpp"
#include "models/variability.hpp"

namespace dtsim {

// What a run did and when, for traces and link utilisation; recorded only when asked for.
struct TransferRecord {  // one message on the network (ranks are schedule positions)
  std::int32_t src = 0;
  std::int32_t dst = 0;
  std::uint64_t bytes = 0;
  double start_s = 0.0;
  double end_s = 0.0;
};
enum class SpanKind : std::uint32_t {
  step,
  reduce,
  forward,
  backward,
  optimizer,
  allreduce,
  input_stall,
  gradient,  // forward and backward of one batch (dtsim train)
  exchange,  // push a gradient to the parameter server and pull the weights (dtsim train)
};
const char* to_string(SpanKind kind);
struct SpanRecord {  // one interval of a rank's timeline
  std::int32_t rank = 0;
  SpanKind kind = SpanKind::step;
  std::uint64_t bytes = 0;  // step: bytes the rank received in it; allreduce: the bucket's bytes
  double start_s = 0.0;
  double end_s = 0.0;
};
struct RunTrace {
  std::vector<TransferRecord> transfers;
  std::vector<SpanRecord> spans;
};

struct ExecutionResult {
  double time_s = 0.0;                // simulated completion time of the last rank
  std::vector<double> rank_finish_s;  // per rank
  std::uint64_t messages = 0;
  std::uint64_t bytes_sent = 0;
  // Real-payload mode only: whether every rank's buffer equals the expected sum, and the largest deviation.
  bool payload_checked = false;
  bool payload_ok = false;
  double payload_max_abs_error = 0.0;
  // What the simulation itself cost: wall-clock seconds and the peak resident memory of the process that ran it
  // (for SimGrid, the forked child).
  double wall_s = 0.0;
  double setup_wall_s = 0.0;  // of wall_s, building the platform, routes and mailboxes (SimGrid)
  std::uint64_t peak_rss_bytes = 0;
  // Flow executor: the instants at which it handled events, and the global steps it skipped as repetitions.
  std::uint64_t event_batches = 0;
  std::uint64_t skipped_steps = 0;
  std::uint64_t rank_classes = 0;  // flow executor: classes of ranks simulated in their stead (0: every rank)
  RunTrace trace;                  // filled when the executor was asked to record
};

// A data-parallel training step as every rank runs it: a compute actor (input, forward, backward layer by layer,
// optimizer) and a communication actor that allreduces gradient buckets, each as soon as it is ready, overlapping the
// rest of backward (the shape of PyTorch DDP's and Horovod's communication threads).
struct TrainingProgram {
  std::vector<double> forward_s;   // per layer, in forward order
  std::vector<double> backward_s;  // per layer, in forward order (run from the last layer down)
  double optimizer_s = 0;
  // Bucket b's gradients are complete once backward has finished layer bucket_ready_after[b] (a forward-order
  // index); buckets are listed in the order they become ready.
  std::vector<std::size_t> bucket_ready_after;
  std::vector<Schedule> buckets;  // each bucket's allreduce, all over the same ranks (times reduce_channels)
  // A collective library's channels: each bucket's Schedule covers reduce_channels x ranks positions, position
  // c x ranks + r being rank r's c-th reduction unit (rings of one call that run at once, each on its own unit)
  int reduce_channels = 1;
  // Helpers that reduce in switches (nvls, sharp: Schedule::switch_helpers): units of their own after the ranks'
  // reduction units, unit reduce_channels x ranks + h running on endpoint helper_endpoints[h] (a switch); rank 0
  // starts them with each of its buckets. Empty: none.
  std::vector<int> helper_endpoints;
  // A transport on the processor that computes (StageStep::bucket_wire_s): per bucket, the time a rank's bytes take
  // on its NIC at line rate, and the two rates the compute and the transport keep while both run (NodeSpec). Empty:
  // they do not slow each other.
  std::vector<double> bucket_wire_s;
  double compute_rate_while_transporting = 1;
  double transport_rate_while_computing = 1;
  // Micro-batches per step (gradient accumulation): forward and backward run this many times, the buckets' reductions
  // start in the last backward, and the optimizer runs once
  int micro_batches = 1;
  bool overlap = true;                  // false: the allreduces start only after the whole backward pass
  double fusion_cycle_s = 0;            // > 0 (Horovod): a ready bucket starts at the next multiple of this cycle
  double batch_s = 0;                   // input pipeline: seconds to produce one local batch (0: no pipeline)
  int prefetch = 2;                     // batches the pipeline may prepare ahead, >= 1
  int steps = 3;                        // simulated steps; the last one is reported (earlier ones fill the pipeline)
  const ComputeNoise* noise = nullptr;  // per-rank variability (StepProgram::noise); null: none
  // Called with the fraction of the run's reductions done, each time it grows by a thousandth (StepProgram::progress)
  const std::function<void(double)>* progress = nullptr;
};

struct TrainingResult {
  double step_s = 0;  // the last step of the slowest rank
  // that rank's last step: step_s = input_stall_s + forward_s + backward_s + exposed_comm_s + optimizer_s
  double input_stall_s = 0;
  double forward_s = 0;
  double backward_s = 0;
  double exposed_comm_s = 0;
  double optimizer_s = 0;
  double comm_s = 0;               // time its communication actor spent in allreduces during that step
  double wall_s = 0;               // what the simulation cost
  std::uint64_t rank_classes = 0;  // flow executor: classes of ranks simulated in their stead (0: every rank)
};

// The time rank 0's bytes in `bucket` take on a NIC of `nic_Bps` at line rate (the larger of those it sends and
// receives), over its `channels` copies (channel c's rank 0 at position c x ranks): StageStep::bucket_wire_s.
double bucket_wire_seconds(const Schedule& bucket, int channels, int ranks, double nic_Bps);

// What is wrong with a transport on the processor that computes (TrainingProgram::bucket_wire_s, StageStep's): one
// wire time per bucket or none, each finite and >= 0, both rates in (0, 1]; empty when nothing is.
std::string check_transport_sharing(const std::vector<double>& bucket_wire_s, std::size_t buckets,
                                    double compute_rate_while_transporting, double transport_rate_while_computing);

// Where each reduction unit of a training program with `channels` units per rank runs: unit c x ranks + r on rank
// r's accelerator (accelerator_of: by rank; empty stays empty).
std::vector<int> channel_unit_accelerators(const std::vector<int>& accelerator_of, int channels);
// Every unit of a training program's network, where it runs: the channels' units on their ranks' accelerators
// (channel_unit_accelerators), then its switch helpers on their endpoints (empty accelerator_of stays empty: the
// star).
std::vector<int> training_unit_accelerators(const TrainingProgram& program, const std::vector<int>& accelerator_of);
// The units a training program over `ranks` ranks runs on: reduce_channels x ranks, and its switch helpers.
int training_units(const TrainingProgram& program, int ranks);

// The first inconsistency of a training program over `ranks` ranks (placed on `placed` accelerators when > 0), or
// an empty string.
std::string check_training_program(const TrainingProgram& program, int ranks, std::size_t placed);

// Which executor times a schedule or a training step: SimGrid (every message) or flow-level (sim/flow_executor).
// analytical: the flow engine without contention (FlowOptions::contention = false), every message as alone on its
// route: what the step would take if nothing shared a link.
enum class Backend : std::uint8_t { simgrid, flow, analytical };
const char* to_string(Backend backend);
// "auto" backend choice (predict, compare, collective): SimGrid up to this many ranks, where a training step of 25
// bucket allreduces takes it about half a second and it records traces and link loads; the flow executor above,
// where SimGrid's cost per message grows to seconds and minutes (at 256 V100s: 8 s for a ring step, 35 s for a
// parameter server's; the two executors agree within 1%: tests/test_flow.cpp, tests/test_training.cpp).
constexpr int auto_flow_above_ranks = 64;
inline Backend auto_backend(int ranks) { return ranks > auto_flow_above_ranks ? Backend::flow : Backend::simgrid; }

// What running a schedule will hold in memory, estimated before it runs from the schedule's size: the schedule as the
// executor holds it (8 bytes an op; SimGrid and the analytical executor expand a compact schedule and hold every op),
// and per rank and per op what each executor keeps (the coefficients are fitted to peak RSS measured on the ring:
// docs/benchmarks.md).
// `real_payload` (SimGrid's real-payload mode) adds estimated_payload_bytes.
enum class RunMemory : std::uint8_t { simgrid, flow, analytical };
std::uint64_t estimated_run_bytes(const Schedule& schedule, RunMemory executor, bool real_payload = false);
// What SimGrid's real-payload mode holds besides: every rank's buffer of schedule.bytes, the copies of the chunks its
// largest step sends (each owned by its receiver until that step ends), and the check's double-precision sums of the
// largest chunk. Saturates at the largest std::uint64_t.
std::uint64_t estimated_payload_bytes(const Schedule& schedule);
// The schedule's own part of that: its ops, rank index, chunks, spans and repeats, as `executor` holds them (the
// flow executor the schedule as it is, the others its expanded form).
std::uint64_t estimated_schedule_bytes(const Schedule& schedule, RunMemory executor);
// The ops `executor` holds: the flow executor the schedule's own, the others those of its expanded form.
std::uint64_t executed_op_count(const Schedule& schedule, RunMemory executor);
// MemAvailable of /proc/meminfo, or 0 where it cannot be read.
std::uint64_t available_memory_bytes();

// An estimate of the wall-clock seconds SimGrid takes for a schedule: its messages (repetitions of compact steps
// counted) times 2.5 us (ring on the star, 256 and 512 ranks: 2.5 and 2.9 us a message) plus 0.6 ns for every
// message that may be in flight with it, each rank's largest step's sends summed over the ranks: SimGrid's sharing
// solver slows as concurrent messages grow (measured on the star, 64 MB: direct at 128, 256 and 512 ranks 0.37, 9.5
// and 88 s, estimated 0.4, 5.4 and 83 s; ps with 64 ranks and 250, 500 and 1000 servers 0.43, 1.2 and 6.1 s,
// estimated 0.4, 2.9 and 10 s; 20,000 servers ran for more than 10 minutes, estimated 3,900 s). Runs estimated above
// simgrid_time_limit_s are refused up front (collective, compare) unless forced.
double estimated_simgrid_seconds(const Schedule& schedule);
constexpr double simgrid_time_limit_s = 300;
// SimGrid's least cost of a message (estimated_simgrid_seconds), also what train's estimate charges.
constexpr double simgrid_seconds_per_message = 2.5e-6;

// Peak resident set size of the calling process so far.
std::uint64_t peak_rss_bytes();

}  // namespace dtsim
