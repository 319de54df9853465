// The lumped engine: the flow executor's events on classes of ranks (sim/flow_lumping.hpp says why that is exact).
#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>

#include "models/calibration.hpp"
#include "sim/engine_constants.hpp"
#include "sim/flow_lumping.hpp"
#include "sim/segment_rounds.hpp"
#include "sim/topology.hpp"

namespace dtsim::lumping {
namespace {

using engine::infinity;
using engine::none;
using engine::tolerance;

}  // namespace

struct LumpedEngine::State {
  State(const Lumping& lumping, const FlowOptions& options) : l(lumping), o(options) {
    classes.resize(l.classes());
    reduce_Bps.resize(l.classes());
    for (std::size_t c = 0; c < l.classes(); ++c)  // (its ranks alike: a switch endpoint is a class of its own)
      reduce_Bps[c] = position_reduce_Bps(o, static_cast<int>(l.representative[c]));
    flows.resize(l.flows.size());
    for (std::size_t i = 0; i < l.flows.size(); ++i) {
      const LumpedFlow& lf = l.flows[i];
      FlowState& f = flows[i];
      const FactorRange factor = factors_for(o.factors, static_cast<double>(lf.bytes));
      f.penalty = lf.latency_s > 0 ? lf.latency_s : 1.0;
      if (!o.factors.empty()) {
        f.bound = lf.narrowest_Bps * factor.bandwidth_factor;
        f.cost = 1.0 / factor.bandwidth_factor;
      }
      f.latency_s = lf.latency_s * factor.latency_factor;
      const SegmentLibraryCost& library = l.library[lf.segment];
      if (library.active) {  // the protocol's bytes on the wire, and its cap on the payload's rate; eager delivery
        f.eager = true;
        f.hop_s = library.hop_latency_s[static_cast<std::size_t>(lf.hop)];
        f.wire_factor = library.wire_factor[static_cast<std::size_t>(lf.hop)];
        if (library.rate_cap_Bps > 0) f.bound = std::min(f.bound, library.rate_cap_Bps * f.wire_factor);
      }
    }
    left.assign(l.capacity_Bps.size(), 0);
    weight.assign(l.capacity_Bps.size(), 0);
    unfrozen.assign(l.capacity_Bps.size(), 0);
    touched_mark.assign(l.capacity_Bps.size(), 0);
    on_first.assign(l.capacity_Bps.size(), 0);
    stamp.assign(l.capacity_Bps.size(), 0);
    on_end.assign(l.capacity_Bps.size(), 0);
    rounds.resize(l.first_step.size());
    for (const SegmentLibraryCost& library : l.library)
      eager_segments = eager_segments || library.active;
  }

  enum class Kind : std::uint8_t { release, latency_paid, flow_done, reduce_done, compute_done, recv_ready };
  struct Event {
    double at;
    Kind kind;
    std::uint32_t id;
    std::uint32_t version;
    bool operator>(const Event& e) const { return at > e.at; }
  };
  struct ClassState {
    int segment = -1;
    std::uint32_t step = none;     // the current step, counted from the segment's first
    std::uint32_t repetition = 0;  // of the current step (LumpedStep::repeats)
    std::uint32_t outstanding = 0;
    std::uint64_t reduce_bytes = 0;
  };
  struct FlowState {
    bool src_posted = false;
    bool dst_posted = false;
    bool moving = false;
    bool frozen = false;
    double remaining = 0;
    double rate = 0;
    double next_rate = 0;
    double updated_at = 0;
    std::uint32_t version = 0;
    double penalty = 1;
    double bound = infinity;
    double cost = 1;
    double latency_s = 0;
    double wire_factor = 1;  // wire bytes per payload byte (the segment's protocol)
    // A collective library's messages are eager: they start when sent and wait for their receive, which sees them
    // hop_s after they land (arrived: the instants at which the unclaimed ones are seen, oldest first).
    bool eager = false;
    double hop_s = 0;
    std::deque<double> arrived;
  };

  void push(double at, Kind kind, std::uint32_t id, std::uint32_t version = 0) { events.push({at, kind, id, version}); }

