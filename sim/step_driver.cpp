#include "sim/step_driver.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine_constants.hpp"

namespace dtsim {
namespace {

using engine::infinity;

enum class Wait : std::uint8_t { nothing, tensor, receive_forward, receive_backward, gather, reduce, finished };

struct SendStream {  // the releases of the sends still to start, and whether one is on the network
  std::deque<double> pending;
  bool busy = false;
};

// One rank's progress through its steps. The compute stream runs ahead of the network's clock as far as its
// dependencies allow: `t` is when it is next free.
struct RankRun {
  int step = 0;
  double step_start = 0;
  double t = 0;
  std::size_t op = 0;     // in the stage's order
  std::size_t layer = 0;  // layers done in the current op
  bool in_op = false;
  double op_start = 0;
  Wait wait = Wait::nothing;
  double wait_start = 0;
  bool waits_expert = false;   // the compute stream waits for an expert all-to-all (else a tensor allreduce)
  bool waits_context = false;  // or for a context-parallel exchange
  int forwards = 0;            // forward and backward ops entered this step
  int backwards = 0;
  std::vector<double> forward_arrival;  // per micro-batch, in arrival order
  std::vector<double> backward_arrival;
  int forward_received = 0;
  int backward_received = 0;
  SendStream send_forward;
  SendStream send_backward;
  std::vector<double> bucket_ready;  // when each released bucket became ready
  std::size_t buckets_ready = 0;
  std::size_t next_bucket = 0;
  std::size_t buckets_done = 0;
  bool reduce_busy = false;
  int reduce_units_left = 0;  // of the bucket being reduced: its units still running (StepProgram channels)
  double bucket_start = 0;
  double reduce_free_at = 0;  // when the last reduction of this step ended (0: none yet)
  std::vector<double> gather_done_at;
  std::size_t gathers_started = 0;
  std::size_t gathers_done = 0;
  std::size_t gather_needed = 0;
  bool gather_busy = false;
  double loaded = 0;          // when the loader finished its last batch
  std::vector<double> taken;  // when the step of each batch took it (the loader reuses a slot after `prefetch`)
  double step_factor = 1;     // this step's scale of every compute (the rank's slowdown times its step's jitter draw)
  // A transport on the processor that computes (StageStep::bucket_wire_s): the buckets released and not yet drained
  // in the rank's fluid model, with their line-rate seconds left, and when each bucket's reduction may start
  std::deque<std::pair<std::size_t, double>> draining;
  std::vector<double> bucket_start_at;
  RankStep current;
  RankStep last;
};

class StepDriver {
public:
  StepDriver(const StepProgram& p, Network& network, const DrivenRanks& driven, RunTrace* trace)
      : p_(p), network_(network), driven_(driven), runs_(driven.rank.size()), trace_(trace) {
    for (std::size_t i = 0; i < driven.rank.size(); ++i) {
      for (std::size_t k = 0; k < stream_count; ++k) {
        const int u = driven.unit[i][k];
        if (u < 0) continue;
        if (static_cast<std::size_t>(u) >= owner_of_unit_.size())
          owner_of_unit_.resize(static_cast<std::size_t>(u) + 1, {-1, Stream::compute});
        owner_of_unit_[static_cast<std::size_t>(u)] = {static_cast<int>(i), static_cast<Stream>(k)};
      }
      if (i < driven.more_reduce_units.size()) {
        for (const int u : driven.more_reduce_units[i]) {
          if (static_cast<std::size_t>(u) >= owner_of_unit_.size())
            owner_of_unit_.resize(static_cast<std::size_t>(u) + 1, {-1, Stream::compute});
          owner_of_unit_[static_cast<std::size_t>(u)] = {static_cast<int>(i), Stream::reduce};
        }
      }
    }
    const int stages = static_cast<int>(p.stages.size());
    for (int s = 0; s < stages; ++s) {
      orders_.push_back(stage_order(s, stages, p.micro_batches, p.schedule));
      const StageStep& st = p.stages[static_cast<std::size_t>(s)];
      std::vector<int> bucket(st.layers.size(), -1);
      for (std::size_t b = 0; b < st.bucket_ready_after.size(); ++b) {
        const std::size_t end = b == 0 ? st.layers.size() : st.bucket_ready_after[b - 1];
        for (std::size_t l = st.bucket_ready_after[b]; l < end; ++l)
          bucket[l] = static_cast<int>(b);
      }
      bucket_of_layer_.push_back(std::move(bucket));
    }
  }

