#include "sim/flow_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "algorithms/step_walker.hpp"

namespace dtsim {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// A route: the resources (link directions) it crosses, its latency and its narrowest link.
struct Route {
  std::uint32_t first = 0;  // into FlowNetwork::route_resources
  std::uint32_t count = 0;
  double latency_s = 0;
  double narrowest_Bps = infinity;
};

struct Flow {
  double remaining = 0;  // bytes
  double rate = 0;       // bytes per second, while moving
  double latency_end = 0;
  double penalty = 1;  // SimGrid's sharing penalty: the route's latency (1 without latency); shares go as 1/penalty
  double bound = infinity;
  double cost = 1;  // link capacity used per byte per second: 1 / the calibrated bandwidth factor
  std::uint32_t route = 0;
  std::int32_t src = 0;
  std::int32_t dst = 0;
  bool moving = false;
};

// FIFO matching per (sender, receiver) pair, as MPI and SimGrid mailboxes match.
struct Channel {
  std::vector<std::uint64_t> sends;  // op indices posted and not yet matched
  std::size_t send_head = 0;
  std::vector<std::uint64_t> recvs;
  std::size_t recv_head = 0;
};

struct RankState {
  std::uint64_t step_begin = 0;
  std::uint64_t step_end = 0;
  std::uint32_t outstanding = 0;  // transfers and the compute of the current step not yet done
  std::uint64_t reduce_bytes = 0;
  bool done = false;
};

struct Timer {
  double at;
  std::int32_t rank;
  bool reduce;  // else: the step's compute
  bool operator>(const Timer& o) const { return at > o.at; }
};

class FlowSimulation {
public:
  FlowSimulation(const Schedule& s, const FlowOptions& o) : s_(s), o_(o), ranks_(static_cast<std::size_t>(s.ranks)) {
    reduce_Bps_ = o.topology != nullptr ? o.topology->spec().node.reduce_Bps : o.cost.reduce_Bps;
    build_routes();
    unfrozen_.assign(capacity_.size(), 0);
    left_.assign(capacity_.size(), 0.0);
    weight_.assign(capacity_.size(), 0.0);
  }

  ExecutionResult run() {
    ExecutionResult result;
    result.rank_finish_s.assign(ranks_.size(), 0.0);
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const auto ops = s_.rank_ops(static_cast<int>(r));
      ranks_[r].step_begin = s_.rank_begin[r];
      ranks_[r].step_end = s_.rank_begin[r];
      if (ops.empty()) {
        ranks_[r].done = true;
        continue;
      }
      post_step(static_cast<int>(r), result);
    }
    while (true) {
      if (rates_dirty_) compute_rates();
      // the next event: a latency paid, a transfer done, a compute or reduction done
      double next = timers_.empty() ? infinity : timers_.top().at;
      for (const Flow& f : flows_) {
        if (!f.moving) {
          next = std::min(next, f.latency_end);
        } else if (f.remaining <= 0) {
          next = now_;
        } else if (f.rate > 0) {
          next = std::min(next, now_ + f.remaining / f.rate);
        }
      }
      if (next == infinity) break;
      const double dt = next - now_;
      now_ = next;
      const double tolerance = 1e-12 * std::max(1.0, now_);
      // move every flow; those within the tolerance of their end are done now
      for (std::size_t i = 0; i < flows_.size();) {
        Flow& f = flows_[i];
        bool finished = false;
        if (f.moving) {
          f.remaining -= f.rate * dt;
          finished = f.remaining <= f.rate * tolerance || f.remaining <= 1e-9;
        } else if (f.latency_end <= now_ + tolerance) {
          f.moving = true;
          rates_dirty_ = true;
          finished = f.remaining <= 0;
        }
        if (finished) {
          const Flow done = f;
          flows_[i] = flows_.back();
          flows_.pop_back();
          rates_dirty_ = true;
          transfer_done(done.src, result);
          transfer_done(done.dst, result);
          continue;
        }
        ++i;
      }
      while (!timers_.empty() && timers_.top().at <= now_ + tolerance) {
        const Timer t = timers_.top();
        timers_.pop();
        if (t.reduce) {
          step_done(t.rank, result);
        } else {
          transfer_done(t.rank, result);  // the compute counts as one outstanding item
        }
      }
    }
    std::size_t unfinished = 0;
    for (const RankState& r : ranks_)
      unfinished += r.done ? 0 : 1;
    if (unfinished > 0) {
      throw std::runtime_error("flow executor: deadlock: " + std::to_string(unfinished) + " ranks never finished");
    }
    result.time_s = now_;
    return result;
  }

private:
  void build_routes() {
    if (o_.topology == nullptr) {  // the star: rank r's uplink is resource 2r, its downlink 2r + 1
      capacity_.assign(2 * ranks_.size(), o_.cost.bandwidth_Bps);
      return;
    }
    const Topology& t = *o_.topology;
    capacity_.resize(2 * t.links().size());
    for (std::size_t l = 0; l < t.links().size(); ++l)
      capacity_[2 * l] = capacity_[2 * l + 1] = t.links()[l].spec.bandwidth_Bps;
    const auto p = ranks_.size();
    route_schedule_pairs(t, o_.accelerator_of, s_, [&](int src, int dst, const std::vector<RouteHop>& hops) {
      Route route;
      route.first = static_cast<std::uint32_t>(route_resources_.size());
      for (const RouteHop& hop : hops) {
        const LinkSpec& link = t.links()[static_cast<std::size_t>(hop.link)].spec;
        route_resources_.push_back(2 * static_cast<std::uint32_t>(hop.link) + (hop.a_to_b ? 0 : 1));
        route.latency_s += link.latency_s;
        route.narrowest_Bps = std::min(route.narrowest_Bps, link.bandwidth_Bps);
      }
      route.count = static_cast<std::uint32_t>(hops.size());
      route_of_[static_cast<std::uint64_t>(src) * p + static_cast<std::uint64_t>(dst)] =
          static_cast<std::uint32_t>(routes_.size());
      routes_.push_back(route);
    });
  }

