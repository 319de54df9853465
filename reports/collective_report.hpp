// Results of `dtsim collective`, as text for people and as one JSON object for programs.
#pragma once

#include "sim/link_usage.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "models/alpha_beta.hpp"
#include "sim/executor.hpp"

namespace dtsim {

struct CollectiveRun {
  std::string algorithm;
  std::string collective;
  int ranks = 0;         // participating ranks (workers)
  int helper_ranks = 0;  // extra ranks that hold no data, e.g. parameter servers on hosts of their own
  std::uint64_t bytes = 0;
  std::string backend;        // "simgrid" or "analytical"
  std::string network_model;  // simgrid only
  AlphaBetaGamma cost;        // the star's (unused with a cluster but for the reduce rate)
  std::string cluster;        // non-empty: the run was on this cluster, not on a star
  ExecutionResult result;
  double closed_form_s = -1;     // < 0: no closed form for this algorithm
  bool verified = false;         // the symbolic verifier ran and passed
  bool links_recorded = false;   // the run was recorded: `links` lists every link it loaded, busiest first
  std::vector<LinkUsage> links;  // (the trace itself is in result.trace)
};

double algbw_Bps(const CollectiveRun& run);
double busbw_Bps(const CollectiveRun& run);
std::string collective_text(const CollectiveRun& run);
// The `most` busiest links as indented text lines, and as a JSON list of {name, capacity_Bps, bytes, busy_s,
// busy_fraction, utilisation}.
std::string links_text(const std::vector<LinkUsage>& links, std::size_t most, double run_s);
nlohmann::json links_json(const std::vector<LinkUsage>& links, std::size_t most);
nlohmann::json collective_json(const CollectiveRun& run);

}  // namespace dtsim
