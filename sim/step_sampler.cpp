#include "sim/step_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace dtsim {
namespace {

// The program's layers grouped as the fast sampler draws them: forward, each stretch of backward that completes a
// bucket (in bucket order), the stretch after the last bucket, the optimizer. Per stretch: its layers [first, end)
// (forward order), the sum of their times and of their squares (per-kernel normal jitter).
struct Stretch {
  std::size_t first = 0;
  std::size_t end = 0;
  double sum_s = 0;
  double sum_squares = 0;
};

Stretch stretch(const std::vector<double>& times, std::size_t first, std::size_t end) {
  Stretch s{first, end, 0, 0};
  for (std::size_t l = first; l < end; ++l) {
    s.sum_s += times[l];
    s.sum_squares += times[l] * times[l];
  }
  return s;
}

// Per-kernel keys as the step driver draws them (sim/step_driver.cpp): data parallelism runs op 0 (forward) and op 1
// (backward); kernel (op x layers + layer) x 2 + forward; the optimizer ~0.
constexpr std::uint64_t optimizer_kernel = ~std::uint64_t{0};

class StepSampler {
public:
  StepSampler(const TrainingProgram& program, int ranks, const std::vector<double>& bucket_s,
              const SamplingRequest& request)
      : p_(program), ranks_(ranks), bucket_s_(bucket_s), request_(request) {
    const std::size_t layers = program.forward_s.size();
    const std::size_t buckets = program.bucket_ready_after.size();
    if (bucket_s.size() != buckets) {
      throw std::invalid_argument("step sampler: " + std::to_string(bucket_s.size()) + " bucket times for " +
                                  std::to_string(buckets) + " buckets");
    }
    forward_ = stretch(program.forward_s, 0, layers);
    std::size_t end = layers;
    for (std::size_t b = 0; b < buckets; ++b) {
      backward_.push_back(stretch(program.backward_s, program.bucket_ready_after[b], end));
      end = program.bucket_ready_after[b];
    }
    backward_.push_back(stretch(program.backward_s, 0, end));  // after the last bucket (layers without gradients)
    const ComputeJitter* jitter = request.variability != nullptr ? &request.variability->jitter : nullptr;
    if (jitter != nullptr && jitter->active()) jitter_ = jitter;
    per_layer_ = jitter_ != nullptr && jitter_->scope == JitterScope::kernel &&
                 jitter_->distribution != JitterDistribution::normal;
    const auto r = static_cast<std::size_t>(ranks);
    end_.resize(r);
    start_.resize(r);
    loaded_.resize(r);
    taken_.resize(r * static_cast<std::size_t>(program.steps));
    backward_end_.resize(r);
    optimizer_.resize(r);
    ready_.resize(buckets);
    noise_.jitter = jitter_;
    noise_.seed = request.seed;
    if (request.variability != nullptr && request.variability->bursts.active()) bursts_ = &request.variability->bursts;
  }

