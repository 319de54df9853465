// The flow engine's events: segments and steps posted, transfers matched and started, flows and timers done.
#include "sim/flow_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "algorithms/step_walker.hpp"
#include "sim/flow_lumping.hpp"

namespace dtsim::flow_engine {

void FlowEngine::start_segment(int rank, std::size_t index, double release) {
  RankState& st = ranks_[static_cast<std::size_t>(rank)];
  const Segment& segment = segments_[index];
  const Schedule& s = *segment.schedule;
  if (st.segment == nullptr) ++inside_;
  st.segment = &segment;
  st.awaiting_release = true;
  ++awaiting_release_;
  st.last = s.rank_begin[static_cast<std::size_t>(rank) + 1];
  st.step = StepCursor{};
  st.step.begin = st.step.end = s.rank_begin[static_cast<std::size_t>(rank)];
  st.next_repeat = s.first_repeat_from(st.step.end);
  queue_.push(std::max(release, now_) + segment.library.start_s,
              {EventKind::release, static_cast<std::uint32_t>(rank)});
}

void FlowEngine::run(const std::function<void(int)>& on_segment_done) {
  while (!queue_.empty() || !finishing_.empty()) {
    if ((++batches_ & 4095) == 0 && progress_total_ > 0 && o_.progress) {
      o_.progress(std::min(1.0, static_cast<double>(messages_) / static_cast<double>(progress_total_)));
    }
    now_ = std::max(now_, std::min(queue_.empty() ? infinity : queue_.next_at(),
                                   finishing_.empty() ? infinity : finishing_.next_at()));
    while (!queue_.empty() && queue_.next_at() <= now_ + tolerance(now_))
      queue_.pop(batch_);
    while (!finishing_.empty() && finishing_.next_at() <= now_ + tolerance(now_))
      finishing_.pop(batch_);
    for (const Event& e : batch_)
      handle(e);
    batch_.clear();
    if (!dirty_.empty() || !seeds_.empty()) compute_rates();
    if (ready_.empty()) continue;
    // (segment_rounds: also while other ranks wait for their releases and timers, up to the next of them)
    if (in_flight_ == 0 && eager_unclaimed_ == 0 && (queue_.empty() || o_.segment_rounds) && o_.skip_repeats) {
      skip_repeated_steps();
    }
    const bool busy = in_flight_ > 0 || timers_ > 0;
    held_.clear();
    for (std::size_t i = 0; i < ready_.size(); ++i) {
      const int rank = ready_[i];
      RankState& st = ranks_[static_cast<std::size_t>(rank)];
      const bool round_busy = o_.segment_rounds ? rounds_.busy_at_batch(segment_index(st), batches_) : busy;
      // (not a collective library's eager messages: their pipeline is what rounds would take away)
      if (round_busy && o_.rounds && !st.segment->library.active && st.step.repeat != nullptr &&
          st.step.repeat->lockstep && st.step.k < st.step.repeat->count) {
        // the next repetition waits for the round to end (segment_rounds: until its segment is idle)
        if (o_.segment_rounds) {
          rounds_.hold(segment_index(st), rank);
        } else {
          held_.push_back(rank);
        }
      } else if (next_step(st, st.step, st.next_repeat)) {
        post_step(rank);
      } else {
        st.segment = nullptr;
        --inside_;
        on_segment_done(rank);
      }
    }
    ready_.swap(held_);
    if (!dirty_.empty() || !seeds_.empty()) compute_rates();
    if (anchor_posted_) {
      anchor_posted_ = false;
      if (o_.skip_repeats) skip_periods();
    }
  }
}

Segment FlowEngine::make_segment(const Schedule& s) const {
  Segment segment;
  segment.schedule = &s;
  segment.even = lumping::chunk_range(s).even();
  if (s.compact()) {
    segment.chunk_prefix.assign(1, 0);
    for (const Chunk& c : s.chunks)
      segment.chunk_prefix.push_back(segment.chunk_prefix.back() + c.size_bytes);
  }
  segment.padded_chunk_bytes = lumping::padded_chunk_bytes(s, o_);
  if (segment.padded_chunk_bytes > 0) segment.even = true;
  segment.library = segment_library_cost(o_, s);
  return segment;
}

bool FlowEngine::next_step(const RankState& st, StepCursor& c, std::size_t& next_repeat) {
  if (c.repeat != nullptr && c.k < c.repeat->count) {
    ++c.k;
    return true;
  }
  if (c.end >= st.last) return false;
  const Schedule& s = *st.segment->schedule;
  c.begin = c.end;
  c.end = c.begin + 1;
  while (c.end < st.last && !s.ops[c.end].starts_step())
    ++c.end;
  c.k = 0;
  c.repeat = nullptr;
  if (next_repeat < s.repeats.size() && s.repeats[next_repeat].op == c.begin) c.repeat = &s.repeats[next_repeat++];
  return true;
}

void FlowEngine::build_resources(std::span<const Schedule* const> schedules) {
  const Topology& t = *o_.topology;
  res_.resize(2 * t.links().size());
  for (std::size_t l = 0; l < t.links().size(); ++l)
    res_[2 * l].capacity = res_[2 * l + 1].capacity = t.links()[l].spec.bandwidth_Bps;
  for (const Schedule* s : schedules) {
    route_schedule_pairs(t, o_.accelerator_of, *s, [&](int src, int dst, const std::vector<RouteHop>& hops) {
      const std::uint64_t key = pair_key(src, dst);
      if (route_of_.find(key) != none) return;
      Route route;
      route.first = static_cast<std::uint32_t>(route_resources_.size());
      for (const RouteHop& hop : hops)
        route_resources_.push_back(2 * static_cast<std::uint32_t>(hop.link) + (hop.a_to_b ? 0 : 1));
      const LinkSpec path = route_path(t, hops);
      route.latency_s = path.latency_s;
      route.narrowest_Bps = path.bandwidth_Bps;
      route.gap_s = path.message_gap_s;
      route.count = static_cast<std::uint32_t>(hops.size());
      route_of_.insert(key, static_cast<std::uint32_t>(routes_.size()));
      routes_.push_back(route);
    });
  }
  // (a route of two links, the star's, has at most one to drop: not worth the sort)
  const bool long_routes = std::any_of(routes_.begin(), routes_.end(), [](const Route& r) { return r.count > 2; });
  if (o_.prune_links && long_routes) drop_shadowed_resources();
  on_resource_.resize(res_.size());
  // by a route's first resource (an empty route's first is where the next route starts, or the end)
  route_group_.assign(route_resources_.size() + 1, RouteGroup{});
  for (const Route& r : routes_)
    max_hops_ = std::max<std::size_t>(max_hops_, r.count);
}

void FlowEngine::drop_shadowed_resources() {
  struct Print {
    std::uint64_t a = 0, b = 0;
    std::uint32_t count = 0;
  };
  std::vector<Print> print(res_.size());
  auto mix = [](std::uint64_t x) {  // splitmix64's finaliser
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  };
  for (std::size_t r = 0; r < routes_.size(); ++r) {
    const std::uint64_t a = mix(2 * r), b = mix(2 * r + 1);
    for (std::uint32_t i = 0; i < routes_[r].count; ++i) {
      Print& p = print[route_resources_[routes_[r].first + i]];
      p.a ^= a;
      p.b ^= b;
      ++p.count;
    }
  }
  std::vector<std::uint32_t> order;
  for (std::uint32_t res = 0; res < res_.size(); ++res) {
    if (print[res].count > 0) order.push_back(res);
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const Print &p = print[x], &q = print[y];
    return std::tie(p.a, p.b, p.count, res_[x].capacity, x) < std::tie(q.a, q.b, q.count, res_[y].capacity, y);
  });
  std::vector<std::uint8_t> keep(res_.size(), 1);
  for (std::size_t i = 1; i < order.size(); ++i) {
    const Print &p = print[order[i - 1]], &q = print[order[i]];
    if (p.a == q.a && p.b == q.b && p.count == q.count) keep[order[i]] = 0;  // the first of a group is narrowest
  }
  keep_route_resources([&](std::uint32_t res) { return keep[res] != 0; });
  drop_dominated_resources();
}

