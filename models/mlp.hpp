// A real training kernel: a multilayer perceptron (dense layers, ReLU, softmax cross-entropy) on Eigen, with SGD,
// momentum and weight decay. All parameters live in one flat float buffer (layer by layer: weights column-major
// out x in, then biases), so that data-parallel workers can allreduce gradients as one buffer through any schedule.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

namespace dtsim {

class Mlp {
public:
  // sizes: input, hidden..., classes (e.g. {784, 95, 10}); weights drawn He-uniform, U(-sqrt(6/fan_in), +), from
  // `seed`; biases zero. Throws std::invalid_argument for fewer than two sizes or a size below 1.
  Mlp(std::vector<int> sizes, std::uint64_t seed);

  // The parameter count and FLOPs per sample of an MLP of these sizes, without building it (in doubles: no overflow).
  static double parameter_count_of(const std::vector<int>& sizes);
  static double flops_per_sample_of(const std::vector<int>& sizes);

  const std::vector<int>& sizes() const { return sizes_; }
  std::size_t parameter_count() const { return parameters_.size(); }
  std::span<float> parameters() { return parameters_; }
  std::span<const float> parameters() const { return parameters_; }
  // FLOPs of forward plus backward for one sample (2 per multiply-add; weight gradients, and input gradients above the
  // first layer), the three GEMMs per layer that dominate the step.
  double flops_per_sample() const;

  // Scratch space for one batch size, so that the step allocates nothing.
  struct Workspace {
    std::vector<Eigen::MatrixXf> z;  // pre-activations per layer (out x batch)
    std::vector<Eigen::MatrixXf> a;  // activations per layer
    std::vector<Eigen::MatrixXf> delta;
    int batch = 0;
  };

  // Adds to `gradient` (parameter_count floats) the SUM over the batch of the per-sample loss gradients and returns
  // the summed loss. `inputs` holds `batch` samples of sizes()[0] floats each, `labels` one class each.
  double accumulate_gradient(const float* inputs, const std::uint8_t* labels, int batch, std::span<float> gradient,
                             Workspace& workspace) const;
  // Correct predictions among `count` samples (evaluated in blocks of `block`).
  int correct(const float* inputs, const std::uint8_t* labels, int count, Workspace& workspace, int block = 1000) const;

private:
  void forward(const float* inputs, int batch, Workspace& w) const;
  std::vector<int> sizes_;
  std::vector<float> parameters_;
  std::vector<std::size_t> weight_offset_;
  std::vector<std::size_t> bias_offset_;
};

struct SgdSettings {
  double learning_rate = 0.1;
  double momentum = 0.9;
  double weight_decay = 5e-4;
};

// v = momentum v + (g + weight_decay w); w -= learning_rate v, with g the mean gradient (sum / batch).
class Sgd {
public:
  explicit Sgd(std::size_t parameters) : velocity_(parameters, 0.0F) {}
  void step(std::span<float> parameters, std::span<const float> gradient_sum, int batch, const SgdSettings& settings,
            double learning_rate);

private:
  std::vector<float> velocity_;
};

}  // namespace dtsim
