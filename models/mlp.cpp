#include "models/mlp.hpp"

#include <cmath>
#include <stdexcept>

namespace dtsim {
namespace {

// splitmix64: a small, well-mixed generator so that initialisation is the same on every platform.
std::uint64_t next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

float uniform(std::uint64_t& state, float bound) {
  const double unit = static_cast<double>(next(state) >> 11) * 0x1.0p-53;  // [0, 1)
  return static_cast<float>((2.0 * unit - 1.0) * bound);
}

}  // namespace

Mlp::Mlp(std::vector<int> sizes, std::uint64_t seed) : sizes_(std::move(sizes)) {
  if (sizes_.size() < 2) throw std::invalid_argument("mlp: needs an input and an output size");
  for (int s : sizes_) {
    if (s < 1) throw std::invalid_argument("mlp: layer sizes must be >= 1");
  }
  std::size_t total = 0;
  for (std::size_t l = 1; l < sizes_.size(); ++l) {
    weight_offset_.push_back(total);
    total += static_cast<std::size_t>(sizes_[l]) * static_cast<std::size_t>(sizes_[l - 1]);
    bias_offset_.push_back(total);
    total += static_cast<std::size_t>(sizes_[l]);
  }
  parameters_.assign(total, 0.0F);
  std::uint64_t state = seed;
  for (std::size_t l = 1; l < sizes_.size(); ++l) {
    const float bound = std::sqrt(6.0F / static_cast<float>(sizes_[l - 1]));
    const std::size_t count = static_cast<std::size_t>(sizes_[l]) * static_cast<std::size_t>(sizes_[l - 1]);
    for (std::size_t i = 0; i < count; ++i)
      parameters_[weight_offset_[l - 1] + i] = uniform(state, bound);
  }
}

double Mlp::parameter_count_of(const std::vector<int>& sizes) {
  double total = 0;
  for (std::size_t l = 1; l < sizes.size(); ++l)
    total += static_cast<double>(sizes[l]) * sizes[l - 1] + sizes[l];
  return total;
}

double Mlp::flops_per_sample_of(const std::vector<int>& sizes) {
  if (sizes.size() < 2) return 0;
  double macs = 0;
  for (std::size_t l = 1; l < sizes.size(); ++l)
    macs += static_cast<double>(sizes[l]) * sizes[l - 1];
  // forward, weight gradient and input gradient of every layer but the first (nothing needs the input's gradient)
  return 2.0 * (3.0 * macs - static_cast<double>(sizes[1]) * sizes[0]);
}

double Mlp::flops_per_sample() const { return flops_per_sample_of(sizes_); }

void Mlp::forward(const float* inputs, int batch, Workspace& w) const {
  const std::size_t layers = sizes_.size() - 1;
  if (w.batch != batch || w.z.size() != layers) {
    w.z.assign(layers, Eigen::MatrixXf());
    w.a.assign(layers, Eigen::MatrixXf());
    w.delta.assign(layers, Eigen::MatrixXf());
    for (std::size_t l = 0; l < layers; ++l) {
      w.z[l].resize(sizes_[l + 1], batch);
      w.a[l].resize(sizes_[l + 1], batch);
      w.delta[l].resize(sizes_[l + 1], batch);
    }
    w.batch = batch;
  }
  const Eigen::Map<const Eigen::MatrixXf> x(inputs, sizes_[0], batch);
  for (std::size_t l = 0; l < layers; ++l) {
    const Eigen::Map<const Eigen::MatrixXf> weights(parameters_.data() + weight_offset_[l], sizes_[l + 1], sizes_[l]);
    const Eigen::Map<const Eigen::VectorXf> bias(parameters_.data() + bias_offset_[l], sizes_[l + 1]);
    if (l == 0) {
      w.z[l].noalias() = weights * x;
    } else {
      w.z[l].noalias() = weights * w.a[l - 1];
    }
    w.z[l].colwise() += bias;
    if (l + 1 < layers) {
      w.a[l] = w.z[l].cwiseMax(0.0F);
    } else {  // softmax, shifted by the column maximum for stability
      w.a[l] = (w.z[l].rowwise() - w.z[l].colwise().maxCoeff()).array().exp();
      w.a[l].array().rowwise() /= w.a[l].colwise().sum().array();
    }
  }
}

double Mlp::accumulate_gradient(const float* inputs, const std::uint8_t* labels, int batch, std::span<float> gradient,
                                Workspace& w) const {
  if (gradient.size() != parameters_.size()) throw std::invalid_argument("mlp: gradient buffer of the wrong size");
  forward(inputs, batch, w);
  const std::size_t layers = sizes_.size() - 1;
  const int classes = sizes_.back();
  double loss = 0;
  Eigen::MatrixXf& top = w.delta[layers - 1];
  top = w.a[layers - 1];
  for (int j = 0; j < batch; ++j) {
    const int label = labels[j];
    if (label >= classes) throw std::invalid_argument("mlp: label " + std::to_string(label) + " out of range");
    loss -= std::log(std::max(top(label, j), 1e-30F));
    top(label, j) -= 1.0F;  // d(loss)/d(z) of softmax cross-entropy
  }
  const Eigen::Map<const Eigen::MatrixXf> x(inputs, sizes_[0], batch);
  for (std::size_t l = layers; l-- > 0;) {
    Eigen::Map<Eigen::MatrixXf> weight_gradient(gradient.data() + weight_offset_[l], sizes_[l + 1], sizes_[l]);
    Eigen::Map<Eigen::VectorXf> bias_gradient(gradient.data() + bias_offset_[l], sizes_[l + 1]);
    if (l == 0) {
      weight_gradient.noalias() += w.delta[l] * x.transpose();
    } else {
      weight_gradient.noalias() += w.delta[l] * w.a[l - 1].transpose();
    }
    bias_gradient += w.delta[l].rowwise().sum();
    if (l > 0) {
      const Eigen::Map<const Eigen::MatrixXf> weights(parameters_.data() + weight_offset_[l], sizes_[l + 1], sizes_[l]);
      w.delta[l - 1].noalias() = weights.transpose() * w.delta[l];
      w.delta[l - 1].array() *= (w.z[l - 1].array() > 0.0F).cast<float>();
    }
  }
  return loss;
}

int Mlp::correct(const float* inputs, const std::uint8_t* labels, int count, Workspace& w, int block) const {
  int right = 0;
  for (int start = 0; start < count; start += block) {
    const int n = std::min(block, count - start);
    forward(inputs + static_cast<std::size_t>(start) * static_cast<std::size_t>(sizes_[0]), n, w);
    const Eigen::MatrixXf& p = w.a.back();
    for (int j = 0; j < n; ++j) {
      Eigen::Index best = 0;
      p.col(j).maxCoeff(&best);
      right += best == labels[start + j] ? 1 : 0;
    }
  }
  return right;
}

void Sgd::step(std::span<float> parameters, std::span<const float> gradient_sum, int batch, const SgdSettings& settings,
               double learning_rate) {
  if (parameters.size() != velocity_.size() || gradient_sum.size() != velocity_.size()) {
    throw std::invalid_argument("sgd: buffers of the wrong size");
  }
  const auto scale = static_cast<float>(1.0 / batch);
  const auto momentum = static_cast<float>(settings.momentum);
  const auto decay = static_cast<float>(settings.weight_decay);
  const auto rate = static_cast<float>(learning_rate);
  for (std::size_t i = 0; i < velocity_.size(); ++i) {
    velocity_[i] = momentum * velocity_[i] + (gradient_sum[i] * scale + decay * parameters[i]);
    parameters[i] -= rate * velocity_[i];
  }
}

}  // namespace dtsim