  void start() {
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      begin_step(static_cast<int>(r), 0.0);
      advance(static_cast<int>(r));
    }
  }

  void segment_done(int unit) {
    int rank = 0;
    const Stream stream = stream_of(unit, rank);
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    const double now = network_.now();
    switch (stream) {
      case Stream::compute:  // a tensor-parallel allreduce or an expert-parallel all-to-all
        // (asynchronous tensor parallelism: the segment started during the layer's compute, which may end later)
        (rr.waits_expert    ? rr.current.expert_s
         : rr.waits_context ? rr.current.context_s
                            : rr.current.tensor_s) += std::max(0.0, now - rr.wait_start);
        rr.t = std::max(now, rr.wait_start);
        resume(rank, Wait::tensor);
        break;
      case Stream::send_forward: next_send(rank, Stream::send_forward, rr.send_forward, st.send_forward_segment); break;
      case Stream::send_backward:
        next_send(rank, Stream::send_backward, rr.send_backward, st.send_backward_segment);
        break;
      case Stream::receive_forward: receive_done(rank, true, now); break;
      case Stream::receive_backward: receive_done(rank, false, now); break;
      case Stream::reduce: reduce_done(rank, now); break;
      case Stream::gather: gather_done(rank, now); break;
    }
  }

  StepRun result() const {
    StepRun run;
    run.driven_ranks = static_cast<int>(runs_.size());
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (r == 0 || runs_[r].last.step_s > run.slowest.step_s) {
        run.slowest_rank = driven_.rank[r];
        run.slowest = runs_[r].last;
      }
    }
    return run;
  }

  bool finished() const {
    return std::all_of(runs_.begin(), runs_.end(), [&](const RankRun& rr) { return rr.step == p_.steps; });
  }

private:
  // (`rank` below is a driven rank: an index into driven_)
  const StageStep& stage(int rank) const { return p_.stage_of_rank(driven_.rank[static_cast<std::size_t>(rank)]); }
  std::size_t stage_index(int rank) const { return p_.stage_index(driven_.rank[static_cast<std::size_t>(rank)]); }
  int unit(int rank, Stream stream) const {
    return driven_.unit[static_cast<std::size_t>(rank)][static_cast<std::size_t>(stream)];
  }

  Stream stream_of(int unit, int& rank) const {
    if (unit >= 0 && static_cast<std::size_t>(unit) < owner_of_unit_.size() &&
        owner_of_unit_[static_cast<std::size_t>(unit)].first >= 0) {
      rank = owner_of_unit_[static_cast<std::size_t>(unit)].first;
      return owner_of_unit_[static_cast<std::size_t>(unit)].second;
    }
    throw std::logic_error("step driver: unit " + std::to_string(unit) + " belongs to no stream");
  }

  void span(int rank, SpanKind kind, std::uint64_t bytes, double start_s, double end_s) {
    if (trace_ != nullptr) {
      trace_->spans.push_back({driven_.rank[static_cast<std::size_t>(rank)], kind, bytes, start_s, end_s});
    }
  }

