// `dtsim validate`: the schedules dtsim simulates, run for real over MPI on an emulated cluster and compared with
// SimGrid's predictions, whose alpha and beta come from an MPI ping-pong only (never from the collectives validated).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/alpha_beta.hpp"

namespace dtsim {

// The q-quantile (0 to 1) of `v`, linear between the nearest ranks; 0 for no values.
double percentile(std::vector<double> v, double q);

struct ValidationPlan {
  std::vector<int> ranks{4, 8};
  std::vector<double> rates_Mbps{100, 1000};
  std::vector<std::string> algorithms{"ring", "tree",   "butterfly",         "rabenseifner",
                                      "ps",   "direct", "all-to-all/direct", "mpi"};
  std::vector<std::uint64_t> sizes{65536, 262144, 1048576, 4194304, 16777216, 67108864};
  int repetitions = 3;
  std::string bin_dir;  // dtsim-mpi-run, dtsim-mpi-pingpong
  std::string script;   // validation/emulated-run.sh
};

struct ValidationCase {
  int ranks = 0;
  double rate_bps = 0;
  std::string algorithm;
  std::uint64_t bytes = 0;
  double measured_s = 0;
  double predicted_s = 0;
  bool result_ok = false;
  double error() const { return (predicted_s - measured_s) / measured_s; }
};

// Two messages of `bytes` a rank sends one after the other, to two ranks (dtsim-mpi-pingpong twosends): when each
// had arrived, measured and as the SimGrid executor predicts it with the network's fits. The transport model alone
// (how a link shares two messages, the send buffer), apart from any collective: the older send weight is fitted to
// these first arrivals.
struct TwoSends {
  double bytes = 0;
  double measured_first_s = 0;
  double measured_second_s = 0;
  double predicted_first_s = 0;
  double predicted_second_s = 0;
};

struct ValidationNetwork {  // what the ping-pong gave for one (ranks, rate)
  int ranks = 0;
  double rate_bps = 0;
  AlphaBetaGamma cost;
  double beta_r_squared = 0;
  // alpha is from the ping-pong of ranks 0 and 1 alone; bandwidth from that of all ranks at once where it was run
  bool bandwidth_all_ranks = false;
  double all_ranks_alpha_s = 0;       // for the report (0: not run)
  double two_rank_bandwidth_Bps = 0;  // for the report
  // for the report: the bandwidth of each of N streams at once (all ranks in pairs, both ways; 0: not run). Near the
  // two-rank bandwidth, the machine hosting the emulated cluster carries as many streams as a ring without slowing.
  double exchange_bandwidth_Bps = 0;
  double exchange_slowest_Bps = 0;  // the same from the slowest rank of each exchange (0: not run)
  // How much of a send the transport still holds when the send is complete (dtsim-mpi-pingpong sendtime, the median
  // over its sizes; 0: not measured). dtsim's schedules over TCP are predicted with it (SimGridOptions).
  double send_buffer_bytes = 0;
  std::vector<TwoSends> two_sends;  // empty: not measured
  // How many times a newer message's share a rank's message already on its way keeps (SimGridOptions): the whole
  // number from 1 to 4 whose predictions of the two-sends first arrivals come closest (1: not measured).
  int older_send_weight = 1;
  // dtsim-mpi-pingpong msgrate: (messages sent at once, seconds); cost.gap_s is fitted to them (empty: not run)
  std::vector<std::pair<double, double>> message_rate;
};

struct ValidationResult {
  std::string label;  // the machine, for measurements made elsewhere
  std::vector<ValidationNetwork> networks;
  std::vector<ValidationCase> cases;
  double median_abs_error = 0;  // over sizes >= 1 MB
  double p90_abs_error = 0;
  double all_median_abs_error = 0;  // over every size (the headline)
  double all_p90_abs_error = 0;
};

// Predicts measurements made elsewhere (dtsim-nccl-run's output: "pingpong" and "case" lines) for `ranks` ranks,
// exactly as run_validation predicts the emulated cluster's; `label` names the machine in reports.
ValidationResult validate_measured(const std::string& path, int ranks, const std::string& label);

// The cases of an earlier validation.json predicted again with the current model, from the same measurements and
// the same ping-pong fits (to see what a model change does without measuring again).
ValidationResult repredict(const nlohmann::json& previous);

// "all sizes: median |error| 4.2%, p90 35.9%; sizes >= 1 MB: median 3.3%, p90 17.4%", for the command's last line.
std::string error_summary(const ValidationResult& result);

// alpha (ranks 0 and 1 alone), bandwidth (all ranks at once where measured) and the per-message gap from an emulated
// run's ping-pong and message-rate lines, as run_validation fits them (its other lines are ignored).
AlphaBetaGamma fit_emulated_network(std::istream& run_output);

// Throws std::runtime_error when a run fails (the emulated cluster is torn down either way).
ValidationResult run_validation(const ValidationPlan& plan, const std::function<void(const std::string&)>& progress);
nlohmann::json validation_json(const ValidationPlan& plan, const ValidationResult& result, const std::string& command);
std::string validation_markdown(const ValidationPlan& plan, const ValidationResult& result, const std::string& command);

}  // namespace dtsim
