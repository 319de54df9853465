#include "calibrate/microbench.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "models/mlp.hpp"

namespace dtsim {
namespace {

volatile float sink = 0;  // keeps results alive

}  // namespace

double best_seconds(const std::function<void()>& body, double min_seconds) {
  body();  // warm caches and allocations
  double best = INFINITY;
  for (int round = 0; round < 3; ++round) {
    int calls = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < min_seconds / 3 || calls < 2) {
      body();
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    best = std::min(best, elapsed / calls);
  }
  return best;
}

GemmMeasurement measure_gemm(int m, int n, int k, double min_seconds) {
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(m, k);
  const Eigen::MatrixXf b = Eigen::MatrixXf::Random(k, n);
  Eigen::MatrixXf c(m, n);
  const double seconds = best_seconds(
      [&] {
        c.noalias() = a * b;
        sink = c(0, 0);
      },
      min_seconds);
  return GemmMeasurement{m, n, k, 2.0 * m * n * k / seconds};
}

namespace {

// One training step of an MLP (784-95-10 unless told) on a fixed synthetic batch: what the kernel measurements time.
class KernelStep {
public:
  explicit KernelStep(int batch, std::vector<int> layers = {784, 95, 10})
      : mlp_(std::move(layers), 1),
        batch_(batch),
        inputs_(static_cast<std::size_t>(batch) * static_cast<std::size_t>(mlp_.sizes().front())),
        labels_(static_cast<std::size_t>(batch)),
        gradient_(mlp_.parameter_count()) {
    const int classes = mlp_.sizes().back();
    for (std::size_t i = 0; i < inputs_.size(); ++i)
      inputs_[i] = static_cast<float>((i * 2654435761U) % 256) / 255.0F;
    for (std::size_t i = 0; i < labels_.size(); ++i)
      labels_[i] = static_cast<std::uint8_t>(static_cast<int>(i % 256) % classes);
  }
  void operator()() {
    sink = static_cast<float>(mlp_.accumulate_gradient(inputs_.data(), labels_.data(), batch_, gradient_, w_));
  }
  double flops() const { return mlp_.flops_per_sample() * batch_; }

private:
  Mlp mlp_;
  int batch_;
  std::vector<float> inputs_;
  std::vector<std::uint8_t> labels_;
  std::vector<float> gradient_;
  Mlp::Workspace w_;
};

}  // namespace

std::vector<Sample> measure_kernel_steps(const std::vector<int>& batches, double min_seconds) {
  std::vector<Sample> samples;
  for (int batch : batches) {
    KernelStep step(batch);
    samples.push_back(Sample{static_cast<double>(batch), best_seconds([&] { step(); }, min_seconds)});
  }
  return samples;
}

double measure_gradient_flops_per_s(const std::vector<int>& layers, int batch, double min_seconds) {
  KernelStep step(batch, layers);
  return step.flops() / best_seconds([&] { step(); }, min_seconds);
}

std::vector<double> measure_step_times(int batch, int steps) {
  KernelStep step(batch);
  step();  // warm-up
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(steps));
  for (int s = 0; s < steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    step();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return times;
}

double measure_triad_Bps(std::size_t elements, double min_seconds) {
  std::vector<float> a(elements, 0.0F);
  const std::vector<float> b(elements, 1.0F);
  const std::vector<float> c(elements, 2.0F);
  const double seconds = best_seconds(
      [&] {
        for (std::size_t i = 0; i < elements; ++i)
          a[i] = b[i] + 3.0F * c[i];
        sink = a[elements / 2];
      },
      min_seconds);
  return 12.0 * static_cast<double>(elements) / seconds;
}

double measure_reduce_Bps(std::size_t elements, double min_seconds) {
  std::vector<float> a(elements, 0.0F);
  const std::vector<float> b(elements, 1.0F);
  const double seconds = best_seconds(
      [&] {
        for (std::size_t i = 0; i < elements; ++i)
          a[i] += b[i];
        sink = a[elements / 2];
      },
      min_seconds);
  return 4.0 * static_cast<double>(elements) / seconds;
}

}  // namespace dtsim