  void resume(int rank, Wait was) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    if (rr.wait != was) return;
    rr.wait = Wait::nothing;
    advance(rank);
  }

  void begin_step(int rank, double start) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    rr.step_start = start;
    rr.current = RankStep{};
    if (p_.noise != nullptr) {
      const int r = driven_.rank[static_cast<std::size_t>(rank)];
      rr.step_factor = p_.noise->scale(r) * p_.noise->step_factor(r, rr.step);
    }
    rr.op = 0;
    rr.in_op = false;
    rr.forwards = rr.backwards = 0;
    double input = start;
    if (p_.batch_s > 0) {
      const auto batch = static_cast<std::size_t>(rr.step);
      const auto prefetch = static_cast<std::size_t>(p_.prefetch);
      const double slot = batch < prefetch ? 0.0 : rr.taken[batch - prefetch];
      rr.loaded = std::max(rr.loaded, slot) + p_.batch_s;
      input = std::max(start, rr.loaded);
      rr.taken.push_back(input);
    }
    rr.current.input_stall_s = input - start;
    if (input > start) span(rank, SpanKind::input_stall, 0, start, input);
    rr.t = input;
    for (const bool forward : {true, false}) {  // receives are posted ahead, from the start of the step
      if ((forward ? st.receive_forward_segment : st.receive_backward_segment) == no_segment) continue;
      (forward ? rr.forward_arrival : rr.backward_arrival).assign(static_cast<std::size_t>(p_.micro_batches), infinity);
      (forward ? rr.forward_received : rr.backward_received) = 0;
      post_receive(rank, forward, start);
    }
    rr.bucket_ready.assign(st.bucket_segment.size(), infinity);
    rr.draining.clear();
    if (!st.bucket_wire_s.empty()) rr.bucket_start_at.assign(st.bucket_segment.size(), infinity);
    rr.buckets_ready = rr.next_bucket = rr.buckets_done = 0;
    rr.reduce_free_at = 0;
    if (!st.gather_segment.empty()) {
      rr.gather_done_at.assign(2 * st.gather_segment.size(), infinity);
      rr.gathers_started = rr.gathers_done = 0;
      if (p_.gather_prefetch) start_gather(rank, rr.t);
    }
  }

  // Runs the rank's compute stream until it waits for the network or its last step ends.
  void advance(int rank) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    const std::vector<PipeOp>& order = orders_[stage_index(rank)];
    const std::size_t buckets = st.bucket_segment.size();
    while (rr.wait == Wait::nothing) {
      if (rr.op < order.size()) {
        const PipeOp o = order[rr.op];
        if (!rr.in_op) {
          if (!enter_op(rank, o)) return;
          rr.in_op = true;
          rr.layer = 0;
          rr.op_start = rr.t;
        }
        const std::size_t layers = st.layers.size();
        const bool last_op = rr.op + 1 == order.size();
        while (rr.layer < layers) {
          const std::size_t l = o.forward ? rr.layer : layers - 1 - rr.layer;
          if (!gathered(rank, o, l)) return;
          const LayerStep& ls = st.layers[l];
          double c = o.forward ? ls.forward_s : ls.backward_s;
          if (p_.noise != nullptr) c *= rr.step_factor * kernel_factor(rank, (rr.op * layers + l) * 2 + o.forward);
          if (!rr.draining.empty()) c = shared_compute(rank, c);
          rr.t += c;
          rr.current.compute_s += c;
          ++rr.layer;
          if (!o.forward && last_op && p_.overlap) {
            while (rr.buckets_ready < buckets && st.bucket_ready_after[rr.buckets_ready] == l)
              release_bucket(rank, rr.t);
          }
          if (ls.tensor_segment != no_segment) {
            rr.wait = Wait::tensor;
            rr.waits_expert = ls.expert;
            rr.waits_context = ls.context;
            rr.wait_start = rr.t;
            const double overlap = c * (o.forward ? ls.forward_overlap : ls.backward_overlap);
            network_.start_segment(unit(rank, Stream::compute), static_cast<std::size_t>(ls.tensor_segment),
                                   rr.t - overlap);
            return;
          }
        }
        span(rank, o.forward ? SpanKind::forward : SpanKind::backward, 0, rr.op_start, rr.t);
        if (o.forward && st.send_forward_segment != no_segment) {
          queue_send(rank, Stream::send_forward, rr.send_forward, st.send_forward_segment, rr.t);
        }
        if (!o.forward && st.send_backward_segment != no_segment) {
          queue_send(rank, Stream::send_backward, rr.send_backward, st.send_backward_segment, rr.t);
        }
        rr.in_op = false;
        ++rr.op;
        if (rr.op == order.size()) {
          while (rr.buckets_ready < buckets)  // (without overlap: all at once, after the whole backward)
            release_bucket(rank, rr.t);
          drain_alone(rank);
        }
        continue;
      }
      if (rr.buckets_done < buckets) {
        rr.wait = Wait::reduce;
        return;
      }
      if (buckets > 0 && rr.reduce_free_at > rr.t) {
        rr.current.exposed_s = rr.reduce_free_at - rr.t;
        rr.t = rr.reduce_free_at;
      }
      const double optimizer_s = p_.noise == nullptr
                                     ? st.optimizer_s
                                     : st.optimizer_s * rr.step_factor * kernel_factor(rank, optimizer_kernel);
      const double optimizer_end = rr.t + optimizer_s;
      span(rank, SpanKind::optimizer, 0, rr.t, optimizer_end);
      rr.current.optimizer_s = optimizer_s;
      rr.t = optimizer_end;
      rr.current.step_s = rr.t - rr.step_start;
      rr.last = rr.current;
      if (++rr.step == p_.steps) {
        rr.wait = Wait::finished;
        return;
      }
      begin_step(rank, rr.t);
    }
  }

  static constexpr std::uint64_t optimizer_kernel = ~std::uint64_t{0};
  double kernel_factor(int rank, std::uint64_t kernel) const {
    return p_.noise->kernel_factor(driven_.rank[static_cast<std::size_t>(rank)],
                                   runs_[static_cast<std::size_t>(rank)].step, kernel);
  }

  // The activations (forward) or gradients (backward) the op needs have arrived; false: the rank waits for them.
  bool enter_op(int rank, PipeOp o) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    const bool receives =
        o.forward ? st.receive_forward_segment != no_segment : st.receive_backward_segment != no_segment;
    if (receives) {
      const int k = o.forward ? rr.forwards : rr.backwards;
      const int received = o.forward ? rr.forward_received : rr.backward_received;
      if (received <= k) {
        rr.wait = o.forward ? Wait::receive_forward : Wait::receive_backward;
        return false;
      }
      const double arrival = (o.forward ? rr.forward_arrival : rr.backward_arrival)[static_cast<std::size_t>(k)];
      if (arrival > rr.t) {
        rr.current.bubble_s += arrival - rr.t;
        rr.t = arrival;
      }
    }
    ++(o.forward ? rr.forwards : rr.backwards);
    return true;
  }

  // ZeRO-3: layer l's parameters are gathered for the first forward (or backward) of the step; false: the rank
  // waits for them.
  bool gathered(int rank, PipeOp o, std::size_t l) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    if (st.gather_segment.empty() || (o.forward ? rr.forwards : rr.backwards) != 1) return true;
    const int b = bucket_of_layer_[stage_index(rank)][l];
    if (b < 0) return true;
    const std::size_t buckets = st.gather_segment.size();
    const std::size_t g = o.forward ? buckets - 1 - static_cast<std::size_t>(b) : buckets + static_cast<std::size_t>(b);
    if (rr.gathers_done <= g) {
      rr.gather_needed = g;
      rr.wait = Wait::gather;
      rr.wait_start = rr.t;
      if (!p_.gather_prefetch && !rr.gather_busy && rr.gathers_started <= g) start_gather(rank, rr.t);
      return false;
    }
    const double at = rr.gather_done_at[g];
    if (at > rr.t) {
      rr.current.gather_wait_s += at - rr.t;
      rr.t = at;
    }
    return true;
  }

  void post_receive(int rank, bool forward, double release) {
    const StageStep& st = stage(rank);
    network_.start_segment(unit(rank, forward ? Stream::receive_forward : Stream::receive_backward),
                           static_cast<std::size_t>(forward ? st.receive_forward_segment : st.receive_backward_segment),
                           release);
  }

  // The next activations (forward) or gradients (backward) have arrived: the receive after them is posted, and a
  // compute stream waiting for them goes on.
  void receive_done(int rank, bool forward, double now) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    int& received = forward ? rr.forward_received : rr.backward_received;
    (forward ? rr.forward_arrival : rr.backward_arrival)[static_cast<std::size_t>(received++)] = now;
    if (received < p_.micro_batches) post_receive(rank, forward, now);
    const Wait waiting = forward ? Wait::receive_forward : Wait::receive_backward;
    if (rr.wait == waiting && received >= (forward ? rr.forwards : rr.backwards) + 1) resume(rank, waiting);
  }

  void start_gather(int rank, double release) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    const std::size_t buckets = st.gather_segment.size();
    const std::size_t g = rr.gathers_started++;
    const std::size_t segment = g < buckets ? st.gather_segment[buckets - 1 - g] : st.gather_segment[g - buckets];
    rr.gather_busy = true;
    network_.start_segment(unit(rank, Stream::gather), segment, release);
  }

  void gather_done(int rank, double now) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const std::size_t all = 2 * stage(rank).gather_segment.size();
    rr.gather_done_at[rr.gathers_done++] = now;
    rr.gather_busy = false;
    const bool wanted = p_.gather_prefetch || (rr.wait == Wait::gather && rr.gathers_started <= rr.gather_needed);
    if (wanted && rr.gathers_started < all) start_gather(rank, now);
    if (rr.wait == Wait::gather && rr.gathers_done > rr.gather_needed) resume(rank, Wait::gather);
  }

  void queue_send(int rank, Stream stream, SendStream& s, std::int32_t segment, double release) {
    if (s.busy) {
      s.pending.push_back(release);
      return;
    }
    s.busy = true;
    network_.start_segment(unit(rank, stream), static_cast<std::size_t>(segment), release);
  }

  void next_send(int rank, Stream stream, SendStream& s, std::int32_t segment) {
    s.busy = false;
    if (s.pending.empty()) return;
    const double release = s.pending.front();
    s.pending.pop_front();
    queue_send(rank, stream, s, segment, release);
  }

  // How long `work` seconds of compute take from rr.t on while buckets drain through the rank's transport on the same
  // processor (StageStep::bucket_wire_s): both at their reduced rates until one is done; a drained bucket's reduction
  // may then start (as a full-rate transfer that ends when its drain did).
  double shared_compute(int rank, double work) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    const double r = st.compute_rate_while_transporting;
    const double a = st.transport_rate_while_computing;
    double t = rr.t;
    bool drained = false;
    while (work > 0 && !rr.draining.empty()) {
      auto& [b, left] = rr.draining.front();
      if (work / r <= left / a) {
        t += work / r;
        left -= a * work / r;
        work = 0;
        break;
      }
      t += left / a;
      work -= r * left / a;
      rr.bucket_start_at[b] = t - st.bucket_wire_s[b];
      rr.draining.pop_front();
      drained = true;
    }
    const double took = t + work - rr.t;
    if (drained) try_start_bucket(rank);
    return took;
  }

  // The backward pass is over: what is still draining drains at line rate, one bucket after another.
  void drain_alone(int rank) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    double t = rr.t;
    for (const auto& [b, left] : rr.draining) {
      t += left;
      rr.bucket_start_at[b] = t - st.bucket_wire_s[b];
    }
    rr.draining.clear();
    try_start_bucket(rank);
  }

  void release_bucket(int rank, double at) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const StageStep& st = stage(rank);
    if (!st.bucket_wire_s.empty()) rr.draining.emplace_back(rr.buckets_ready, st.bucket_wire_s[rr.buckets_ready]);
    rr.bucket_ready[rr.buckets_ready++] = at;
    try_start_bucket(rank);
  }

  // Starts the next released bucket's reduction if the reduce stream is free and (with a transport on the processor
  // that computes) the rank's fluid model has drained it.
  void try_start_bucket(int rank) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    if (rr.reduce_busy || rr.next_bucket >= rr.buckets_ready) return;
    if (!stage(rank).bucket_wire_s.empty() && rr.bucket_start_at[rr.next_bucket] == infinity) return;
    start_bucket(rank);
  }

  void start_bucket(int rank) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    const std::size_t b = rr.next_bucket;
    double at = std::max(rr.reduce_free_at, rr.bucket_ready[b]);
    if (!stage(rank).bucket_wire_s.empty()) at = std::max(at, rr.bucket_start_at[b]);
    if (p_.fusion_cycle_s > 0) at = std::ceil(at / p_.fusion_cycle_s) * p_.fusion_cycle_s;
    rr.bucket_start = at;
    rr.reduce_busy = true;
    network_.start_segment(unit(rank, Stream::reduce), stage(rank).bucket_segment[b], at);
    rr.reduce_units_left = 1;
    if (static_cast<std::size_t>(rank) < driven_.more_reduce_units.size()) {  // its other channels, at once
      for (const int u : driven_.more_reduce_units[static_cast<std::size_t>(rank)]) {
        network_.start_segment(u, stage(rank).bucket_segment[b], at);
        ++rr.reduce_units_left;
      }
    }
  }

  void reduce_done(int rank, double now) {
    RankRun& rr = runs_[static_cast<std::size_t>(rank)];
    if (--rr.reduce_units_left > 0) return;  // (its other channels still reducing)
    const StageStep& st = stage(rank);
    rr.current.reduce_s += now - rr.bucket_start;
    const Schedule& bucket = *p_.segments[st.bucket_segment[rr.next_bucket]];  // (a library's channels: a share each)
    span(rank, SpanKind::allreduce, bucket.bytes * bucket.channels, rr.bucket_start, now);
    rr.reduce_free_at = now;
    rr.reduce_busy = false;
    if (p_.progress != nullptr) report_reduction();
    ++rr.next_bucket;
    ++rr.buckets_done;
    try_start_bucket(rank);
    if (rr.buckets_done == st.bucket_segment.size()) resume(rank, Wait::reduce);
  }

  // One more bucket reduction done: the progress callback, each thousandth of all of them.
  void report_reduction() {
    if (reductions_total_ == 0) {
      for (std::size_t r = 0; r < runs_.size(); ++r)
        reductions_total_ += stage(static_cast<int>(r)).bucket_segment.size() * static_cast<std::uint64_t>(p_.steps);
    }
    const std::uint64_t permille = ++reductions_done_ * 1000 / std::max<std::uint64_t>(reductions_total_, 1);
    if (permille == reported_permille_) return;
    reported_permille_ = permille;
    (*p_.progress)(static_cast<double>(reductions_done_) / static_cast<double>(reductions_total_));
  }

  const StepProgram& p_;
  Network& network_;
  std::uint64_t reductions_total_ = 0;
  std::uint64_t reductions_done_ = 0;
  std::uint64_t reported_permille_ = 0;
  const DrivenRanks& driven_;
  std::vector<std::pair<int, Stream>> owner_of_unit_ = {};  // by unit: its driven rank (-1: none) and stream
  std::vector<RankRun> runs_;
  RunTrace* trace_;
  std::vector<std::vector<PipeOp>> orders_;        // per stage
  std::vector<std::vector<int>> bucket_of_layer_;  // per stage and layer: its bucket (-1: none)
};

}  // namespace

