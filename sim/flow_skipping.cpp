// Skipping what repeats: repetitions of a step run in lockstep rounds, and the periods of a pipeline in a periodic
// regime (FlowOptions::skip_repeats).
#include "sim/flow_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "sim/flow_lumping.hpp"

namespace dtsim::flow_engine {

void FlowEngine::skip_repeated_steps() {
  const std::size_t inside = inside_ - awaiting_release_;  // the ranks running a segment
  const bool repeat_known = ready_.size() == inside && lockstep_at_ >= 0 && posted_since_lockstep_ == inside;
  const double duration = now_ - lockstep_at_;
  lockstep_at_ = ready_.size() == inside ? now_ : -1;
  posted_since_lockstep_ = 0;
  if (!repeat_known) return;
  const double horizon = queue_.empty() ? infinity : queue_.next_at();  // the next thing that could change the rates
  if (horizon < infinity && !(duration > 0)) return;
  while (true) {
    std::uint32_t steps = std::numeric_limits<std::uint32_t>::max();
    for (const int rank : ready_) {
      RankState& st = ranks_[static_cast<std::size_t>(rank)];
      StepCursor next = st.step;
      std::size_t next_repeat = st.next_repeat;
      if (!next_step(st, next, next_repeat) || !same_shape(*st.segment, st.step, next)) return;
      const bool rotation = next.repeat != nullptr && next.repeat == st.step.repeat && st.segment->even;
      steps = std::min(steps, rotation ? next.repeat->count - st.step.k : 1U);
    }
    if (horizon < infinity) {  // only repetitions that end by then
      const double room = std::floor((horizon - now_) / duration * (1 + 1e-12));
      if (room < 1) return;
      if (room < steps) steps = static_cast<std::uint32_t>(room);
    }
    for (const int rank : ready_) {
      RankState& st = ranks_[static_cast<std::size_t>(rank)];
      if (steps == 1) {
        next_step(st, st.step, st.next_repeat);
        count_sends(st, st.step.k, 1);
      } else {  // a rotation: repetitions k+1 .. k+steps of the same stored step
        count_sends(st, st.step.k + 1, steps);
        st.step.k += steps;
      }
    }
    now_ += duration * steps;
    lockstep_at_ = now_;
    skipped_steps_ += steps;
  }
}

FlowEngine::Snapshot FlowEngine::snapshot() const {
  Snapshot snap;
  snap.at = now_;
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    const RankState& st = ranks_[r];
    // (several streams: ranks outside every segment are idle, and stay so while no running rank ends its segment)
    if (o_.segment_rounds && st.segment == nullptr) continue;
    if (st.segment == nullptr || st.step.repeat == nullptr || !st.segment->even) return snap;
    snap.units.push_back(r);
    snap.k.push_back(st.step.k);
    snap.keys.insert(snap.keys.end(), {static_cast<std::uint64_t>(st.segment - segments_.data()), st.step.begin,
                                       st.outstanding, st.reduce_bytes});
  }
  flow_order_.clear();
  for (std::uint32_t id = 0; id < flows_.size(); ++id) {
    if (flows_[id].alive) flow_order_.push_back(id);
  }
  std::sort(flow_order_.begin(), flow_order_.end(), [this](std::uint32_t a, std::uint32_t b) {
    const Flow& x = flows_[a];
    const Flow& y = flows_[b];
    return std::tie(x.src, x.dst, x.latency_end, x.remaining) < std::tie(y.src, y.dst, y.latency_end, y.remaining);
  });
  for (const std::uint32_t id : flow_order_) {
    const Flow& f = flows_[id];
    const bool moving = f.latency_end <= now_;
    snap.keys.insert(snap.keys.end(),
                     {static_cast<std::uint64_t>(f.src), static_cast<std::uint64_t>(f.dst), moving ? 1U : 0U});
    const double left = moving ? f.remaining - f.rate * (now_ - f.updated_at) : f.remaining;
    snap.values.insert(snap.values.end(), {left, f.rate, moving ? 0.0 : f.latency_end - now_});
    if (f.eager) snap.keys.push_back(f.claimed ? 2U : 1U);
  }
  bool releases = false;
  std::vector<std::pair<std::uint64_t, double>> timers;
  queue_.for_each([&](double at, const Event& e) {
    if (e.kind == EventKind::release) releases = true;
    if (e.kind == EventKind::reduce_done || e.kind == EventKind::compute_done || e.kind == EventKind::recv_ready) {
      timers.emplace_back(static_cast<std::uint64_t>(e.id) * 8 + static_cast<std::uint64_t>(e.kind), at - now_);
    }
  });
  if (releases) return snap;  // a segment about to start: its time is set from outside
  std::sort(timers.begin(), timers.end());
  for (const auto& [key, in] : timers) {
    snap.keys.push_back(key);
    snap.values.push_back(in);
  }
  for (const Channel& c : channels_) {
    snap.keys.insert(snap.keys.end(), {c.waiting_recvs, c.sends});
    for (std::uint32_t i = c.first_send; i != none; i = pending_[i].next)
      snap.keys.push_back(pending_[i].bytes);
    snap.keys.push_back(c.eager);
    for (std::uint32_t i = c.first_eager; i != none; i = eager_[i].next) {  // moving (its flow's figures), or arrived
      snap.keys.push_back(eager_[i].flow == none ? 0U : 1U);
      if (eager_[i].flow == none) snap.values.push_back(eager_[i].ready_at - now_);
    }
  }
  snap.valid = true;
  return snap;
}

