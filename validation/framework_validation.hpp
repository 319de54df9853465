// `dtsim validate --framework pytorch`: real PyTorch DistributedDataParallel training (gloo) on the emulated cluster
// of `dtsim validate` against dtsim's prediction of each step from first principles: compute from a one-rank profile
// recorded under the same CPU share (scenarios/profile_file.hpp), the network from the emulated run's ping-pong fits,
// DDP's buckets as PyTorch builds them (models/ddp_buckets.hpp) and gloo's ring allreduce as a Schedule. Nothing is
// fitted to the step times validated. docs/validation.md ("PyTorch") says how the cases run.
#pragma once

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/alpha_beta.hpp"

namespace dtsim {

struct FrameworkModelCases {
  std::string model;         // validation/pytorch/models.py: mlp, resnet18, transformer
  std::vector<int> batches;  // per rank
};

struct FrameworkPlan {
  std::vector<int> ranks{2, 4, 8};
  std::vector<double> rates_Mbps{100, 1000};
  std::vector<FrameworkModelCases> models{{"mlp", {16, 64}}, {"resnet18", {8, 32}}, {"transformer", {4, 8}}};
  std::vector<double> buckets_mb{25, 1};  // DDP's bucket_cap_mb: its default, and a small one
  std::string bin_dir;                    // dtsim-mpi-pingpong (the ping-pong fits)
  std::string script;                     // validation/emulated-run.sh
  std::string out_dir;  // the profiles are kept in out_dir/pytorch-profiles (the compute input of every prediction)
  // Each rank's CPU share (cores) with `ranks` ranks on this machine: 1.6 cores among them, at most one each, so that
  // the kernel's network stack and gloo's threads keep some of the two cores.
  static double cpu_share(int ranks) { return ranks <= 1 ? 1.0 : std::min(1.0, 1.6 / ranks); }
};

// What one (ranks, rate) run measured besides the training cases.
struct FrameworkNetwork {
  int ranks = 0;
  double rate_bps = 0;
  AlphaBetaGamma cost;    // alpha, bandwidth and per-message gap from the ping-pong and message-rate lines
  double reduce_Bps = 0;  // adding float32 arrays under the CPU share (gloo's reductions)
  double cpu_share = 0;   // cores per rank; 0: no share could be set (no writable cpu cgroup)
  // From the torch_transport line (validation/pytorch/transport_cpu.py; runs before session 27 have none: 1, 1, 0):
  // the fraction of its speed a rank's compute keeps while gloo moves its bytes, the fraction of its rate gloo's
  // transport keeps while the rank computes (NodeSpec), and the processor time (at the share) the transport takes per
  // byte sent or received, the reductions taken out at reduce_Bps (reported, not used)
  double compute_rate_while_transporting = 1;
  double transport_rate_while_computing = 1;
  double transport_s_per_byte = 0;
  // Bytes a rank sent and received per second while allreducing alone (the same line; 0 before session 28), against
  // twice the link's bandwidth for a ring: whether gloo keeps up with the link under the share
  double transport_alone_Bps = 0;
};

// The rate (bytes a second each way) at which gloo's transport moves a rank's bytes alone under its share: the ring
// of transport_cpu.py's 16 MiB allreduces, whose wall time per byte sent and received is 1 / (2 b) for the transfers
// plus 1/4 of a byte's reduction at reduce_Bps (a ring reduces (n-1)/n of the tensor and moves 4 (n-1)/n of it); its
// 4 (n-1) latencies are left out (under 0.3% of a 16 MiB allreduce at 1 Gbit/s). Infinite where not measured (runs
// before session 28). The emulated link's bandwidth is the lower of this and the ping-pong's (since session 29):
// at a fifth of a core gloo's threads no longer keep up with a 100 Mbit/s link.
double transport_bandwidth_Bps(const FrameworkNetwork& net);

struct FrameworkCase {
  int ranks = 0;
  double rate_bps = 0;
  std::string model;
  int batch = 0;
  double bucket_mb = 0;
  std::string profile;  // the one-rank profile under the share (a CSV), relative to the results' directory
  // The compute the prediction starts from: every rank computing its step at once with communication off, each under
  // its share, rank 0's median step: the N processes contend for the host's caches and memory as in the real run.
  // Since session 28 measured in the DDP run itself, in blocks of steps under no_sync between blocks of real steps
  // (validation/pytorch/ddp_step.py --compute-blocks), so that it is measured when the step is; before, it is
  // compute_all_s (and before session 26, compute_alone_s).
  double compute_s = 0;
  double compute_all_s = 0;       // every rank at once in processes of their own (no DDP), before the DDP runs
  double compute_same_run_s = 0;  // the no_sync steps of the DDP run (0: not measured, before session 28)
  double compute_alone_s = 0;     // one rank alone, no DDP, under the share: the median step
  // Every rank's no_sync step times in the same run (since session 29; empty before): the prediction draws each
  // rank's compute of each step from them (empirical per-step jitter, docs/variability.md), since a synchronous step
  // waits for its slowest rank, and takes the median of the sampled steps (the measurement's median)
  std::vector<double> compute_samples_s;
  double measured_s = 0;   // N ranks, DDP: rank 0's median step
  double predicted_s = 0;  // dtsim's step
  // the predicted step beyond the same compute, as the measurement counts it: the communication the step waits for
  // after the backward pass, and since session 27 also the computes' slowdown by a transport on their processor
  double predicted_exposed_s = 0;
  int buckets = 0;  // DDP's buckets as dtsim builds them
  double error() const { return (predicted_s - measured_s) / measured_s; }
  // communication the step waits for, as a fraction of the step: measured as the step beyond the compute
  double measured_exposed_fraction() const { return std::max(0.0, measured_s - compute_s) / measured_s; }
  double predicted_exposed_fraction() const { return predicted_exposed_s / predicted_s; }
};

struct FrameworkResult {
  std::vector<FrameworkNetwork> networks;
  std::vector<FrameworkCase> cases;
  double median_abs_error = 0;  // step time
  double p90_abs_error = 0;
  double exposed_median_points = 0;  // |predicted - measured| exposed fraction, in points (0.05 = 5 points)
  double exposed_max_points = 0;
};

// Predicts one case on its network (fills predicted_s, predicted_exposed_s, buckets), its profile read from
// base_dir/c.profile. Throws what the profile loader throws when it cannot be read.
void predict_framework_case(FrameworkCase& c, const FrameworkNetwork& net, const std::string& base_dir);
// Measures every case of the plan on the emulated cluster (root) and predicts it. Throws std::runtime_error when a
// run fails (the emulated cluster is torn down either way).
FrameworkResult run_framework_validation(const FrameworkPlan& plan,
                                         const std::function<void(const std::string&)>& progress);
// The measurements of an earlier pytorch-validation.json (in base_dir, with its profiles) predicted again by the
// current model.
FrameworkResult repredict_framework(const nlohmann::json& previous, const std::string& base_dir);
void summarize_framework(FrameworkResult& result);
nlohmann::json framework_json(const FrameworkResult& result, const std::string& command);
std::string framework_markdown(const FrameworkResult& result, const std::string& command);

}  // namespace dtsim
