// What every executor of a Schedule returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim {

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
};

// Peak resident set size of the calling process so far.
std::uint64_t peak_rss_bytes();

}  // namespace dtsim
