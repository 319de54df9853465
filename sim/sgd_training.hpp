// Real training inside the simulation: W simulated workers compute real gradients of the MLP kernel on Fashion-MNIST,
// exchange them on SimGrid (through an allreduce Schedule on real float buffers, or a parameter server), and update
// real weights, while SimGrid advances simulated time. Timing and accuracy therefore interact: a slow network or a
// straggler changes both the time and, in asynchronous modes, how stale the gradients are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/alpha_beta.hpp"
#include "models/mlp.hpp"
#include "models/dataset.hpp"

namespace dtsim {

enum class TrainMode : std::uint8_t {
  allreduce,  // synchronous: every step, the workers' gradient sums are allreduced, every replica steps alike
  sync_ps,    // synchronous parameter server: the server waits for all W gradients, steps, sends weights back
  async_ps,   // asynchronous parameter server: each push is applied at once, its sender pulls the new weights
  ssp,        // stale-synchronous: asynchronous, but no worker runs more than `staleness_bound` steps ahead
};

const char* to_string(TrainMode mode);

struct TrainConfig {
  std::vector<int> layers{784, 95, 10};
  std::uint64_t seed = 1;
  int workers = 8;
  TrainMode mode = TrainMode::allreduce;
  std::string algorithm = "ring";  // allreduce mode
  int staleness_bound = 2;         // ssp
  int batch = 256;                 // global batch of a synchronous step; workers each take batch / workers
  SgdSettings sgd;
  bool linear_scaling = false;  // learning rate x batch / base_batch (Goyal et al. 2017)
  int base_batch = 64;
  double warmup_epochs = 0;  // ramp linearly from the base to the scaled rate over these epochs
  double epochs = 5;
  double eval_every_epochs = 1;
  double target_accuracy = 0.85;
  // compute time of one worker's step: seconds_per_sample x samples + step_overhead_s; negative seconds_per_sample:
  // the kernel's measured wall time instead (not reproducible run to run)
  double seconds_per_sample = 1e-6;
  double step_overhead_s = 0;
  std::vector<double> slowdown;  // per worker, default 1 (a straggler: 2 or more)
  AlphaBetaGamma network;        // the star between workers (and the server)
};

struct EvalPoint {
  double epoch = 0;
  double time_s = 0;
  double train_loss = 0;  // mean loss of the samples trained on since the previous point
  double test_accuracy = 0;
};

struct TrainReport {
  std::vector<EvalPoint> points;
  double time_to_target_s = -1;  // simulated seconds until test accuracy first reached the target; -1: never
  double epochs_to_target = -1;
  std::vector<std::uint64_t> staleness_histogram;  // [s]: updates applied s versions after their weights were pulled
  std::uint64_t updates = 0;
  std::vector<float> final_parameters;  // worker 0's (allreduce) or the server's
  double wall_s = 0;
};

// Throws std::invalid_argument for an inconsistent configuration (e.g. a batch the workers cannot split).
TrainReport run_sgd_training(const TrainConfig& config, const Dataset& train, const Dataset& test);

}  // namespace dtsim
