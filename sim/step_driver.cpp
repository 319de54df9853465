#include "sim/step_driver.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim {
namespace {

// One unit's progress through its steps. Once a step starts, its whole compute timeline is known but for the waits
// on its allreduces.
struct UnitState {
  int step = 0;
  std::size_t bucket = 0;
  double start = 0;  // of the step
  double input_stall = 0;
  double backward_start = 0;
  double bucket_start = 0;
  double comm = 0;            // allreduce time in this step
  double loaded = 0;          // when the loader finished its last batch
  std::vector<double> taken;  // when the step of each batch took it (the loader reuses a slot after `prefetch`)
  LastStep last;
};

class TrainingStep {
public:
  TrainingStep(const TrainingProgram& t, int units, Network& network, RunTrace* trace)
      : t_(t), network_(network), units_(static_cast<std::size_t>(units)), trace_(trace) {
    forward_total_ = std::accumulate(t.forward_s.begin(), t.forward_s.end(), 0.0);
    backward_total_ = std::accumulate(t.backward_s.begin(), t.backward_s.end(), 0.0);
    std::size_t next = 0;
    double at = 0;
    ready_after_.assign(t.buckets.size(), backward_total_);
    for (std::size_t l = t.backward_s.size(); l-- > 0;) {
      at += t.backward_s[l];
      while (t.overlap && next < t.bucket_ready_after.size() && t.bucket_ready_after[next] == l)
        ready_after_[next++] = at;
    }
  }

  void start() {
    for (std::size_t u = 0; u < units_.size(); ++u)
      begin_step(static_cast<int>(u), 0.0);
  }

  // A unit's allreduce of its current bucket is done: the next bucket, or the end of the step.
  void bucket_done(int unit) {
    UnitState& us = units_[static_cast<std::size_t>(unit)];
    const double now = network_.now();
    us.comm += now - us.bucket_start;
    span(unit, SpanKind::allreduce, t_.buckets[us.bucket].bytes, us.bucket_start, now);
    if (++us.bucket < t_.buckets.size()) {
      start_bucket(unit, now);
    } else {
      end_step(unit, std::max(us.backward_start + backward_total_, now));
    }
  }

  TrainingResult result() const {
    std::vector<LastStep> last;
    last.reserve(units_.size());
    for (const UnitState& us : units_)
      last.push_back(us.last);
    return slowest_step(last, t_);
  }

  bool finished() const {
    return std::all_of(units_.begin(), units_.end(), [&](const UnitState& us) { return us.step == t_.steps; });
  }

private:
  void span(int unit, SpanKind kind, std::uint64_t bytes, double start_s, double end_s) {
    if (trace_ != nullptr) trace_->spans.push_back({unit, kind, bytes, start_s, end_s});
  }

  void begin_step(int unit, double start) {
    UnitState& us = units_[static_cast<std::size_t>(unit)];
    us.start = start;
    us.comm = 0;
    us.bucket = 0;
    double input = start;
    if (t_.batch_s > 0) {
      const std::size_t batch = static_cast<std::size_t>(us.step);
      const auto prefetch = static_cast<std::size_t>(t_.prefetch);
      const double slot = batch < prefetch ? 0.0 : us.taken[batch - prefetch];
      us.loaded = std::max(us.loaded, slot) + t_.batch_s;
      input = std::max(start, us.loaded);
      us.taken.push_back(input);
    }
    us.input_stall = input - start;
    if (us.input_stall > 0) span(unit, SpanKind::input_stall, 0, start, input);
    us.backward_start = input + forward_total_;
    span(unit, SpanKind::forward, 0, input, us.backward_start);
    span(unit, SpanKind::backward, 0, us.backward_start, us.backward_start + backward_total_);
    if (t_.buckets.empty()) {
      end_step(unit, us.backward_start + backward_total_);
    } else {
      start_bucket(unit, 0.0);
    }
  }

  void start_bucket(int unit, double previous_end) {
    UnitState& us = units_[static_cast<std::size_t>(unit)];
    double at = std::max(previous_end, us.backward_start + ready_after_[us.bucket]);
    if (t_.fusion_cycle_s > 0) at = std::ceil(at / t_.fusion_cycle_s) * t_.fusion_cycle_s;
    us.bucket_start = at;
    network_.start_segment(unit, us.bucket, at);
  }

  // All allreduces done at `done` (or none): the optimizer, then the next step.
  void end_step(int unit, double done) {
    UnitState& us = units_[static_cast<std::size_t>(unit)];
    const double end = done + t_.optimizer_s;
    span(unit, SpanKind::optimizer, 0, done, end);
    us.last = {end - us.start, us.input_stall, done - (us.backward_start + backward_total_), us.comm};
    if (++us.step < t_.steps) begin_step(unit, end);
  }

  const TrainingProgram& t_;
  Network& network_;
  std::vector<UnitState> units_;
  RunTrace* trace_;
  double forward_total_ = 0;
  double backward_total_ = 0;
  std::vector<double> ready_after_;  // bucket b is ready this long after backward starts
};

}  // namespace

TrainingResult drive_training(const TrainingProgram& program, Network& network, int units, const char* engine,
                              RunTrace* trace) {
  TrainingStep step(program, units, network, trace);
  step.start();
  network.run([&](int unit) { step.bucket_done(unit); });
  if (!step.finished()) {
    throw std::runtime_error(std::string(engine) + ": training step deadlocked: " +
                             std::to_string(network.inside_segments()) + " units never finished");
  }
  return step.result();
}

}  // namespace dtsim