  // The route of a transfer from src to dst (on the star, made on first use).
  std::uint32_t route(int src, int dst) {
    const std::uint64_t key = static_cast<std::uint64_t>(src) * ranks_.size() + static_cast<std::uint64_t>(dst);
    if (const auto it = route_of_.find(key); it != route_of_.end()) return it->second;
    if (o_.topology != nullptr) throw std::logic_error("flow executor: no route for a pair the schedule uses");
    Route r;
    r.first = static_cast<std::uint32_t>(route_resources_.size());
    route_resources_.push_back(2 * static_cast<std::uint32_t>(src));
    route_resources_.push_back(2 * static_cast<std::uint32_t>(dst) + 1);
    r.count = 2;
    r.latency_s = o_.cost.alpha_s;  // alpha/2 on each of the two links
    r.narrowest_Bps = o_.cost.bandwidth_Bps;
    route_of_[key] = static_cast<std::uint32_t>(routes_.size());
    routes_.push_back(r);
    return route_of_[key];
  }

  Channel& channel(int src, int dst) {
    return channels_[static_cast<std::uint64_t>(src) * ranks_.size() + static_cast<std::uint64_t>(dst)];
  }

  void start_transfer(int src, int dst, std::uint64_t bytes) {
    const std::uint32_t id = route(src, dst);
    const Route& r = routes_[id];
    const FactorRange f = factors_for(o_.factors, static_cast<double>(bytes));
    Flow flow;
    flow.remaining = static_cast<double>(bytes);
    flow.latency_end = now_ + r.latency_s * f.latency_factor;
    flow.penalty = r.latency_s > 0 ? r.latency_s : 1.0;
    if (!o_.factors.empty()) {  // as SimGrid: a bound, and each byte weighs 1 / factor on every link it crosses
      flow.bound = r.narrowest_Bps * f.bandwidth_factor;
      flow.cost = 1.0 / f.bandwidth_factor;
    }
    flow.route = id;
    flow.src = src;
    flow.dst = dst;
    flow.moving = flow.latency_end <= now_;
    if (flow.moving) rates_dirty_ = true;
    flows_.push_back(flow);
  }

  void post_step(int rank, ExecutionResult& result) {
    RankState& st = ranks_[static_cast<std::size_t>(rank)];
    const std::uint64_t last = s_.rank_begin[static_cast<std::size_t>(rank) + 1];
    std::uint64_t end = st.step_end;
    double flops = 0;
    st.reduce_bytes = 0;
    st.step_begin = end;
    do {
      const Op& op = s_.ops[end];
      if (op.kind() == OpKind::send) {
        ++result.messages;
        result.bytes_sent += s_.span_bytes(op.span());
        ++st.outstanding;
        Channel& c = channel(rank, op.peer());
        if (c.recv_head < c.recvs.size()) {
          if (++c.recv_head == c.recvs.size()) {
            c.recvs.clear();
            c.recv_head = 0;
          }
          start_transfer(rank, op.peer(), s_.span_bytes(op.span()));
        } else {
          c.sends.push_back(end);
        }
      } else if (op.is_recv()) {
        ++st.outstanding;
        if (op.kind() == OpKind::recv_reduce) st.reduce_bytes += s_.span_bytes(op.span());
        Channel& c = channel(op.peer(), rank);
        if (c.send_head < c.sends.size()) {
          const Op& send = s_.ops[c.sends[c.send_head++]];
          if (c.send_head == c.sends.size()) {
            c.sends.clear();
            c.send_head = 0;
          }
          start_transfer(op.peer(), rank, s_.span_bytes(send.span()));
        } else {
          c.recvs.push_back(end);
        }
      } else {
        flops += s_.compute_flops[op.compute_index()];
      }
      ++end;
    } while (end < last && !s_.ops[end].starts_step());
    st.step_end = end;
    if (flops > 0) {
      ++st.outstanding;
      timers_.push({now_ + flops / o_.compute_flops_per_s, rank, false});
    }
    if (st.outstanding == 0) all_done(rank, result);
  }