DrivenRanks every_rank(const StepProgram& program) {
  DrivenRanks d;
  for (int r = 0; r < program.ranks; ++r) {
    d.rank.push_back(r);
    std::array<int, stream_count> units{};
    for (std::size_t k = 0; k < stream_count; ++k)
      units[k] = program.stream_base[k] >= 0 ? program.unit(r, static_cast<Stream>(k)) : -1;
    d.unit.push_back(units);
    std::vector<int> more;
    for (int c = 1; c < program.reduce_channels && units[static_cast<std::size_t>(Stream::reduce)] >= 0; ++c)
      more.push_back(units[static_cast<std::size_t>(Stream::reduce)] + c * program.ranks);
    if (r == 0) more.insert(more.end(), program.helper_units.begin(), program.helper_units.end());
    d.more_reduce_units.push_back(std::move(more));
  }
  return d;
}

StepRun drive_step(const StepProgram& program, Network& network, const char* engine, RunTrace* trace) {
  return drive_step(program, network, every_rank(program), engine, trace);
}

StepRun drive_step(const StepProgram& program, Network& network, const DrivenRanks& driven, const char* engine,
                   RunTrace* trace) {
  StepDriver driver(program, network, driven, trace);
  driver.start();
  network.run([&](int unit) { driver.segment_done(unit); });
  if (!driver.finished()) {
    throw std::runtime_error(std::string(engine) + ": training step deadlocked: " +
                             std::to_string(network.inside_segments()) + " units never finished");
  }
  return driver.result();
}