template <typename Keep>
void FlowEngine::keep_route_resources(Keep&& keep) {
  std::size_t out = 0;
  for (Route& r : routes_) {
    const std::size_t first = out;
    for (std::uint32_t i = 0; i < r.count; ++i) {
      const std::uint32_t res = route_resources_[r.first + i];
      if (keep(res)) route_resources_[out++] = res;
    }
    r.first = static_cast<std::uint32_t>(first);
    r.count = static_cast<std::uint32_t>(out - first);
  }
  route_resources_.resize(out);
}

void FlowEngine::drop_dominated_resources() {
  constexpr std::uint32_t unset = none, mixed = none - 1;
  std::vector<std::uint32_t> next(res_.size(), unset);
  std::vector<std::uint32_t> prev(res_.size(), unset);
  auto meet = [&](std::uint32_t& seen, std::uint32_t neighbour) {
    seen = seen == unset || seen == neighbour ? neighbour : mixed;
  };
  for (const Route& r : routes_) {
    for (std::uint32_t i = 0; i < r.count; ++i) {
      const std::uint32_t res = route_resources_[r.first + i];
      meet(next[res], i + 1 < r.count ? route_resources_[r.first + i + 1] : mixed);
      meet(prev[res], i > 0 ? route_resources_[r.first + i - 1] : mixed);
    }
  }
  auto dominated = [&](std::uint32_t res) {
    const auto by = [&](std::uint32_t other) {
      return other != unset && other != mixed && res_[other].capacity <= res_[res].capacity;
    };
    return by(next[res]) || by(prev[res]);
  };
  keep_route_resources([&](std::uint32_t res) { return !dominated(res); });
}

