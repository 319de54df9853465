// Real training inside the simulation: W simulated workers compute real gradients of the MLP kernel on Fashion-MNIST,
// exchange them on the simulated network (an allreduce Schedule, whose values run_on_values computes from the real
// gradients, or a parameter server's pushes and pulls, each a Schedule of one message), and update real weights,
// while the network (SimGrid or the flow engine, through sim/network.hpp) advances simulated time. Timing and accuracy
// therefore interact: a slow network or a straggler changes both the time and, in asynchronous modes, how stale the
// gradients are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/alpha_beta.hpp"
#include "models/dataset.hpp"
#include "models/mlp.hpp"
#include "models/train_config.hpp"
#include "sim/executor.hpp"

namespace dtsim {

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
  std::uint64_t dropped_gradients = 0;  // sync-ps with backup workers: late gradients the server dropped
  std::vector<float> final_parameters;  // worker 0's (allreduce) or the server's
  double wall_s = 0;
  RunTrace trace;  // recorded runs: every rank's gradient, allreduce or push/pull intervals and every message
};

// What a run needs before anything is allocated: memory (every worker's replica, gradient, momentum, inputs and layer
// scratch; the server's model, sum and the pushes in flight, or the allreduce's copies in flight; the evaluation
// scratch; the training and test sets of `features` floats a sample) and the FLOPs of its gradients and evaluations
// (of the test set).
struct TrainingEstimate {
  double parameters = 0;
  double memory_bytes = 0;
  double flops = 0;
  double messages = 0;  // the run's simulated messages: its steps' exchanges (allreduce schedule, or push and pull)
};
TrainingEstimate estimate_training(const TrainConfig& config, double train_samples, double test_samples,
                                   double features);

// The engine the run's messages move on (the same Network either way, sim/network.hpp): SimGrid (every message, in
// a child process) or the flow engine (max-min fair flows, in process).
enum class TrainBackend : std::uint8_t { simgrid, flow };

// Throws std::invalid_argument for an inconsistent configuration (e.g. a batch the workers cannot split).
// `record`: fill TrainReport::trace (the parameter server is rank `workers`; every message only on SimGrid).
TrainReport run_sgd_training(const TrainConfig& config, const Dataset& train, const Dataset& test, bool record = false,
                             TrainBackend backend = TrainBackend::simgrid);

}  // namespace dtsim