StepProgram data_parallel_step(const TrainingProgram& t, int ranks) {
  StepProgram p;
  p.ranks = ranks;
  p.reduce_channels = t.reduce_channels;
  p.use_stream(Stream::reduce);
  for (std::size_t h = 0; h < t.helper_endpoints.size(); ++h)
    p.helper_units.push_back(p.units++);
  StageStep stage;
  for (std::size_t l = 0; l < t.forward_s.size(); ++l)
    stage.layers.push_back({t.forward_s[l], t.backward_s[l], no_segment});
  p.micro_batches = t.micro_batches;
  if (t.micro_batches > 1 && t.noise == nullptr && !stage.layers.empty()) {
    // Gradient accumulation without variability: the micro-batches before the last only compute (nothing is sent
    // until the last backward), so they run as one compute ahead of the last one's first layer, the same time as
    // micro-batch by micro-batch at any count (a 65536-sample step of micro-batches of 4 is 16384 of them).
    // With variability each micro-batch's kernels draw their own times, so they run one by one.
    double one = 0;
    for (const LayerStep& layer : stage.layers)
      one += layer.forward_s + layer.backward_s;
    stage.layers.front().forward_s += (t.micro_batches - 1) * one;
    p.micro_batches = 1;
  }
  stage.bucket_ready_after = t.bucket_ready_after;
  stage.bucket_wire_s = t.bucket_wire_s;
  stage.compute_rate_while_transporting = t.compute_rate_while_transporting;
  stage.transport_rate_while_computing = t.transport_rate_while_computing;
  for (std::size_t b = 0; b < t.buckets.size(); ++b) {
    stage.bucket_segment.push_back(b);
    p.segments.push_back(&t.buckets[b]);
  }
  stage.optimizer_s = t.optimizer_s;
  p.stages.push_back(std::move(stage));
  p.overlap = t.overlap;
  p.fusion_cycle_s = t.fusion_cycle_s;
  p.batch_s = t.batch_s;
  p.prefetch = t.prefetch;
  p.steps = t.steps;
  p.noise = t.noise;
  p.progress = t.progress;
  return p;
}