std::uint32_t FlowEngine::route(int src, int dst) const {
  const std::uint32_t id = route_of_.find(pair_key(src, dst));
  if (id == none) throw std::logic_error("flow executor: no route for a pair the schedule uses");
  return id;
}

void FlowEngine::push_send(Channel& ch, std::uint64_t bytes) {
  std::uint32_t id;
  if (free_pending_ != none) {
    id = free_pending_;
    free_pending_ = pending_[id].next;
  } else {
    id = static_cast<std::uint32_t>(pending_.size());
    pending_.emplace_back();
  }
  pending_[id] = {bytes, none};
  if (ch.last_send != none) {
    pending_[ch.last_send].next = id;
  } else {
    ch.first_send = id;
  }
  ch.last_send = id;
  ++ch.sends;
}

std::uint64_t FlowEngine::pop_send(Channel& ch) {
  const std::uint32_t id = ch.first_send;
  const std::uint64_t bytes = pending_[id].bytes;
  ch.first_send = pending_[id].next;
  if (ch.first_send == none) ch.last_send = none;
  --ch.sends;
  pending_[id].next = free_pending_;
  free_pending_ = id;
  return bytes;
}

inline Channel& FlowEngine::channel(int src, int dst) {
  const std::uint64_t key = pair_key(src, dst);
  std::uint32_t id = channel_of_.find(key);
  if (id == none) {
    id = static_cast<std::uint32_t>(channels_.size());
    channel_of_.insert(key, id);
    channels_.emplace_back();
  }
  return channels_[id];
}

void FlowEngine::recv_ready_at(int rank, double at) {
  ++timers_;
  if (o_.segment_rounds) rounds_.add(segment_index(ranks_[static_cast<std::size_t>(rank)]));
  queue_.push(at, {EventKind::recv_ready, static_cast<std::uint32_t>(rank)});
}

std::uint32_t FlowEngine::push_eager(Channel& ch, std::uint32_t flow) {
  const std::uint32_t id = reuse_or_append(eager_, free_eager_list_);
  eager_[id] = {flow, 0, none};
  if (ch.last_eager != none) {
    eager_[ch.last_eager].next = id;
  } else {
    ch.first_eager = id;
  }
  ch.last_eager = id;
  ++ch.eager;
  ++eager_unclaimed_;
  return id;
}

EagerEntry FlowEngine::pop_eager(Channel& ch) {
  const std::uint32_t id = ch.first_eager;
  const EagerEntry e = eager_[id];
  ch.first_eager = e.next;
  if (ch.first_eager == none) ch.last_eager = none;
  --ch.eager;
  --eager_unclaimed_;
  free_eager_list_.push_back(id);
  return e;
}

std::uint32_t FlowEngine::start_transfer(Channel& ch, int src, int dst, std::uint64_t bytes) {
  if (ch.route == none) ch.route = route(src, dst);
  const Route& r = routes_[ch.route];
  const FactorRange f = factors_for(o_.factors, static_cast<double>(bytes));
  const std::uint32_t id = reuse_or_append(flows_, free_flows_);
  if (flow_mark_.size() < flows_.size()) {
    flow_mark_.push_back(0);
    group_of_.push_back(none);
    slots_.resize(flows_.size() * max_hops_);
  }
  Flow& flow = flows_[id];
  const SegmentLibraryCost& library = ranks_[static_cast<std::size_t>(src)].segment->library;
  flow.remaining = static_cast<double>(bytes);
  flow.rate = 0;
  flow.penalty = r.latency_s > 0 ? r.latency_s : 1.0;
  flow.bound = infinity;
  flow.cost = 1;
  if (!o_.factors.empty()) {  // as SimGrid: a bound, and each byte weighs 1 / factor on every link it crosses
    flow.bound = r.narrowest_Bps * f.bandwidth_factor;
    flow.cost = 1.0 / f.bandwidth_factor;
  }
  if (!o_.contention) flow.bound = r.narrowest_Bps * f.bandwidth_factor;  // its rate, as alone on the network
  flow.hop_s = 0;
  if (library.active) {  // the protocol's bytes on the wire, its cap on the payload's rate, its hop's latency
    const auto hop = static_cast<std::size_t>(hop_class(o_, src, dst));
    flow.remaining *= library.wire_factor[hop];
    if (library.rate_cap_Bps > 0) flow.bound = std::min(flow.bound, library.rate_cap_Bps * library.wire_factor[hop]);
    flow.hop_s = library.hop_latency_s[hop];
  }
  flow.first_resource = r.first;
  flow.resource_count = r.count;
  flow.src = src;
  flow.dst = dst;
  flow.alive = true;
  flow.eager = library.active;  // (post_step says whether a receive claims it)
  flow.claimed = false;
  flow.entry = none;
  flow.latency_end = now_ + r.latency_s * f.latency_factor;
  flow.updated_at = flow.latency_end;
  ++in_flight_;
  if (o_.segment_rounds) rounds_.add(segment_index(ranks_[static_cast<std::size_t>(src)]));
  queue_.push(flow.latency_end, {EventKind::latency_paid, id});
  return id;
}

