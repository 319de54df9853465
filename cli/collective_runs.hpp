// Shared by `dtsim collective` and `dtsim compare`: the network flags and running one schedule on a backend.
#pragma once

#include <string>

#include "algorithms/registry.hpp"
#include "cli/flags.hpp"
#include "reports/collective_report.hpp"

namespace dtsim::cli {

// The algorithm-option flags that `collective`, `compare` and `verify` share.
inline constexpr std::array<FlagSpec, 5> option_flags{{
    {"servers", "S", "1", "ps: number of server shards, 1 to 1000000"},
    {"ps-placement", "WHERE", "hosts", "ps: servers on hosts of their own (hosts) or on the first S ranks (colocated)"},
    {"ranks-per-node", "G", "1", "hierarchical: ranks per node, dividing the rank count"},
    {"inter", "NAME", "ring",
     "hierarchical: the allreduce across nodes (ring, tree, pipelined-tree, dbtree, butterfly, rabenseifner, direct)"},
    {"segment-size", "BYTES", "1MiB", "pipelined-tree, dbtree: largest segment per pipeline step, at least 1 byte"},
}};

// The network and backend flags of `collective` and `compare`, then the option flags.
inline constexpr auto run_flags =
    join_flags(std::array<FlagSpec, 5>{{
                   {"bandwidth", "RATE", "10Gbps", "each host's link bandwidth, e.g. 10Gbps, 1.25GBps"},
                   {"latency", "TIME", "1us", "one-way latency between two hosts (alpha), e.g. 1us, 0.5ms"},
                   {"reduce-rate", "RATE", "10GBps", "local reduction throughput (bytes summed per second)"},
                   {"backend", "NAME", "simgrid",
                    "simgrid (SimGrid flow-level network, links shared max-min) or analytical (no contention)"},
                   {"network-model", "NAME", "CM02",
                    "SimGrid network model: CM02 (alpha-beta exact) or LV08 (SimGrid's TCP model)"},
               }},
               option_flags);

struct RunSettings {
  AlgorithmOptions algorithm;
  AlphaBetaGamma cost;
  std::string backend;        // "simgrid" or "analytical"
  std::string network_model;  // "CM02" or "LV08"
  bool real_payload = false;
};

// Reads the option_flags.
AlgorithmOptions parse_algorithm_options(const Flags& flags);
// Reads the run_flags.
RunSettings parse_run_settings(const Flags& flags);

// Builds the algorithm's schedule; an option it cannot use is a UsageError naming the option's flag, a schedule too
// large to build one naming --ranks.
Schedule build_schedule(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                        const AlgorithmOptions& options);

// Times the schedule on the chosen backend and fills in everything a report needs.
CollectiveRun run_schedule(const Schedule& schedule, const RunSettings& settings);

}  // namespace dtsim::cli
