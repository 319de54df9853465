// Results of `dtsim collective`, as text for people and as one JSON object for programs.
#pragma once

#include "sim/link_usage.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/alpha_beta.hpp"
#include "models/heldout_errors.hpp"
#include "sim/executor.hpp"
#include "sim/step_sampler.hpp"

namespace dtsim {

// One algorithm `--algorithm auto` weighed: the library's estimate of it in its cheapest protocol.
struct WeighedAlgorithm {
  std::string algorithm;
  Protocol protocol = Protocol::none;
  double estimate_s = 0;
};

struct CollectiveRun {
  std::string algorithm;
  std::string chosen_by;                  // --algorithm auto: how ("nccl tuner", "mpich thresholds", ...); empty: named
  std::vector<WeighedAlgorithm> weighed;  // --algorithm auto by a tuner: its candidates
  std::string collective;
  int ranks = 0;         // participating ranks (workers)
  int helper_ranks = 0;  // extra ranks that hold no data, e.g. parameter servers on hosts of their own
  std::uint64_t bytes = 0;
  std::string backend;                 // "simgrid" or "analytical"
  std::string network_model;           // simgrid only
  AlphaBetaGamma cost;                 // the star's (unused with a cluster but for the reduce rate)
  std::string cluster;                 // non-empty: the run was on this cluster, not on a star
  std::string library;                 // the cluster's collective library ("nccl"), empty: none
  Protocol protocol = Protocol::none;  // the wire protocol the run used (none: plain messages)
  int channels = 1;                    // the library's channels (copies of the algorithm on shares of the bytes)
  ExecutionResult result;
  double closed_form_s = -1;     // < 0: no closed form for this algorithm
  bool verified = false;         // the symbolic verifier ran and passed
  bool links_recorded = false;   // the run was recorded: `links` lists every link it loaded, most utilised first
  std::vector<LinkUsage> links;  // (the trace itself is in result.trace)
  // --samples with --arrival: the time with the ranks arriving apart (samples 0: not sampled)
  StepDistribution distribution;
  std::string arrival;  // how they arrived, e.g. "normal:20us"
  // How far to trust the bus bandwidth (a call in a collective library's protocol): the spread of dtsim's errors on
  // the held-out published nccl-tests and rccl-tests runs of its size class (models/heldout_errors.hpp); none: no band
  std::optional<ErrorBand> trust;
  std::string trust_basis;  // e.g. "held-out nccl-tests and rccl-tests runs (1 MiB or more a rank; 8 to 1024 GPUs)"
  std::string note;         // what the run leaves out that a user would not guess (empty: nothing)
};

double algbw_Bps(const CollectiveRun& run);
double busbw_Bps(const CollectiveRun& run);
std::string collective_text(const CollectiveRun& run);
// `links` (most utilised first) as text: the `most` most utilised groups of links alike (sim/link_usage.hpp), a line
// each with its utilisation, busy fraction, bytes per link, and its one link's name or its count, kind and capacity.
std::string links_text(const std::vector<LinkUsage>& links, std::size_t most, double run_s);
// Groups of links alike counted from a step's schedules (Prediction::busiest_links: no busy times), a line each with
// its utilisation over a step of `step_s`, bytes per link per step, and its one link's name or count, kind, capacity.
std::string step_link_groups_text(const std::vector<LinkGroup>& groups, double step_s);
// The `most` most utilised links as a JSON list of {name, kind, capacity_Bps, bytes, busy_s, busy_fraction,
// utilisation}; and the `most` most utilised groups of links alike as {kind, count, capacity_Bps, bytes (per link),
// busy_fraction, utilisation, first (the first link's name)}.
nlohmann::json links_json(const std::vector<LinkUsage>& links, std::size_t most);
// A link's capacity as people quote it: network links (nic, fabric, global, host) in bit/s, the others in B/s.
std::string format_capacity(const std::string& kind, double capacity_Bps);
nlohmann::json link_groups_json(const std::vector<LinkUsage>& links, std::size_t most);
nlohmann::json link_groups_json(const std::vector<LinkGroup>& groups);
nlohmann::json collective_json(const CollectiveRun& run);

}  // namespace dtsim