  // What a segment has in flight (its flows, and its classes' reductions, computes and eager receives), for rounds:
  // a class's next repetition of a step repeated in lockstep waits until its segment has nothing in flight, as the
  // flow executor's rounds per segment (FlowOptions::rounds, segment_rounds), so that the classes of a ring meet at
  // lockstep points and its repetitions can be skipped (skip_repeated_steps).
  void timer(double at, Kind kind, std::uint32_t c) {
    rounds.add(static_cast<std::size_t>(classes[c].segment));
    push(at, kind, c);
  }
  void seg_item_done(std::size_t segment) { rounds.done(segment, ready); }
  void start_flow(std::uint32_t id) {
    ++in_flight;
    rounds.add(l.flows[id].segment);
    push(now + flows[id].latency_s, Kind::latency_paid, id);
  }

  const LumpedStep& current_step(std::uint32_t c) const {
    const ClassState& cs = classes[c];
    return l.steps[l.first_step[static_cast<std::size_t>(cs.segment)][c] + cs.step];
  }

  void post_step(std::uint32_t c) {
    ClassState& cs = classes[c];
    const LumpedStep& st = current_step(c);
    ++posted_since_lockstep;
    cs.reduce_bytes = st.reduce_bytes;
    cs.outstanding += st.count;
    double busy_s = std::max(st.flops / o.compute_flops_per_s, st.gap_s);  // compute beside the gaps
    if (l.library[static_cast<std::size_t>(cs.segment)].active) {  // a library's fused reduction: beside them too
      busy_s = std::max(busy_s, static_cast<double>(cs.reduce_bytes) / reduce_Bps[c]);
      cs.reduce_bytes = 0;
    }
    if (busy_s > 0) {
      ++cs.outstanding;
      timer(now + busy_s, Kind::compute_done, c);
    }
    for (std::uint32_t i = st.first; i < st.first + st.count; ++i) {
      const std::uint32_t id = l.step_flows[i] / 2;
      FlowState& f = flows[id];
      const bool sender = l.step_flows[i] % 2 == 0;
      if (f.eager && !sender && !f.arrived.empty()) {  // claims the oldest arrived message
        const double seen = f.arrived.front();
        f.arrived.pop_front();
        if (seen > now + tolerance(now)) {
          timer(seen, Kind::recv_ready, c);
        } else {
          --cs.outstanding;
        }
        continue;
      }
      (sender ? f.src_posted : f.dst_posted) = true;
      if (f.eager ? sender : f.src_posted && f.dst_posted) start_flow(id);
    }
    if (cs.outstanding == 0) items_done(c);
  }

  // Moves class c to its next step; false at the end of its segment.
  bool next_step(std::uint32_t c) {
    ClassState& cs = classes[c];
    const auto& first = l.first_step[static_cast<std::size_t>(cs.segment)];
    const std::uint32_t count = first[c + 1] - first[c];
    if (cs.step != none && cs.repetition < l.steps[first[c] + cs.step].repeats) {
      ++cs.repetition;
      return true;
    }
    cs.repetition = 0;
    const std::uint32_t next = cs.step == none ? 0 : cs.step + 1;
    if (next >= count) return false;
    cs.step = next;
    return true;
  }

  void item_done(std::uint32_t c) {
    if (--classes[c].outstanding == 0) items_done(c);
  }
  void items_done(std::uint32_t c) {
    if (classes[c].reduce_bytes > 0) {
      timer(now + static_cast<double>(classes[c].reduce_bytes) / reduce_Bps[c], Kind::reduce_done, c);
    } else {
      ready.push_back(c);
    }
  }

  void finish(std::uint32_t id) {
    FlowState& f = flows[id];
    if (f.moving) {
      f.moving = false;
      moving.erase(std::find(moving.begin(), moving.end(), id));
      rates_dirty = true;
    }
    ++f.version;
    f.rate = 0;
    const bool claimed = f.dst_posted;
    f.src_posted = f.dst_posted = false;
    --in_flight;
    seg_item_done(l.flows[id].segment);
    item_done(l.flows[id].src_class);
    if (!f.eager) {
      item_done(l.flows[id].dst_class);
    } else if (!claimed) {
      f.arrived.push_back(now + f.hop_s);
    } else if (f.hop_s > 0) {
      timer(now + f.hop_s, Kind::recv_ready, l.flows[id].dst_class);
    } else {
      item_done(l.flows[id].dst_class);
    }
  }

