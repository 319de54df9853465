// Failures, checkpoints and goodput of a long training run (issue 30, item 3). Pure math: no JSON, CLI or SimGrid.
//   Failure rates: each component kind (GPU, node, NIC, link, switch) fails at a constant rate per component; a
//   synchronous job stops when any of its components fails, so the job's rate is the sum over its components and the
//   time between interruptions is exponential with mean M = 3600 / failures_per_hour. The default rates are fitted to
//   the 419 unexpected interruptions of Llama 3 405B's 54-day pre-training snapshot on 16,384 H100s (Meta, "The Llama
//   3 Herd of Models", 2024, arXiv:2407.21783, section 3.3.4 and Table 5); see FailureRates.
//   Expected wall time (Daly 2006, "A higher order estimate of the optimum checkpoint interval for restart dumps",
//   Future Generation Computer Systems 22(3), 303-312): the run's W seconds of work are cut into W / tau segments,
//   each tau of work then a checkpoint write of delta; a failure (during work or the write) loses the segment and
//   costs a restart of R (which a failure also restarts), then the segment is redone:
//     T = M e^(R/M) (e^((tau + delta)/M) - 1) W / tau.
//   Optimal intervals: Young 1974 ("A first order approximation to the optimum checkpoint interval", CACM 17(9), 530),
//   sqrt(2 delta M); Daly 2006's higher-order estimate; and the closed form minimised numerically.
//   Monte Carlo: sample_runs simulates the same model failure by failure, to check the closed form and for the spread.
#pragma once

#include <cstdint>
#include <vector>