  double sample(std::uint64_t sample) {
    noise_.sample = sample;
    if (bursts_ != nullptr)
      phase_s_ = counter_uniform(request_.seed ^ burst_stream, sample, 0, 0, 0) * bursts_->period_s;
    noise_.rank_scale = sample_rank_scale(request_, ranks_, sample);
    std::fill(end_.begin(), end_.end(), 0.0);
    std::fill(loaded_.begin(), loaded_.end(), 0.0);
    const std::size_t buckets = ready_.size();
    double slowest = 0;
    for (int step = 0; step < p_.steps; ++step) {
      std::fill(ready_.begin(), ready_.end(), 0.0);
      for (int r = 0; r < ranks_; ++r) {
        const auto i = static_cast<std::size_t>(r);
        start_[i] = end_[i];
        double t = start_[i];
        if (p_.batch_s > 0) {  // the loader, as the driver runs it
          const auto batch = static_cast<std::size_t>(step);
          const auto prefetch = static_cast<std::size_t>(p_.prefetch);
          const std::size_t row = i * static_cast<std::size_t>(p_.steps);
          const double slot = batch < prefetch ? 0.0 : taken_[row + batch - prefetch];
          loaded_[i] = std::max(loaded_[i], slot) + p_.batch_s;
          t = std::max(t, loaded_[i]);
          taken_[row + batch] = t;
        }
        const double g = noise_.scale(r) * noise_.step_factor(r, step);
        t += g * timed(forward_, r, step, true, 0);
        for (std::size_t b = 0; b < buckets; ++b) {
          t += g * timed(backward_[b], r, step, false, 1 + b);
          if (p_.overlap) ready_[b] = std::max(ready_[b], t);
        }
        t += g * timed(backward_.back(), r, step, false, 1 + buckets);
        if (!p_.overlap) {
          for (double& ready : ready_)
            ready = std::max(ready, t);
        }
        backward_end_[i] = t;
        const double kernel =
            kernel_draw(r, step, optimizer_kernel, p_.optimizer_s, p_.optimizer_s * p_.optimizer_s, buckets + 2);
        optimizer_[i] = g * kernel;
      }
      double reduced = 0;  // when the last reduction ended
      for (std::size_t b = 0; b < buckets; ++b) {
        double at = std::max(reduced, ready_[b]);
        if (p_.fusion_cycle_s > 0) at = std::ceil(at / p_.fusion_cycle_s) * p_.fusion_cycle_s;
        reduced = at + bucket_s_[b] * burst_factor(at);
      }
      slowest = 0;
      for (std::size_t i = 0; i < end_.size(); ++i) {
        const double t = std::max(backward_end_[i], buckets > 0 ? reduced : 0.0);
        end_[i] = t + optimizer_[i];
        slowest = std::max(slowest, end_[i] - start_[i]);
      }
    }
    return slowest;
  }

private:
  // A reduction starting at `at` (on the sample's clock) inside a burst of other traffic takes 1 / (1 - load) as long.
  double burst_factor(double at) const {
    if (bursts_ == nullptr) return 1.0;
    return std::fmod(at + phase_s_, bursts_->period_s) < bursts_->duration_s ? 1.0 / (1.0 - bursts_->load) : 1.0;
  }

  // A stretch's time on rank r in `step` (before the step factor): per-kernel jitter drawn per layer with the
  // driver's keys, or once for the stretch (normal: the sum of independent normal kernels is normal).
  double timed(const Stretch& s, int r, int step, bool forward, std::size_t index) {
    if (jitter_ == nullptr || jitter_->scope != JitterScope::kernel) return s.sum_s;
    if (!per_layer_) return kernel_draw(r, step, 0, s.sum_s, s.sum_squares, index);
    const std::vector<double>& times = forward ? p_.forward_s : p_.backward_s;
    const std::size_t layers = times.size();
    const std::uint64_t op = forward ? 0 : 1;
    double sum = 0;
    for (std::size_t l = s.first; l < s.end; ++l)
      sum += times[l] * noise_.kernel_factor(r, step, (op * layers + l) * 2 + (forward ? 1 : 0));
    return sum;
  }

  // One kernel (or a stretch of normal kernels, `index` its stretch) of mean `mean_s`.
  double kernel_draw(int r, int step, std::uint64_t kernel, double mean_s, double sum_squares, std::size_t index) {
    if (jitter_ == nullptr || jitter_->scope != JitterScope::kernel) return mean_s;
    if (per_layer_) return mean_s * noise_.kernel_factor(r, step, kernel);
    const double z = counter_normal(request_.seed ^ stretch_stream, noise_.sample, static_cast<std::uint64_t>(r),
                                    static_cast<std::uint64_t>(step), index);
    return std::max(0.05 * mean_s, mean_s + jitter_->sigma * std::sqrt(sum_squares) * z);
  }