inline void FlowEngine::handle(const Event& e) {
  switch (e.kind) {
    case EventKind::latency_paid: {
      Flow& f = flows_[e.id];
      if (f.remaining <= 0) {
        finish_flow(e.id);
        break;
      }
      f.updated_at = now_;
      if (!o_.contention) {  // the analytical network: each transfer at its route's narrowest link, as alone
        f.rate = f.bound;
        finishing_.set(e.id, now_ + f.remaining / f.rate);
        break;
      }
      const auto route = resources(f);
      for (std::uint32_t hop = 0; hop < route.size(); ++hop) {
        std::vector<OnResource>& on = on_resource_[route[hop]];
        slot(e.id, hop) = static_cast<std::uint32_t>(on.size());
        on.push_back({e.id, hop});
      }
      seeds_.push_back(e.id);  // its rate, and those of the flows on the saturated links it joins
      break;
    }
    case EventKind::flow_done: finish_flow(e.id); break;
    case EventKind::reduce_done:
      --timers_;
      if (o_.segment_rounds) segment_item_done(segment_index(ranks_[e.id]));
      ready_.push_back(static_cast<int>(e.id));
      break;
    case EventKind::compute_done:
    case EventKind::recv_ready:
      --timers_;
      if (o_.segment_rounds) segment_item_done(segment_index(ranks_[e.id]));
      item_done(static_cast<int>(e.id));
      break;
    case EventKind::release: {
      lockstep_at_ = -1;  // a step that did not start at a lockstep point: no duration to repeat
      RankState& st = ranks_[e.id];
      st.awaiting_release = false;
      --awaiting_release_;
      if (next_step(st, st.step, st.next_repeat)) {
        post_step(static_cast<int>(e.id));
      } else {
        ready_.push_back(static_cast<int>(e.id));  // nothing to do in this segment: done once ready
      }
      break;
    }
  }
}

void FlowEngine::finish_flow(std::uint32_t id) {
  Flow& f = flows_[id];
  if (f.rate > 0 &&
      o_.contention) {  // it was moving: leave its links (swap with the last flow there, which takes its slot)
    const auto route = resources(f);
    for (std::uint32_t hop = 0; hop < route.size(); ++hop) {
      std::vector<OnResource>& on = on_resource_[route[hop]];
      const std::uint32_t at = slot(id, hop);
      on[at] = on.back();
      slot(on[at].flow, on[at].hop) = at;
      on.pop_back();
      Resource& r = res_[route[hop]];
      const bool was_saturated = saturated(r);  // (else no flow there had it for bottleneck: none speeds up)
      r.load = on.empty() ? 0.0 : r.load - f.rate * f.cost;
      if (!on.empty() && was_saturated) mark_dirty(route[hop]);
    }
  }
  finishing_.erase(id);
  f.rate = 0;
  f.alive = false;
  --in_flight_;
  if (o_.segment_rounds) segment_item_done(segment_index(ranks_[static_cast<std::size_t>(f.src)]));
  free_flows_.push_back(id);
  item_done(f.src);
  if (!f.eager) {
    item_done(f.dst);
  } else if (f.claimed) {  // its receive sees it a hop's latency later
    if (f.hop_s > 0) {
      recv_ready_at(f.dst, now_ + f.hop_s);
    } else {
      item_done(f.dst);
    }
  } else {  // it waits in the channel, arrived
    eager_[f.entry].flow = none;
    eager_[f.entry].ready_at = now_ + f.hop_s;
  }
}

