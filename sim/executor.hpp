// What every executor of a Schedule returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  RunTrace trace;  // filled when the executor was asked to record
};

// Peak resident set size of the calling process so far.
std::uint64_t peak_rss_bytes();

}  // namespace dtsim
