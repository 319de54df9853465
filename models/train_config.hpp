// How a real SGD training run is set up: the network, the workers, how they exchange gradients, the optimizer and
// the simulated compute time. Plain values; scenarios/train_file.cpp fills them, sim/sgd_training.cpp runs them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "models/mlp.hpp"
#include "models/variability.hpp"

namespace dtsim {

enum class TrainMode : std::uint8_t {
  allreduce,  // synchronous: every step, the workers' gradient sums are allreduced, every replica steps alike
  sync_ps,    // synchronous parameter server: the server waits for all W gradients, steps, sends weights back
  async_ps,   // asynchronous parameter server: each push is applied at once, its sender pulls the new weights
  ssp,        // stale-synchronous: asynchronous, but no worker runs more than `staleness_bound` steps ahead
};

inline const char* to_string(TrainMode mode) {
  switch (mode) {
    case TrainMode::allreduce: return "allreduce";
    case TrainMode::sync_ps: return "sync-ps";
    case TrainMode::async_ps: return "async-ps";
    case TrainMode::ssp: return "ssp";
  }
  return "?";
}

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
  std::vector<double> slowdown;              // per worker, default 1 (a straggler: 2 or more)
  ComputeJitter jitter;                      // per worker and step, drawn from `seed` (models/variability.hpp)
  int backup_workers = 0;                    // sync_ps: steps on the first workers - b gradients, drops the rest
  AlphaBetaGamma network;                    // the star between workers (and the server)
  std::vector<FactorRange> network_factors;  // from a calibration: piecewise corrections by message size
};

}  // namespace dtsim
