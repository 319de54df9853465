// Shared by `dtsim collective` and `dtsim compare`: the network flags and running one schedule on a backend.
#pragma once

#include <string>

#include "algorithms/registry.hpp"
#include "cli/flags.hpp"
#include "reports/collective_report.hpp"

namespace dtsim::cli {

struct RunSettings {
  AlgorithmOptions algorithm;
  AlphaBetaGamma cost;
  std::string backend;        // "simgrid" or "analytical"
  std::string network_model;  // "CM02" or "LV08"
  bool real_payload = false;
};

// Reads --bandwidth, --latency, --reduce-rate, --backend, --network-model, --servers and --ps-placement.
RunSettings parse_run_settings(const Flags& flags);

// Builds the algorithm's schedule; an option it cannot use is a UsageError naming the option's flag, a schedule too
// large to build one naming --ranks.
Schedule build_schedule(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                        const AlgorithmOptions& options);

// Times the schedule on the chosen backend and fills in everything a report needs.
CollectiveRun run_schedule(const Schedule& schedule, const RunSettings& settings);

}  // namespace dtsim::cli