  void handle(const Event& e) {
    switch (e.kind) {
      case Kind::release:
        lockstep_at = -1;  // a step that did not start at a lockstep point: no duration to repeat
        --awaiting;
        if (next_step(e.id)) {
          post_step(e.id);
        } else {
          ready.push_back(e.id);
        }
        break;
      case Kind::latency_paid: {
        FlowState& f = flows[e.id];
        if (l.flows[e.id].bytes == 0) {
          finish(e.id);
          break;
        }
        f.moving = true;
        f.remaining = static_cast<double>(l.flows[e.id].bytes) * f.wire_factor;
        f.rate = 0;
        f.updated_at = now;
        moving.push_back(e.id);
        rates_dirty = true;
        break;
      }
      case Kind::flow_done:
        if (!stale(e)) finish(e.id);
        break;
      case Kind::reduce_done:
        seg_item_done(static_cast<std::size_t>(classes[e.id].segment));
        ready.push_back(e.id);
        break;
      case Kind::compute_done:
      case Kind::recv_ready:
        seg_item_done(static_cast<std::size_t>(classes[e.id].segment));
        item_done(e.id);
        break;
    }
  }

  // Weighted max-min fairness by progressive filling over the moving message classes, each loading a link class
  // with its flows per link; as the flow executor's fill, one flow per class.
  void compute_rates() {
    rates_dirty = false;
    touched.clear();
    bounded.clear();
    ++epoch;
    for (const std::uint32_t id : moving) {
      FlowState& f = flows[id];
      f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated_at));
      f.updated_at = now;
      f.frozen = false;
      if (f.bound < infinity) bounded.push_back(id);
      const LumpedFlow& lf = l.flows[id];
      for (std::uint32_t h = lf.first_hop; h < lf.first_hop + lf.hop_count; ++h) {
        const LumpedHop& hop = l.hops[h];
        if (touched_mark[hop.resource] != epoch) {
          touched_mark[hop.resource] = epoch;
          touched.push_back(hop.resource);
          left[hop.resource] = l.capacity_Bps[hop.resource];
          weight[hop.resource] = 0;
          unfrozen[hop.resource] = 0;
        }
        weight[hop.resource] += hop.flows / f.penalty;
        ++unfrozen[hop.resource];
      }
    }
    // the moving flows on each link, read when the link fills
    std::uint32_t total = 0;
    for (const std::uint32_t res : touched) {
      on_first[res] = total;
      total += unfrozen[res];
      on_end[res] = on_first[res];
    }
    on_flows.resize(total);
    for (const std::uint32_t id : moving) {
      const LumpedFlow& lf = l.flows[id];
      for (std::uint32_t h = lf.first_hop; h < lf.first_hop + lf.hop_count; ++h)
        on_flows[on_end[l.hops[h].resource]++] = id;
    }
    auto bound_level = [&](std::uint32_t id) { return flows[id].bound * flows[id].penalty * flows[id].cost; };
    std::sort(bounded.begin(), bounded.end(),
              [&](std::uint32_t a, std::uint32_t b) { return bound_level(a) < bound_level(b); });
    std::size_t next_bounded = 0;
    std::size_t open = moving.size();
    auto freeze = [&](std::uint32_t id, double level) {
      FlowState& f = flows[id];
      f.frozen = true;
      --open;
      f.next_rate = level / (f.penalty * f.cost);  // (its capacity use is level / penalty, as in the full engine)
      const LumpedFlow& lf = l.flows[id];
      for (std::uint32_t h = lf.first_hop; h < lf.first_hop + lf.hop_count; ++h) {
        const LumpedHop& hop = l.hops[h];
        left[hop.resource] -= hop.flows * f.next_rate * f.cost;
        weight[hop.resource] -= hop.flows / f.penalty;
        --unfrozen[hop.resource];
        changed.push_back(hop.resource);
      }
    };
    // links by the level that would fill them, in a heap: an entry is current while its link's stamp matches
    auto share = [&](std::uint32_t res) { return std::max(0.0, left[res]) / weight[res]; };
    by_share.clear();
    for (const std::uint32_t res : touched) {
      stamp[res] = 0;
      by_share.push_back({share(res), res, 0});
    }
    std::make_heap(by_share.begin(), by_share.end(), std::greater<>{});
    auto pop_stale = [&] {
      while (!by_share.empty()) {
        const Filling& top = by_share.front();
        if (top.entry_stamp == stamp[top.resource] && unfrozen[top.resource] > 0) break;
        std::pop_heap(by_share.begin(), by_share.end(), std::greater<>{});
        by_share.pop_back();
      }
    };
    while (open > 0) {
      pop_stale();
      const double level = by_share.empty() ? infinity : by_share.front().share;
      while (next_bounded < bounded.size() && flows[bounded[next_bounded]].frozen)
        ++next_bounded;
      const double by_bound = next_bounded < bounded.size() ? bound_level(bounded[next_bounded]) : infinity;
      if (level == infinity && by_bound == infinity) {  // flows that cross no link
        for (const std::uint32_t id : moving) {
          if (!flows[id].frozen) freeze(id, infinity);
        }
        break;
      }
      const double close = std::min(level, by_bound) * (1 + 1e-12);
      changed.clear();
      if (by_bound <= level) {
        for (std::size_t i = next_bounded; i < bounded.size() && bound_level(bounded[i]) <= close; ++i) {
          if (!flows[bounded[i]].frozen) freeze(bounded[i], by_bound);
        }
      } else {
        filled.clear();
        while (!by_share.empty() && by_share.front().share <= close) {
          const Filling top = by_share.front();
          std::pop_heap(by_share.begin(), by_share.end(), std::greater<>{});
          by_share.pop_back();
          if (top.entry_stamp == stamp[top.resource] && unfrozen[top.resource] > 0) filled.push_back(top.resource);
          pop_stale();
        }
        for (const std::uint32_t res : filled) {
          ++stamp[res];  // (its entry is gone)
          for (std::uint32_t i = on_first[res]; i < on_end[res]; ++i) {
            if (!flows[on_flows[i]].frozen) freeze(on_flows[i], level);
          }
        }
      }
      for (const std::uint32_t res : changed) {  // links whose share moved: a new entry each
        if (unfrozen[res] == 0) continue;
        by_share.push_back({share(res), res, ++stamp[res]});
        std::push_heap(by_share.begin(), by_share.end(), std::greater<>{});
      }
    }
    for (const std::uint32_t id : moving) {
      FlowState& f = flows[id];
      if (f.next_rate == f.rate) continue;
      f.rate = f.next_rate;
      ++f.version;
      push(f.rate > 0 ? now + f.remaining / f.rate : infinity, Kind::flow_done, id, f.version);
    }
  }

  // A flow_done event left behind by a later rate change.
  bool stale(const Event& e) const { return e.kind == Kind::flow_done && e.version != flows[e.id].version; }

  void run(const std::function<void(int)>& on_segment_done) {
    while (true) {
      while (!events.empty() && stale(events.top()))
        events.pop();
      if (events.empty()) break;
      ++batches;
      now = std::max(now, events.top().at);
      if (now == infinity) break;  // flows that never move: a deadlock
      // the instant's events are taken first, as the flow executor takes them: those its handlers post for (nearly)
      // the same instant wait for the next batch
      batch.clear();
      while (!events.empty() && events.top().at <= now + tolerance(now)) {
        batch.push_back(events.top());
        events.pop();
      }
      for (const Event& e : batch)
        handle(e);
      if (rates_dirty) compute_rates();
      if (ready.empty()) continue;
      if (in_flight == 0 && !eager_segments && o.skip_repeats) skip_repeated_steps();
      for (std::size_t i = 0; i < ready.size(); ++i) {  // (a step with nothing to wait for makes its class ready again)
        const std::uint32_t c = ready[i];
        ClassState& cs = classes[c];
        // (the segment's state before this batch's posts: taken at its first ready class, as the flow executor does)
        const bool round_busy = rounds.busy_at_batch(static_cast<std::size_t>(cs.segment), batches);
        if (o.rounds && round_busy && cs.step != none && !l.library[static_cast<std::size_t>(cs.segment)].active) {
          const LumpedStep& st = current_step(c);
          if (st.lockstep && cs.repetition < st.repeats) {
            rounds.hold(static_cast<std::size_t>(cs.segment), c);  // the next repetition waits for the round
            continue;
          }
        }
        if (next_step(c)) {
          post_step(c);
        } else {
          cs.segment = -1;
          --inside;
          on_segment_done(static_cast<int>(c));
        }
      }
      ready.clear();
      if (rates_dirty) compute_rates();
    }
  }

  // All classes inside segments finished a step at this instant with no flow in flight: a lockstep point. If the
  // previous step of every one of them also ran from a lockstep point to this one, and each one's next step is a
  // repetition of the one it finished (the same flows, started together), the next one takes exactly as long: the
  // repetitions that end before anything else is due (a release, another class's compute) are skipped in one move, as
  // the flow executor's skip_repeated_steps does.
  void skip_repeated_steps() {
    const std::size_t running = inside - awaiting;
    const bool repeat_known = ready.size() == running && lockstep_at >= 0 && posted_since_lockstep == running;
    const double duration = now - lockstep_at;
    lockstep_at = ready.size() == running ? now : -1;
    posted_since_lockstep = 0;
    if (!repeat_known) return;
    while (!events.empty() && stale(events.top()))
      events.pop();
    const double horizon = events.empty() ? infinity : events.top().at;
    if (horizon < infinity && !(duration > 0)) return;
    std::uint32_t steps = std::numeric_limits<std::uint32_t>::max();
    for (const std::uint32_t c : ready) {
      const ClassState& cs = classes[c];
      if (cs.segment < 0 || cs.step == none) return;
      const LumpedStep& st = current_step(c);
      if (cs.repetition >= st.repeats) return;
      steps = std::min(steps, st.repeats - cs.repetition);
    }
    if (horizon < infinity) {  // only repetitions that end by then
      const double room = std::floor((horizon - now) / duration * (1 + 1e-12));
      if (room < 1) return;
      if (room < steps) steps = static_cast<std::uint32_t>(room);
    }
    for (const std::uint32_t c : ready)
      classes[c].repetition += steps;
    now += duration * steps;
    lockstep_at = now;
  }

  const Lumping& l;
  const FlowOptions& o;
  std::vector<double> reduce_Bps;  // by class
  double now = 0;
  std::uint64_t batches = 0;
  std::vector<ClassState> classes;
  std::vector<FlowState> flows;
  std::vector<std::uint32_t> moving;
  std::vector<std::uint32_t> ready;
  bool rates_dirty = false;
  // rounds and skipped repetitions (skip_repeated_steps)
  std::size_t in_flight = 0;    // flows started and not finished
  std::size_t inside = 0;       // classes inside a segment
  std::size_t awaiting = 0;     // of them, those whose release is still to come
  bool eager_segments = false;  // a collective library's eager messages: no skipping (their pipelines never repeat)
  engine::SegmentRounds<std::uint32_t> rounds;  // each segment's flows and timers pending, its held classes
  double lockstep_at = -1;
  std::size_t posted_since_lockstep = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<Event> batch;  // run: the events of the current instant
  // compute_rates' scratch, by link class
  std::vector<double> left, weight;
  std::vector<std::uint32_t> unfrozen;
  std::vector<std::uint64_t> touched_mark;
  std::uint64_t epoch = 0;
  std::vector<std::uint32_t> touched, filled, bounded;
  std::vector<std::uint32_t> on_first, on_end, on_flows;  // by link class: its moving flows, on_flows[first, end)
  struct Filling {
    double share;
    std::uint32_t resource;
    std::uint32_t entry_stamp;
    bool operator>(const Filling& other) const { return share > other.share; }
  };
  std::vector<Filling> by_share;       // a min-heap of links by share
  std::vector<std::uint32_t> stamp;    // by link class: the stamp of its current heap entry
  std::vector<std::uint32_t> changed;  // links a level's freezing touched
};

LumpedEngine::LumpedEngine(const Lumping& lumping, const FlowOptions& options)
    : s_(std::make_unique<State>(lumping, options)) {}
LumpedEngine::~LumpedEngine() = default;
double LumpedEngine::now() const { return s_->now; }
std::uint64_t LumpedEngine::batches() const { return s_->batches; }

void LumpedEngine::start_segment(int cls, std::size_t index, double release) {
  State::ClassState& cs = s_->classes[static_cast<std::size_t>(cls)];
  if (cs.segment < 0) ++s_->inside;
  ++s_->awaiting;
  cs.segment = static_cast<int>(index);
  cs.step = none;
  cs.repetition = 0;
  cs.outstanding = 0;
  cs.reduce_bytes = 0;
  s_->push(std::max(release, s_->now) + s_->l.library[index].start_s, State::Kind::release,
           static_cast<std::uint32_t>(cls));
}

void LumpedEngine::run(const std::function<void(int)>& on_segment_done) { s_->run(on_segment_done); }

std::size_t LumpedEngine::inside_segments() const {
  std::size_t n = 0;
  for (const State::ClassState& cs : s_->classes)
    n += cs.segment >= 0 ? 1 : 0;
  return n;
}

}  // namespace dtsim::lumping
