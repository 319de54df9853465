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
};

}  // namespace dtsim