TrainingResult drive_training(const TrainingProgram& program, Network& network, int units, const char* engine,
                              RunTrace* trace) {
  const StepProgram step = data_parallel_step(program, units);
  return training_result(program, drive_step(step, network, engine, trace));
}

TrainingResult training_result(const TrainingProgram& program, const StepRun& run) {
  TrainingResult result;
  result.step_s = run.slowest.step_s;
  result.input_stall_s = run.slowest.input_stall_s;
  const double micro_batches = program.micro_batches;
  result.forward_s = micro_batches * std::accumulate(program.forward_s.begin(), program.forward_s.end(), 0.0);
  result.backward_s = micro_batches * std::accumulate(program.backward_s.begin(), program.backward_s.end(), 0.0);
  result.exposed_comm_s = run.slowest.exposed_s;
  result.optimizer_s = program.optimizer_s;
  result.comm_s = run.slowest.reduce_s;
  if (program.noise != nullptr || !program.bucket_wire_s.empty()) {
    // the slowest rank's own computes (its variability, its transport's share), forward and backward in the program's
    // ratio
    const double planned = result.forward_s + result.backward_s;
    const double ratio = planned > 0 ? run.slowest.compute_s / planned : 1.0;
    result.forward_s *= ratio;
    result.backward_s *= ratio;
    result.optimizer_s = run.slowest.optimizer_s;
  }
  return result;
}

}  // namespace dtsim