  static constexpr std::uint64_t stretch_stream = 0x73747265746368ULL;  // ("stretch")
  static constexpr std::uint64_t burst_stream = 0x6275727374ULL;        // ("burst")
  const TrafficBursts* bursts_ = nullptr;
  double phase_s_ = 0;
  const TrainingProgram& p_;
  int ranks_;
  const std::vector<double>& bucket_s_;
  const SamplingRequest& request_;
  const ComputeJitter* jitter_ = nullptr;
  bool per_layer_ = false;
  ComputeNoise noise_;
  Stretch forward_;
  std::vector<Stretch> backward_;
  std::vector<double> end_, start_, loaded_, taken_, backward_end_, optimizer_, ready_;
};

}  // namespace

StepDistribution summarize_steps(std::vector<double> step_s, int bins) {
  if (step_s.empty()) throw std::invalid_argument("step distribution: no samples");
  StepDistribution d;
  d.samples = static_cast<int>(step_s.size());
  std::sort(step_s.begin(), step_s.end());
  const auto n = static_cast<double>(step_s.size());
  d.mean_s = std::accumulate(step_s.begin(), step_s.end(), 0.0) / n;
  const auto percentile = [&](double q) {  // nearest rank
    const auto k = static_cast<std::size_t>(std::ceil(q * n));
    return step_s[std::clamp<std::size_t>(k, 1, step_s.size()) - 1];
  };
  d.p50_s = percentile(0.50);
  d.median_s = step_s.size() % 2 == 1 ? step_s[step_s.size() / 2]
                                      : 0.5 * (step_s[step_s.size() / 2 - 1] + step_s[step_s.size() / 2]);
  d.p90_s = percentile(0.90);
  d.p99_s = percentile(0.99);
  d.min_s = step_s.front();
  d.max_s = step_s.back();
  const double width = (d.max_s - d.min_s) / bins;
  for (int b = 0; b < bins; ++b)
    d.histogram.push_back({d.min_s + b * width, b + 1 == bins ? d.max_s : d.min_s + (b + 1) * width, 0});
  for (const double s : step_s) {
    const int b = width > 0 ? std::min(bins - 1, static_cast<int>((s - d.min_s) / width)) : 0;
    ++d.histogram[static_cast<std::size_t>(b)].count;
  }
  if (width <= 0) d.histogram.resize(1);  // every sample alike: one bin
  return d;
}

std::vector<double> sample_rank_scale(const SamplingRequest& request, int ranks, std::uint64_t sample) {
  const Variability* v = request.variability;
  if (v == nullptr || (!v->slow.active() && v->devices.empty())) return {};
  std::vector<double> scale = rank_slowdowns(v->slow, ranks, request.ranks_per_node, request.seed, sample);
  if (request.device_slowdowns.size() != v->devices.size()) {
    throw std::logic_error("step sampler: device groups without their slowdowns");
  }
  for (std::size_t g = 0; g < v->devices.size(); ++g) {  // a node of another device: its ratio (factors multiply)
    const DeviceGroup& group = v->devices[g];
    const SlowNodes nodes{group.fraction, group.nodes, request.device_slowdowns[g]};
    if (!nodes.active()) continue;
    const std::vector<double> device =
        rank_slowdowns(nodes, ranks, request.ranks_per_node, request.seed, sample, g + 1);
    for (std::size_t r = 0; r < scale.size(); ++r)
      scale[r] *= device[r];
  }
  return scale;
}

std::vector<double> sample_steps_fast(const TrainingProgram& program, int ranks, const std::vector<double>& bucket_s,
                                      const SamplingRequest& request) {
  if (request.samples < 1) throw std::invalid_argument("step sampler: needs at least one sample");
  if (program.micro_batches != 1) throw std::invalid_argument("step sampler: one micro-batch a step only");
  StepSampler sampler(program, ranks, bucket_s, request);
  std::vector<double> steps;
  steps.reserve(static_cast<std::size_t>(request.samples));
  for (int s = 0; s < request.samples; ++s)
    steps.push_back(sampler.sample(static_cast<std::uint64_t>(s)));
  return steps;
}

}  // namespace dtsim