namespace dtsim {

// The source of the default rates: Llama 3 405B pre-training, a 54-day snapshot (Meta 2024, section 3.3.4).
inline constexpr double llama3_snapshot_h = 54.0 * 24.0;        // 1,296 hours
inline constexpr double llama3_unexpected_interruptions = 419;  // Table 5's total of unexpected interruptions
inline constexpr double llama3_gpus = 16384;                    // H100s, 8 per Grand Teton server (section 3.3.1)
inline constexpr double llama3_nodes = llama3_gpus / 8;         // 2,048 servers
// Assumed: one backend NIC per GPU (Grand Teton has 8 backend 400G NICs per server; its 2 frontend NICs are not
// counted), and one link (NIC cable and its switch port) per backend NIC. Uplinks between switches are not counted.
inline constexpr double llama3_nics = llama3_gpus;
inline constexpr double llama3_links = llama3_gpus;
// One Minipack2 top-of-rack switch per rack of two servers (section 3.3.1): 1,024. The counts of the cluster and
// aggregation switches above them are not public; they do not matter to the defaults (see FailureRates::switch_per_h).
inline constexpr double llama3_switches = llama3_nodes / 2;

// Failures per hour of ONE component of each kind. Defaults: Table 5's counts of the 419 unexpected interruptions,
// by root cause, mapped to a kind and divided by (components of that kind in the Llama 3 cluster x 1,296 h).
struct FailureRates {
  // 268 = faulty GPU 148 + GPU HBM3 memory 72 + GPU SRAM memory 19 + GPU system processor 17 + silent data corruption 6
  // + GPU thermal interface and sensor 6, over 16,384 GPUs: 1.262e-5 per GPU-hour (one per 79,200 GPU-hours).
  double gpu_per_h = 268.0 / (llama3_gpus * llama3_snapshot_h);
  // 109 = host maintenance 32 + SSD 3 + power supply 3 + server chassis 2 + IO expansion board 2 + CPU 2 + system
  // memory 2, and the job's software: software bug 54 + dependency 2 + NCCL watchdog timeouts 7 (cause unknown), over
  // 2,048 servers: 4.107e-5 per node-hour (one per 24,400 node-hours).
  double node_per_h = 109.0 / (llama3_nodes * llama3_snapshot_h);
  // 7 = NIC 7, over 16,384 backend NICs (assumed one per GPU): 3.297e-7 per NIC-hour.
  double nic_per_h = 7.0 / (llama3_nics * llama3_snapshot_h);
  // 35 = network switch/cable 35, over 16,384 links (assumed one per backend NIC): 1.648e-6 per link-hour. Table 5
  // does not separate switches from cables, and the cluster's switch count is not public, so all 35 are on links.
  double link_per_h = 35.0 / (llama3_links * llama3_snapshot_h);
  // 0: the source's switch failures are inside link_per_h (above). Set it, and lower link_per_h, to model them apart.
  double switch_per_h = 0.0;
};

struct ComponentCounts {
  double gpus = 0;
  double nodes = 0;
  double nics = 0;
  double links = 0;
  double switches = 0;
};

// The Llama 3 cluster the defaults come from: failures_per_hour(FailureRates{}, llama3_counts) x 1,296 h = 419.
inline constexpr ComponentCounts llama3_counts{llama3_gpus, llama3_nodes, llama3_nics, llama3_links, llama3_switches};

// Interruptions per hour of a job that stops when any of its components fails: the sum of rate x count.
double failures_per_hour(const FailureRates& rates, const ComponentCounts& counts);
// Its mean time between interruptions, 3600 / failures_per_hour; infinity when nothing fails.
double mtbf_s(const FailureRates& rates, const ComponentCounts& counts);

struct CheckpointCost {
  double write_s = 0;    // delta: time to write one checkpoint, during which no work is done
  double restart_s = 0;  // R: time from a failure's detection to work resuming from the last checkpoint
};

// bytes / write_Bps: the time to write a checkpoint of `bytes` at an aggregate `write_Bps` bytes per second.
double checkpoint_write_s(double bytes, double write_Bps);

struct RunEstimate {
  double wall_s = 0;                  // expected wall time, work_s + checkpoint_s + restart_s + lost_s
  double goodput = 0;                 // work_s / wall_s
  double expected_interruptions = 0;  // wall_s / mtbf_s (failures during restarts included)
  double work_s = 0;                  // the useful work
  double checkpoint_s = 0;            // checkpoint writes that completed: (W / tau) delta
  double restart_s = 0;               // restarts, those cut short by another failure included
  double lost_s = 0;                  // work and checkpoint writes a failure cut short
};

// Daly's closed form above for exponential failures of mean mtbf_s (infinity: no failures, wall = W + (W/tau) delta).
// The number of segments is W / tau, not rounded: exact when tau divides W; otherwise the last, partial segment
// counts as that fraction of a whole one. Throws std::invalid_argument naming the argument: work_s and interval_s
// must be positive and finite, mtbf_s positive (infinity allowed), write_s and restart_s non-negative and finite.
RunEstimate expected_run(double work_s, double mtbf_s, double interval_s, const CheckpointCost& cost);

// The interval of work between checkpoints that minimises the closed form's wall time (it does not depend on W or R):
// golden-section search over log tau from min(1 s, M / 1000, Young's / 1000) to 100 M (the optimum is below M).
// Requires a finite mtbf_s and cost.write_s > 0 (without failures, or with free checkpoints, there is no optimum).
double optimal_interval_s(double mtbf_s, const CheckpointCost& cost);
// Young 1974: sqrt(2 delta M), first order in delta / M.
double young_interval_s(double write_s, double mtbf_s);
// Daly 2006: sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta for delta < 2M, else M.
double daly_interval_s(double write_s, double mtbf_s);

// Monte Carlo of the same model: `samples` runs, each simulated failure by failure (exponential times between
// failures; a failure during work or a checkpoint write loses the segment, one during a restart restarts it), each
// sample's wall time returned. The run is floor(W / tau) segments of tau, then one of the remainder (if any), each
// followed by a checkpoint write. Failure times are -log(1 - u) M with u = (x >> 11) 2^-53 from std::mt19937_64
// seeded with `seed`: the same seed gives the same samples on every standard library. Throws std::invalid_argument
// for the arguments expected_run refuses, samples <= 0 or > 1e8, and runs of more than 1e7 segments or 1e7 expected
// failures per sample (with the estimate); std::runtime_error if a sample passes 1e8 failures all the same.
std::vector<double> sample_runs(double work_s, double mtbf_s, double interval_s, const CheckpointCost& cost,
                                std::uint64_t seed, int samples);

}  // namespace dtsim