  void transfer_done(int rank, ExecutionResult& result) {
    RankState& st = ranks_[static_cast<std::size_t>(rank)];
    if (--st.outstanding == 0) all_done(rank, result);
  }

  // The step's transfers and compute are done: its reductions run, then the next step.
  void all_done(int rank, ExecutionResult& result) {
    RankState& st = ranks_[static_cast<std::size_t>(rank)];
    if (st.reduce_bytes > 0) {
      timers_.push({now_ + static_cast<double>(st.reduce_bytes) / reduce_Bps_, rank, true});
    } else {
      step_done(rank, result);
    }
  }

  void step_done(int rank, ExecutionResult& result) {
    RankState& st = ranks_[static_cast<std::size_t>(rank)];
    if (st.step_end >= s_.rank_begin[static_cast<std::size_t>(rank) + 1]) {
      st.done = true;
      result.rank_finish_s[static_cast<std::size_t>(rank)] = now_;
      return;
    }
    post_step(rank, result);
  }

  // Weighted max-min fairness by progressive filling: every moving flow's rate is level / penalty as the level
  // rises (using rate x cost of each link it crosses); a link whose remaining capacity the level fills, or a flow that
  // reaches its bound, freezes its flows.
  void compute_rates() {
    rates_dirty_ = false;
    touched_.clear();
    moving_.clear();
    for (std::size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = flows_[i];
      if (!f.moving) continue;
      moving_.push_back(static_cast<std::uint32_t>(i));
      const Route& r = routes_[f.route];
      for (std::uint32_t k = 0; k < r.count; ++k) {
        const std::uint32_t res = route_resources_[r.first + k];
        if (unfrozen_[res] == 0) {
          touched_.push_back(res);
          left_[res] = capacity_[res];
          weight_[res] = 0;
        }
        ++unfrozen_[res];
        weight_[res] += f.cost / f.penalty;
      }
    }
    fill();  // leaves every unfrozen_ count at 0
  }

  void fill() {
    std::size_t unfrozen = moving_.size();
    frozen_.assign(flows_.size(), 0);
    while (unfrozen > 0) {
      double level = infinity;
      for (const std::uint32_t res : touched_) {
        if (unfrozen_[res] > 0) level = std::min(level, std::max(0.0, left_[res]) / weight_[res]);
      }
      double bound_level = infinity;
      for (const std::uint32_t i : moving_) {
        if (frozen_[i] == 0) bound_level = std::min(bound_level, flows_[i].bound * flows_[i].penalty);
      }
      const bool by_bound = bound_level <= level;
      const double chosen = by_bound ? bound_level : level;
      const double close = chosen * (1 + 1e-12);
      for (const std::uint32_t i : moving_) {
        if (frozen_[i] != 0) continue;
        Flow& f = flows_[i];
        const Route& r = routes_[f.route];
        bool freeze = by_bound && f.bound * f.penalty <= close;
        if (!by_bound) {
          for (std::uint32_t k = 0; k < r.count && !freeze; ++k) {
            const std::uint32_t res = route_resources_[r.first + k];
            freeze = unfrozen_[res] > 0 && std::max(0.0, left_[res]) / weight_[res] <= close;
          }
        }
        if (!freeze) continue;
        f.rate = chosen / f.penalty;
        frozen_[i] = 1;
        --unfrozen;
        for (std::uint32_t k = 0; k < r.count; ++k) {
          const std::uint32_t res = route_resources_[r.first + k];
          left_[res] -= f.rate * f.cost;
          weight_[res] -= f.cost / f.penalty;
          --unfrozen_[res];
        }
      }
    }
  }

  const Schedule& s_;
  const FlowOptions& o_;
  double reduce_Bps_ = 0;
  double now_ = 0;
  std::vector<RankState> ranks_;
  std::vector<Flow> flows_;
  std::unordered_map<std::uint64_t, Channel> channels_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<double> capacity_;
  std::vector<Route> routes_;
  std::vector<std::uint32_t> route_resources_;
  std::unordered_map<std::uint64_t, std::uint32_t> route_of_;
  bool rates_dirty_ = false;
  // scratch space of compute_rates, kept between calls
  std::vector<std::uint32_t> unfrozen_;  // per resource: moving flows not yet frozen (0 between computations)
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint32_t> moving_;
  std::vector<double> left_;
  std::vector<double> weight_;
  std::vector<std::uint8_t> frozen_;
};

}  // namespace

ExecutionResult run_flow(const Schedule& schedule, const FlowOptions& options) {
  if (std::string problem = check_well_formed(schedule); !problem.empty()) {
    throw std::invalid_argument("flow executor: " + problem);
  }
  if (options.topology != nullptr && options.accelerator_of.size() != static_cast<std::size_t>(schedule.ranks)) {
    throw std::invalid_argument("flow executor: the schedule has " + std::to_string(schedule.ranks) + " ranks but " +
                                std::to_string(options.accelerator_of.size()) + " are placed on the cluster");
  }
  const auto started = std::chrono::steady_clock::now();
  FlowSimulation simulation(schedule, options);
  ExecutionResult result = simulation.run();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

}  // namespace dtsim