void FlowEngine::skip_periods() {
  ++anchors_;
  if (anchors_ % 8 == 0) {
    period_start_ = snapshot();
    return;
  }
  if (anchors_ % 8 != 1 || !period_start_.valid) return;
  const Snapshot now = snapshot();
  const Snapshot& then = period_start_;
  if (!now.valid || now.units != then.units || now.keys != then.keys || now.values.size() != then.values.size()) {
    return;
  }
  const double period = now.at - then.at;
  if (period <= 0) return;
  std::uint32_t periods = std::numeric_limits<std::uint32_t>::max();
  for (std::size_t i = 0; i < now.units.size(); ++i) {
    if (now.k[i] != then.k[i] + 1) return;  // (the keys hold each rank's stored step: the same one)
    periods = std::min(periods, ranks_[now.units[i]].step.repeat->count - now.k[i]);
  }
  for (std::size_t i = 0; i < now.values.size(); ++i) {
    const double a = now.values[i], b = then.values[i];
    if (std::fabs(a - b) > 1e-9 * std::max({std::fabs(a), std::fabs(b), period})) return;
  }
  if (periods == 0) return;
  const double by = period * periods;
  now_ += by;
  queue_.shift(by);
  finishing_.shift(by);
  for (Flow& f : flows_) {
    if (!f.alive) continue;
    f.updated_at += by;
    f.latency_end += by;
  }
  for (const Channel& c : channels_) {
    for (std::uint32_t i = c.first_eager; i != none; i = eager_[i].next)
      if (eager_[i].flow == none) eager_[i].ready_at += by;
  }
  for (const std::uint32_t r : now.units) {
    RankState& st = ranks_[r];
    count_sends(st, st.step.k + 1, periods);
    st.step.k += periods;
  }
  skipped_steps_ += periods;
  lockstep_at_ = -1;
  period_start_.valid = false;
}

void FlowEngine::count_sends(const RankState& st, std::uint32_t first, std::uint32_t count) {
  const Segment& segment = *st.segment;
  const Schedule& s = *segment.schedule;
  for (std::uint64_t i = st.step.begin; i < st.step.end; ++i) {
    const Op& op = s.ops[i];
    if (op.kind() != OpKind::send) continue;
    messages_ += count;
    const StepRepeat* r = st.step.repeat;
    if (r == nullptr) {
      bytes_sent_ += s.span_bytes(op.span());
    } else if (count > 1 && (r->stride == 1 || r->stride + 1 == r->modulus)) {
      // chunks visited: a run of `count` consecutive ones (mod the rotation), ascending or descending
      const std::uint32_t a = r->shifted(op.span(), first), b = r->shifted(op.span(), first + count - 1);
      const std::uint32_t low = r->stride == 1 ? a : b, high = r->stride == 1 ? b : a;
      const auto& prefix = segment.chunk_prefix;
      bytes_sent_ += low <= high ? prefix[high + 1] - prefix[low]
                                 : (prefix[r->base + r->modulus] - prefix[low]) + (prefix[high + 1] - prefix[r->base]);
    } else {
      for (std::uint32_t k = first; k < first + count; ++k)
        bytes_sent_ += s.span_bytes(r->shifted(op.span(), k));
    }
  }
}

bool FlowEngine::same_shape(const Segment& segment, const StepCursor& a, const StepCursor& b) {
  if (a.end - a.begin != b.end - b.begin) return false;
  const Schedule& s = *segment.schedule;
  for (std::uint64_t i = 0; i < a.end - a.begin; ++i) {
    const Op& x = s.ops[a.begin + i];
    const Op& y = s.ops[b.begin + i];
    if (x.kind() != y.kind() || x.peer() != y.peer()) return false;
    if (x.kind() == OpKind::compute) {
      if (s.compute_flops[x.compute_index()] != s.compute_flops[y.compute_index()]) return false;
    } else if (timed_bytes(segment, span_of(a, x)) != timed_bytes(segment, span_of(b, y))) {
      return false;
    }
  }
  return true;
}

}  // namespace dtsim::flow_engine
