// Microbenchmarks of this machine: Eigen GEMM FLOP/s, the SGD kernel's step time against batch size, a STREAM-like
// triad, and the throughput of summing float arrays (the reduction rate, gamma's inverse). Each repeats its body for
// at least `min_seconds` and keeps the best time of several rounds (the least disturbed on a shared machine).
#pragma once

#include <functional>
#include <vector>

#include "calibrate/fit.hpp"

namespace dtsim {

// Best seconds per call of `body` over 3 rounds of at least min_seconds / 3 each (after one warm-up call).
double best_seconds(const std::function<void()>& body, double min_seconds);

struct GemmMeasurement {
  int m = 0;
  int n = 0;
  int k = 0;
  double flops_per_s = 0;
};

GemmMeasurement measure_gemm(int m, int n, int k, double min_seconds);
// (batch, seconds) of one 784-95-10 training step per batch size.
std::vector<Sample> measure_kernel_steps(const std::vector<int>& batches, double min_seconds);
// FLOP/s of the SGD kernel's gradient (forward and backward, flops_per_sample x batch) for an MLP of these sizes
// at this batch, on this machine: what a training run's compute will reach (labels are taken modulo the last size).
double measure_gradient_flops_per_s(const std::vector<int>& layers, int batch, double min_seconds);
// Seconds of each of `steps` consecutive SGD kernel steps at `batch` (after a warm-up step): the step-time
// distribution of this machine, as variability's empirical jitter reads it.
std::vector<double> measure_step_times(int batch, int steps);
// a = b + s c over `elements` floats: bytes moved (3 x 4 per element) per second.
double measure_triad_Bps(std::size_t elements, double min_seconds);
// a += b over `elements` floats: bytes of the reduced buffer per second.
double measure_reduce_Bps(std::size_t elements, double min_seconds);

}  // namespace dtsim