void FlowEngine::post_step(int rank) {
  RankState& st = ranks_[static_cast<std::size_t>(rank)];
  const Segment& segment = *st.segment;
  const Schedule& s = *segment.schedule;
  const StepCursor& c = st.step;
  double flops = 0;
  StepGaps gaps;
  st.reduce_bytes = 0;
  ++posted_since_lockstep_;
  if (rank == anchor_) {
    anchor_posted_ = true;
  } else if (o_.segment_rounds && ranks_[static_cast<std::size_t>(anchor_)].segment == nullptr) {
    anchor_ = rank;  // (several streams: the anchor is a running rank, the first to post once the last one left)
    anchors_ = 0;
    period_start_.valid = false;
    anchor_posted_ = true;
  }
  for (std::uint64_t i = c.begin; i < c.end; ++i) {
    const Op& op = s.ops[i];
    if (op.kind() == OpKind::compute) {
      flops += s.compute_flops[op.compute_index()];
      continue;
    }
    const std::uint32_t span = span_of(c, op);
    ++st.outstanding;
    if (op.kind() == OpKind::send) {
      const std::uint64_t bytes = timed_bytes(segment, span);
      ++messages_;
      bytes_sent_ += s.span_bytes(span);
      Channel& ch = channel(rank, op.peer());
      if (has_gaps_) gaps.add_send(gap_of(ch, rank, op.peer()));
      if (segment.library.active) {  // eager: it moves now, into the receiver's buffer
        const bool claimed = ch.waiting_recvs > 0;
        if (claimed) --ch.waiting_recvs;
        const std::uint32_t id = start_transfer(ch, rank, op.peer(), bytes);
        flows_[id].claimed = claimed;
        if (!claimed) flows_[id].entry = push_eager(ch, id);
        continue;
      }
      if (ch.waiting_recvs > 0) {
        --ch.waiting_recvs;
        start_transfer(ch, rank, op.peer(), bytes);
      } else {
        push_send(ch, bytes);
      }
      continue;
    }
    if (op.kind() == OpKind::recv_reduce) st.reduce_bytes += timed_bytes(segment, span);
    Channel& ch = channel(op.peer(), rank);
    if (has_gaps_) gaps.add_recv(gap_of(ch, op.peer(), rank));
    if (segment.library.active) {  // the oldest eager message not yet claimed, else a wait for the next one
      if (ch.first_eager == none) {
        ++ch.waiting_recvs;
      } else if (const EagerEntry e = pop_eager(ch); e.flow != none) {
        flows_[e.flow].claimed = true;  // moving: seen hop_s after it lands
        flows_[e.flow].entry = none;
      } else if (e.ready_at > now_ + tolerance(now_)) {
        recv_ready_at(rank, e.ready_at);
      } else {
        --st.outstanding;  // already there
      }
      continue;
    }
    if (ch.sends > 0) {
      start_transfer(ch, op.peer(), rank, pop_send(ch));
    } else {
      ++ch.waiting_recvs;
    }
  }
  // its compute and its per-message gaps run side by side, as one timer
  double busy_s = std::max(flops / o_.compute_flops_per_s, gaps.seconds());
  if (segment.library.active) {  // a library reduces as the data arrives (fused): beside the transfers, not after
    busy_s = std::max(busy_s, static_cast<double>(st.reduce_bytes) / st.reduce_Bps);
    st.reduce_bytes = 0;
  }
  if (busy_s > 0) {
    ++st.outstanding;
    ++timers_;
    if (o_.segment_rounds) rounds_.add(segment_index(st));
    queue_.push(now_ + busy_s, {EventKind::compute_done, static_cast<std::uint32_t>(rank)});
  }
  if (st.outstanding == 0) items_done(rank);
}

double FlowEngine::gap_of(Channel& ch, int src, int dst) {
  if (ch.route == none) ch.route = route(src, dst);
  return routes_[ch.route].gap_s;
}

void FlowEngine::item_done(int rank) {
  if (--ranks_[static_cast<std::size_t>(rank)].outstanding == 0) items_done(rank);
}

void FlowEngine::items_done(int rank) {
  const RankState& st = ranks_[static_cast<std::size_t>(rank)];
  if (st.reduce_bytes > 0) {
    ++timers_;
    if (o_.segment_rounds) rounds_.add(segment_index(st));
    queue_.push(now_ + static_cast<double>(st.reduce_bytes) / st.reduce_Bps,
                {EventKind::reduce_done, static_cast<std::uint32_t>(rank)});
  } else {
    ready_.push_back(rank);
  }
}

}  // namespace dtsim::flow_engine
