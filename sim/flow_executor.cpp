#include "sim/flow_executor.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <stdexcept>
#include <tuple>

#include "algorithms/step_walker.hpp"
#include "sim/engine_constants.hpp"
#include "sim/flow_lumping.hpp"
#include "sim/library_cost.hpp"
#include "sim/open_index.hpp"
#include "sim/segment_rounds.hpp"
#include "sim/step_driver.hpp"

namespace dtsim {
namespace {

using engine::infinity;
using engine::none;
using engine::tolerance;

// A route: the resources (link directions) it crosses, its latency and its narrowest link.
struct Route {
  std::uint32_t first = 0;  // into FlowEngine::route_resources_
  std::uint32_t count = 0;
  double latency_s = 0;
  double narrowest_Bps = infinity;
  double gap_s = 0;  // per-message gap of its messages (route_gap_s)
};

struct Flow {                        // what the rate computation reads first, in the first cache line
  std::uint32_t first_resource = 0;  // its route's resources: FlowEngine::route_resources_[first, first + count)
  std::uint32_t resource_count = 0;
  bool alive = false;
  double rate = 0;     // bytes per second while moving
  double penalty = 1;  // SimGrid's sharing penalty: the route's latency (1 without); shares go as 1/penalty
  double bound = infinity;
  double cost = 1;         // link capacity used per byte per second: 1 / the calibrated bandwidth factor
  double next_rate = 0;    // its rate, computed before it is set
  double remaining = 0;    // bytes left at updated_at
  double updated_at = 0;   // when remaining was last brought up to date
  double latency_end = 0;  // when its latency is paid
  std::int32_t src = 0;
  std::int32_t dst = 0;
  // A collective library's message (eager: it started when sent, into the receiver's buffer): whether a receive
  // already claims it, else its entry in the channel's list of unclaimed ones; the receiver sees it hop_s after its
  // last byte (the protocol's per-hop latency).
  bool eager = false;
  bool claimed = false;
  std::uint32_t entry = none;
  double hop_s = 0;
};

// A resource (one direction of a link), with the scratch of compute_rates, kept together for locality.
struct Resource {
  double capacity = 0;  // bytes per second
  double load = 0;      // rate x cost of the flows moving on it
  double left = 0;      // compute_rates: capacity not yet given to frozen flows
  double weight = 0;    // compute_rates: sum of cost / penalty of its unfrozen flows
  std::uint32_t unfrozen = 0;
  std::uint8_t mark = 0;  // compute_rates: 1 inside the component, 2 on its boundary
  bool filled = false;    // fill: the current level fills it
};

// FIFO matching per (sender, receiver) pair, as MPI and SimGrid mailboxes match: bytes of sends posted and not yet
// received, or the count of receives posted and not yet sent. A collective library's messages are eager: they start
// when sent, and wait for their receive in the channel's list of unclaimed ones (moving, or arrived).
struct Channel {
  std::uint32_t first_send = none;  // posted sends not yet received: a list in FlowEngine::pending_, oldest first
  std::uint32_t last_send = none;
  std::uint32_t sends = 0;
  std::uint32_t waiting_recvs = 0;
  std::uint32_t route = none;        // the route of its transfers, once one started
  std::uint32_t first_eager = none;  // eager messages no receive claims yet: a list in FlowEngine::eager_
  std::uint32_t last_eager = none;
  std::uint32_t eager = 0;
};

// An eager message no receive claims yet: still moving (its flow), or arrived (seen by the receiver at ready_at).
struct EagerEntry {
  std::uint32_t flow = none;
  double ready_at = 0;
  std::uint32_t next = none;
};

enum class EventKind : std::uint8_t { latency_paid, flow_done, reduce_done, compute_done, release, recv_ready };

// An index into `items`: one from the free list, or a new element at the end.
template <typename T>
std::uint32_t reuse_or_append(std::vector<T>& items, std::vector<std::uint32_t>& free) {
  if (!free.empty()) {
    const std::uint32_t id = free.back();
    free.pop_back();
    return id;
  }
  items.emplace_back();
  return static_cast<std::uint32_t>(items.size() - 1);
}

struct Event {
  EventKind kind;
  std::uint32_t id;  // flow or rank
};

// Moving flows by the time they will end, grouped by instant: a min-heap of instants that knows where each instant
// sits, each with its flows, and each flow's place. A new rate moves the flow to another instant instead of leaving a
// stale event behind (a desynchronised butterfly changes rates millions of times), and the million flows of a server's
// incast that end together cost one heap entry (the last few instants used are looked up first).
class FinishQueue {
public:
  bool empty() const { return heap_.empty(); }
  double next_at() const { return instants_[heap_.front()].at; }
  // Appends the flows of the earliest instant to `out` as flow_done events and removes them.
  void pop(std::vector<Event>& out) {
    const std::uint32_t id = heap_.front();
    for (const std::uint32_t flow : instants_[id].flows) {
      out.push_back({EventKind::flow_done, flow});
      place_[flow].instant = none;
    }
    remove_instant(id);
  }
  // Flow `flow` ends at `at` (inserted, or moved if it was elsewhere).
  void set(std::uint32_t flow, double at) {
    if (flow >= place_.size()) place_.resize(flow + 1);
    const Place old = place_[flow];
    if (old.instant != none) {
      if (std::fabs(instants_[old.instant].at - at) <= tolerance(at)) return;
      erase(flow);
    }
    std::uint32_t id = none;
    for (const std::uint32_t r : recent_) {
      if (r != none && std::fabs(instants_[r].at - at) <= tolerance(at)) id = r;
    }
    if (id == none) id = add_instant(at);
    place_[flow] = {id, static_cast<std::uint32_t>(instants_[id].flows.size())};
    instants_[id].flows.push_back(flow);
  }
  void erase(std::uint32_t flow) {
    if (flow >= place_.size() || place_[flow].instant == none) return;
    const Place p = place_[flow];
    place_[flow].instant = none;
    std::vector<std::uint32_t>& flows = instants_[p.instant].flows;
    flows[p.index] = flows.back();
    place_[flows[p.index]].index = p.index;
    flows.pop_back();
    if (flows.empty()) remove_instant(p.instant);
  }
  // Every instant `by` seconds later (the order stays).
  void shift(double by) {
    for (const std::uint32_t id : heap_)
      instants_[id].at += by;
  }

private:
  struct Instant {
    double at = 0;
    std::uint32_t heap_index = none;
    std::vector<std::uint32_t> flows;
  };
  struct Place {
    std::uint32_t instant = none;
    std::uint32_t index = 0;  // in the instant's flows
  };
  std::uint32_t add_instant(double at) {
    const std::uint32_t id = reuse_or_append(instants_, free_);
    instants_[id].at = at;
    heap_.push_back(id);
    put(sift_up(static_cast<std::uint32_t>(heap_.size() - 1), at), id);
    recent_[next_recent_] = id;
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return id;
  }
  void remove_instant(std::uint32_t id) {
    Instant& inst = instants_[id];
    const std::uint32_t i = inst.heap_index;
    inst.heap_index = none;
    inst.flows.clear();
    free_.push_back(id);
    for (std::uint32_t& r : recent_) {
      if (r == id) r = none;
    }
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    const double at = instants_[last].at;
    std::uint32_t j = sift_up(i, at);
    if (j == i) j = sift_down(i, at);
    put(j, last);
  }
  // With a hole at heap index i for an instant at `at`: moves later parents down into it (or earlier children up)
  // and returns where the instant belongs.
  std::uint32_t sift_up(std::uint32_t i, double at) {
    while (i > 0) {
      const std::uint32_t parent = (i - 1) / 2;
      if (instants_[heap_[parent]].at <= at) break;
      put(i, heap_[parent]);
      i = parent;
    }
    return i;
  }
  std::uint32_t sift_down(std::uint32_t i, double at) {
    const auto n = static_cast<std::uint32_t>(heap_.size());
    while (true) {
      std::uint32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && instants_[heap_[child + 1]].at < instants_[heap_[child]].at) ++child;
      if (instants_[heap_[child]].at >= at) break;
      put(i, heap_[child]);
      i = child;
    }
    return i;
  }
  void put(std::uint32_t i, std::uint32_t id) {
    heap_[i] = id;
    instants_[id].heap_index = i;
  }
  std::vector<Instant> instants_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> heap_;  // instants, earliest first
  std::vector<Place> place_;         // by flow
  std::array<std::uint32_t, 4> recent_{none, none, none, none};
  std::size_t next_recent_ = 0;
};

// Pending events grouped by instant: a heap of instants, each with its bucket of events. Events of one instant (a
// symmetric step's transfers all end together) share one heap entry.
class EventQueue {
public:
  void push(double at, Event e) {
    for (const Open& o : recent_) {
      if (o.bucket != none && std::fabs(o.at - at) <= tolerance(at)) {
        buckets_[o.bucket].push_back(e);
        return;
      }
    }
    const std::uint32_t b = reuse_or_append(buckets_, free_);
    buckets_[b].push_back(e);
    heap_.push_back({at, b});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
    recent_[next_recent_] = {at, b};
    next_recent_ = (next_recent_ + 1) % recent_.size();
  }
  bool empty() const { return heap_.empty(); }
  double next_at() const { return heap_.front().at; }
  // Moves the earliest instant's events into `out` (after what is there) and returns its time.
  double pop(std::vector<Event>& out) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const Entry top = heap_.back();
    heap_.pop_back();
    std::vector<Event>& bucket = buckets_[top.bucket];
    out.insert(out.end(), bucket.begin(), bucket.end());
    bucket.clear();
    free_.push_back(top.bucket);
    for (Open& o : recent_) {
      if (o.bucket == top.bucket) o.bucket = none;
    }
    return top.at;
  }
  // Calls visit(at, event) for every pending event, in no particular order.
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const Entry& entry : heap_) {
      for (const Event& e : buckets_[entry.bucket])
        visit(entry.at, e);
    }
  }
  // Every pending event `by` seconds later (the order stays).
  void shift(double by) {
    for (Entry& entry : heap_)
      entry.at += by;
    for (Open& o : recent_)
      o.at += by;
  }

private:
  struct Entry {
    double at;
    std::uint32_t bucket;
    bool operator>(const Entry& o) const { return at > o.at; }
  };
  struct Open {
    double at = 0;
    std::uint32_t bucket = none;
  };
  std::vector<Entry> heap_;  // a min-heap of instants
  std::vector<std::vector<Event>> buckets_;
  std::vector<std::uint32_t> free_;
  std::array<Open, 4> recent_{};
  std::size_t next_recent_ = 0;
};

// A schedule the engine runs, and how its transfers are timed.
struct Segment {
  const Schedule* schedule = nullptr;
  std::uint64_t padded_chunk_bytes = 0;     // > 0: every chunk is timed at this size (FlowOptions::pad_chunks_*)
  bool even = false;                        // every chunk is timed alike, so a rotated step moves what it moved before
  std::vector<std::uint64_t> chunk_prefix;  // bytes of chunks 0 .. c-1, for compact schedules
  SegmentLibraryCost library;               // the collective library's costs in the schedule's protocol
};

// A step of a rank: the stored ops [begin, end) in repetition k of `repeat` (none: k = 0).
struct StepCursor {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  const StepRepeat* repeat = nullptr;
  std::uint32_t k = 0;
};

struct RankState {
  const Segment* segment = nullptr;  // the segment it runs, nullptr between segments
  StepCursor step;                   // its current step (the last one finished, while ready)
  std::size_t next_repeat = 0;       // the first of the schedule's repeats at or after step.end
  std::uint64_t last = 0;            // the end of its ops in the segment
  std::uint32_t outstanding = 0;     // transfers and the compute of the current step not yet done
  std::uint64_t reduce_bytes = 0;
  double reduce_Bps = 0;          // how fast it adds up (position_reduce_Bps)
  bool awaiting_release = false;  // started, its release event still to come
};

// The network and the ranks' progress through their segments (schedules run one after another, each started by
// the caller). `OnSegmentDone(rank)` is called when a rank finishes a segment; it may start the next.
class FlowEngine final : public Network {
public:
  FlowEngine(int ranks, std::span<const Schedule* const> schedules, const FlowOptions& o)
      : o_(o), ranks_(static_cast<std::size_t>(ranks)) {
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      ranks_[r].reduce_Bps = position_reduce_Bps(o, static_cast<int>(r));
    for (const Schedule* s : schedules)
      segments_.push_back(make_segment(*s));
    build_resources(schedules);
    has_gaps_ = has_message_gaps(*o.topology);
    rounds_.resize(segments_.size());
  }

  std::size_t segment_index(const RankState& st) const {
    return static_cast<std::size_t>(st.segment - segments_.data());
  }

  // segment_rounds: one of the segment's flows or timers is done; when it was the last, the ranks held for the
  // segment's round are ready again.
  void segment_item_done(std::size_t segment) { rounds_.done(segment, ready_); }

  double now() const override { return now_; }
  std::uint64_t skipped_steps() const { return skipped_steps_; }
  std::uint64_t batches() const { return batches_; }
  std::uint64_t messages() const { return messages_; }
  // FlowOptions::progress reports messages posted out of `total` (0: not at all).
  void report_progress_of(std::uint64_t total) { progress_total_ = total; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

  // Rank `rank` runs its part of schedule `index` (in the order given to the constructor) from `release`, or now
  // if that is later.
  void start_segment(int rank, std::size_t index, double release) override {
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

  void run(const std::function<void(int)>& on_segment_done) override {
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

  // Ranks inside a segment (after run: those that deadlocked).
  std::size_t inside_segments() const override { return inside_; }

private:
  Segment make_segment(const Schedule& s) const {
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

  // The span an op of step `c` moves, and the bytes it is timed at.
  static std::uint32_t span_of(const StepCursor& c, const Op& op) {
    return c.k == 0 ? op.span() : c.repeat->shifted(op.span(), c.k);
  }
  static std::uint64_t timed_bytes(const Segment& segment, std::uint32_t span) {
    return lumping::timed_span_bytes(*segment.schedule, span, segment.padded_chunk_bytes);
  }

  // Moves `c` to the rank's next step (a repetition or the next stored step); false at the end of its ops.
  static bool next_step(const RankState& st, StepCursor& c, std::size_t& next_repeat) {
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

  void build_resources(std::span<const Schedule* const> schedules) {
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
    for (const Route& r : routes_)
      max_hops_ = std::max<std::size_t>(max_hops_, r.count);
  }

  // Resources that exactly the same routes cross carry the same flows at every instant: only the narrowest of them can
  // limit them, and it does so whenever any of them would, so the others are left out of the routes' resource lists
  // (a NIC's link to its PCIe switch and to its leaf switch; on rail-aligned nodes also the accelerator's PCIe link).
  // Max-min rates stay the same, and each flow's rate computation reads fewer links. Routes crossing a resource are
  // told apart by two 64-bit fingerprints of their sets (XOR of per-route hashes) and their count.
  void drop_shadowed_resources() {
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

  // Leaves in each route's resource list only those `keep` accepts (in place: routes are stored in order).
  template <typename Keep>
  void keep_route_resources(Keep&& keep) {
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

  // A resource that every route crossing it leaves for (or enters from) one and the same other resource, no wider,
  // carries a subset of that one's flows within at least its capacity: it can never be over capacity when the other
  // is not, so it constrains nothing and the max-min allocation (unique over the same feasible rates) is unchanged
  // without it. A GPU's PCIe link to the switch it shares with the NIC is one (its flows all go on to the NIC).
  // Mutual dominance would mean equal route sets, merged above, so no two resources drop each other.
  void drop_dominated_resources() {
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

  std::uint64_t pair_key(int src, int dst) const {
    return static_cast<std::uint64_t>(src) * ranks_.size() + static_cast<std::uint64_t>(dst);
  }

  // The route of a transfer from src to dst (every pair a schedule uses was routed as the engine was built).
  std::uint32_t route(int src, int dst) const {
    const std::uint32_t id = route_of_.find(pair_key(src, dst));
    if (id == none) throw std::logic_error("flow executor: no route for a pair the schedule uses");
    return id;
  }

  std::span<const std::uint32_t> resources(const Flow& f) const {
    return {route_resources_.data() + f.first_resource, f.resource_count};
  }

  // A channel's FIFO of posted sends, in a pool shared by all channels (no allocation per channel).
  void push_send(Channel& ch, std::uint64_t bytes) {
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
  std::uint64_t pop_send(Channel& ch) {
    const std::uint32_t id = ch.first_send;
    const std::uint64_t bytes = pending_[id].bytes;
    ch.first_send = pending_[id].next;
    if (ch.first_send == none) ch.last_send = none;
    --ch.sends;
    pending_[id].next = free_pending_;
    free_pending_ = id;
    return bytes;
  }

  Channel& channel(int src, int dst) {
    const std::uint64_t key = pair_key(src, dst);
    std::uint32_t id = channel_of_.find(key);
    if (id == none) {
      id = static_cast<std::uint32_t>(channels_.size());
      channel_of_.insert(key, id);
      channels_.emplace_back();
    }
    return channels_[id];
  }

  // An eager message's receive sees it at `at`: a timer, counted as the rank's reductions and computes are.
  void recv_ready_at(int rank, double at) {
    ++timers_;
    if (o_.segment_rounds) rounds_.add(segment_index(ranks_[static_cast<std::size_t>(rank)]));
    queue_.push(at, {EventKind::recv_ready, static_cast<std::uint32_t>(rank)});
  }

  std::uint32_t push_eager(Channel& ch, std::uint32_t flow) {
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
  EagerEntry pop_eager(Channel& ch) {
    const std::uint32_t id = ch.first_eager;
    const EagerEntry e = eager_[id];
    ch.first_eager = e.next;
    if (ch.first_eager == none) ch.last_eager = none;
    --ch.eager;
    --eager_unclaimed_;
    free_eager_list_.push_back(id);
    return e;
  }

  std::uint32_t start_transfer(Channel& ch, int src, int dst, std::uint64_t bytes) {
    if (ch.route == none) ch.route = route(src, dst);
    const Route& r = routes_[ch.route];
    const FactorRange f = factors_for(o_.factors, static_cast<double>(bytes));
    const std::uint32_t id = reuse_or_append(flows_, free_flows_);
    if (flow_mark_.size() < flows_.size()) {
      flow_mark_.push_back(0);
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

  void handle(const Event& e) {
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

  void finish_flow(std::uint32_t id) {
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

  void mark_dirty(std::uint32_t res) {
    if (res_[res].mark != 0) return;
    res_[res].mark = 1;
    dirty_.push_back(res);
  }

  void post_step(int rank) {
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

  // The per-message gap of the messages on a channel: its route's.
  double gap_of(Channel& ch, int src, int dst) {
    if (ch.route == none) ch.route = route(src, dst);
    return routes_[ch.route].gap_s;
  }

  void item_done(int rank) {
    if (--ranks_[static_cast<std::size_t>(rank)].outstanding == 0) items_done(rank);
  }

  // The step's transfers and compute are done: its reductions run, then the rank is ready for its next step.
  void items_done(int rank) {
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

  // All ranks inside segments finished a step at this instant with nothing else pending: a lockstep point. If the
  // previous global step also ran from a lockstep point to this one and every rank's next step repeats its last
  // one (same peers, kinds, bytes and flops, so the same flows on the same links, started together), the next step
  // takes exactly as long: it is skipped in one move. A run of repetitions of a compact schedule's step whose chunks
  // are timed alike is skipped whole. Cost: one comparison of each rank's two steps per move.
  void skip_repeated_steps() {
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

  // What the state of the simulation is relative to now: integer parts that must match exactly, real parts (bytes,
  // rates, times from now) that must match within rounding. Invalid while a rank is between segments.
  struct Snapshot {
    bool valid = false;
    double at = 0;
    std::vector<std::uint32_t> units;  // the ranks it covers (segment_rounds: those inside a segment; else all)
    std::vector<std::uint32_t> k;
    std::vector<std::uint64_t> keys;
    std::vector<double> values;
  };

  Snapshot snapshot() const {
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

  // Rank 0 posted a step. Every eighth time, the state is recorded; the next time it is compared. If in between every
  // rank posted exactly one more repetition of the same compact step, and the state is the same but for the time, the
  // pipeline is in a periodic regime (ranks that do not run in lockstep, e.g. NVLink inside nodes and a NIC between
  // them): it repeats every period until some rank's repetitions run out, so that many periods are skipped at once.
  void skip_periods() {
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

  // Counts the messages and bytes of skipped repetitions first .. first+count-1 of the rank's stored step as if they
  // had been posted. A rotation by one chunk either way sums chunk sizes from prefix sums, so a ring's skipped pass
  // costs O(1) per rank.
  void count_sends(const RankState& st, std::uint32_t first, std::uint32_t count) {
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
        bytes_sent_ += low <= high
                           ? prefix[high + 1] - prefix[low]
                           : (prefix[r->base + r->modulus] - prefix[low]) + (prefix[high + 1] - prefix[r->base]);
      } else {
        for (std::uint32_t k = first; k < first + count; ++k)
          bytes_sent_ += s.span_bytes(r->shifted(op.span(), k));
      }
    }
  }

  static bool same_shape(const Segment& segment, const StepCursor& a, const StepCursor& b) {
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

  // Weighted max-min fairness by progressive filling over the flows that share saturated links, transitively, with the
  // links whose load changed: every such flow's rate is level / penalty as the level rises (using rate x cost of each
  // link it crosses); a link whose remaining capacity the level fills, or a flow that reaches its bound, freezes its
  // flows. Flows whose rate changed get a new finish event.
  // The component stops at links that are not saturated (a non-blocking fabric's links), its boundary: the flows
  // outside keep their rates, and the flows inside are filled without the boundary's limits. That is exact as long as
  // the new rates fit in what the flows outside leave on each boundary link, since then no flow has it for bottleneck;
  // a boundary link that they would fill or overload joins the component and the rates are computed again.
  void compute_rates() {
    while (true) {
      comp_flows_.clear();
      comp_res_.clear();
      boundary_.clear();
      for (const std::uint32_t id : seeds_)
        add_to_component(id);
      for (std::size_t i = 0; i < dirty_.size(); ++i) {  // dirty_ grows as the component is explored
        const std::uint32_t res = dirty_[i];
        comp_res_.push_back(res);
        for (const OnResource& on : on_resource_[res])
          add_to_component(on.flow);
      }
      if (comp_flows_.size() * 4 > flows_.size()) {  // most flows: visit them in memory order (a server's incast)
        comp_flows_.clear();
        for (std::uint32_t id = 0; id < flows_.size(); ++id) {
          if (flow_mark_[id] == 1) comp_flows_.push_back(id);
        }
      }
      for (const std::uint32_t res : comp_res_) {
        Resource& r = res_[res];
        r.left = r.capacity;
        r.weight = 0;
        r.unfrozen = 0;
      }
      for (const std::uint32_t res : boundary_)
        res_[res].left = res_[res].capacity - res_[res].load;
      for (const std::uint32_t id : comp_flows_) {
        const Flow& f = flows_[id];
        for (const std::uint32_t res : resources(f)) {
          Resource& r = res_[res];
          if (r.mark == 2) {
            r.left += f.rate * f.cost;  // its load without the flows inside
          } else {
            ++r.unfrozen;
            r.weight += f.cost / f.penalty;
          }
        }
      }
      fill();
      bool exact = true;
      for (const std::uint32_t res : boundary_) {
        Resource& r = res_[res];
        if (r.left <= 1e-9 * r.capacity) {  // the new rates fill or overload a boundary link
          r.mark = 0;
          mark_dirty(res);
          exact = false;
        }
      }
      if (exact) break;
      for (const std::uint32_t res : boundary_) {  // start over from the links inside and those that filled up
        if (res_[res].mark == 2) res_[res].mark = 0;
      }
      for (const std::uint32_t id : comp_flows_)
        flow_mark_[id] = 0;
    }
    dirty_.clear();
    seeds_.clear();
    for (const std::uint32_t id : comp_flows_) {
      flow_mark_[id] = 0;
      set_rate(id, flows_[id].next_rate);
    }
    for (const std::uint32_t res : comp_res_)
      res_[res].mark = 0;
    for (const std::uint32_t res : boundary_)
      res_[res].mark = 0;
  }

  static bool saturated(const Resource& r) { return r.load >= r.capacity * (1 - 1e-6); }

  // A flow joins the component; so do the saturated links it crosses (with their flows, as compute_rates goes on);
  // the others are its boundary.
  void add_to_component(std::uint32_t id) {
    if (flow_mark_[id] != 0) return;
    flow_mark_[id] = 1;
    comp_flows_.push_back(id);
    for (const std::uint32_t res : resources(flows_[id])) {
      Resource& r = res_[res];
      if (r.mark != 0) continue;
      if (saturated(r) || r.load == 0) {  // (an idle link carries only flows that start now: no one outside)
        mark_dirty(res);
      } else {
        r.mark = 2;
        boundary_.push_back(res);
      }
    }
  }

  // Progressive filling of the component (comp_flows_, comp_res_ with left, weight and unfrozen set): each flow's
  // next_rate. Boundary links (mark 2) only have the new rates taken from what is left on them. Each level freezes the
  // flows of the links it fills (read from the links' flow lists) or those that reach their bound (walked in order of
  // bound), so that a level costs the links of the component and the flows it freezes, not every flow again.
  void fill() {
    std::size_t unfrozen = comp_flows_.size();
    bounded_.clear();
    for (const std::uint32_t id : comp_flows_) {
      if (flows_[id].bound < infinity) bounded_.push_back(id);
    }
    auto bound_level = [&](std::uint32_t id) { return flows_[id].bound * flows_[id].penalty; };
    std::sort(bounded_.begin(), bounded_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return bound_level(a) < bound_level(b); });
    std::size_t next_bounded = 0;
    // What is still unfrozen, kept compact: the links with unfrozen flows (scanned for each level) and the flows
    // (scanned when a level freezes many), each list rid of what froze before it is read again, in its order, so that
    // a component whose levels freeze it a slice at a time (the flows of a switch's reduction on every node) costs
    // the unfrozen part per level instead of the whole component.
    open_res_.assign(comp_res_.begin(), comp_res_.end());
    open_flows_.assign(comp_flows_.begin(), comp_flows_.end());
    auto freeze = [&](std::uint32_t id, double level) {
      Flow& f = flows_[id];
      flow_mark_[id] = 2;
      --unfrozen;
      f.next_rate = level / f.penalty;
      for (const std::uint32_t res : resources(f)) {
        Resource& r = res_[res];
        r.left -= f.next_rate * f.cost;
        if (r.mark == 1) {
          r.weight -= f.cost / f.penalty;
          --r.unfrozen;
        }
      }
    };
    auto share = [&](const Resource& r) { return std::max(0.0, r.left) / r.weight; };
    while (unfrozen > 0) {
      double level = infinity;
      std::size_t kept = 0;
      for (const std::uint32_t res : open_res_) {
        if (res_[res].unfrozen == 0) continue;
        open_res_[kept++] = res;
        level = std::min(level, share(res_[res]));
      }
      open_res_.resize(kept);
      while (next_bounded < bounded_.size() && flow_mark_[bounded_[next_bounded]] != 1)
        ++next_bounded;
      const double by_bound = next_bounded < bounded_.size() ? bound_level(bounded_[next_bounded]) : infinity;
      if (level == infinity && by_bound == infinity) {  // flows on boundary links only: unlimited, until checked
        for (const std::uint32_t id : open_flows_) {
          if (flow_mark_[id] == 1) freeze(id, infinity);
        }
        break;
      }
      const double close = std::min(level, by_bound) * (1 + 1e-12);
      if (by_bound <= level) {
        for (std::size_t i = next_bounded; i < bounded_.size() && bound_level(bounded_[i]) <= close; ++i) {
          if (flow_mark_[bounded_[i]] == 1) freeze(bounded_[i], by_bound);
        }
        continue;
      }
      filled_.clear();
      std::size_t filled_flows = 0;
      for (const std::uint32_t res : open_res_) {
        Resource& r = res_[res];
        if (share(r) <= close) {
          filled_.push_back(res);
          filled_flows += r.unfrozen;
          r.filled = true;
        }
      }
      if (filled_flows * 8 < unfrozen) {  // a few flows freeze: read them from their links' lists
        for (const std::uint32_t res : filled_) {
          for (const OnResource& on : on_resource_[res]) {
            if (flow_mark_[on.flow] == 1) freeze(on.flow, level);
          }
        }
      } else {  // many (a server's incast): read the unfrozen flows in order rather than jump around
        kept = 0;
        for (const std::uint32_t id : open_flows_) {
          if (flow_mark_[id] != 1) continue;
          const auto route = resources(flows_[id]);
          if (std::any_of(route.begin(), route.end(), [&](std::uint32_t res) { return res_[res].filled; })) {
            freeze(id, level);
          } else {
            open_flows_[kept++] = id;
          }
        }
        open_flows_.resize(kept);
      }
      for (const std::uint32_t res : filled_)
        res_[res].filled = false;
    }
  }

  void set_rate(std::uint32_t id, double rate) {
    Flow& f = flows_[id];
    if (rate == f.rate) return;
    for (const std::uint32_t res : resources(f))
      res_[res].load += (rate - f.rate) * f.cost;
    f.remaining = std::max(0.0, f.remaining - f.rate * (now_ - f.updated_at));
    f.updated_at = now_;
    f.rate = rate;
    if (rate > 0) {
      finishing_.set(id, now_ + f.remaining / rate);
    } else {
      finishing_.erase(id);
    }
  }

  const FlowOptions& o_;
  double now_ = 0;
  std::vector<RankState> ranks_;
  std::vector<Flow> flows_;
  std::vector<std::uint8_t> flow_mark_;  // compute_rates' scratch: 1 in the component, 2 frozen (apart, dense)
  std::vector<std::uint32_t> free_flows_;
  std::vector<EagerEntry> eager_;  // the channels' lists of unclaimed eager messages
  std::vector<std::uint32_t> free_eager_list_;
  std::size_t eager_unclaimed_ = 0;
  bool has_gaps_ = false;  // some route has a per-message gap
  std::size_t in_flight_ = 0;
  std::size_t inside_ = 0;             // ranks inside a segment
  std::size_t awaiting_release_ = 0;   // of them, those whose release is still to come
  std::size_t timers_ = 0;             // reduce_done and compute_done events pending
  engine::SegmentRounds<int> rounds_;  // segment_rounds: each segment's flows and timers pending, its held ranks
  std::vector<Channel> channels_;
  OpenIndex channel_of_;  // by (src, dst) pair
  struct PendingSend {
    std::uint64_t bytes = 0;
    std::uint32_t next = none;  // the channel's next, or the next free entry
  };
  std::vector<PendingSend> pending_;
  std::uint32_t free_pending_ = none;
  EventQueue queue_;
  FinishQueue finishing_;
  std::vector<Event> batch_;
  std::vector<int> ready_;
  std::vector<int> held_;
  std::uint64_t messages_ = 0;
  std::uint64_t progress_total_ = 0;  // report_progress_of
  std::uint64_t bytes_sent_ = 0;
  std::vector<Segment> segments_;
  bool anchor_posted_ = false;
  std::uint64_t anchors_ = 0;
  int anchor_ = 0;  // the rank whose posts time the period snapshots
  Snapshot period_start_;
  mutable std::vector<std::uint32_t> flow_order_;
  double lockstep_at_ = -1;
  std::size_t posted_since_lockstep_ = 0;
  std::uint64_t skipped_steps_ = 0;
  std::uint64_t batches_ = 0;
  std::vector<Resource> res_;
  std::vector<Route> routes_;
  std::vector<std::uint32_t> route_resources_;
  OpenIndex route_of_;  // by (src, dst) pair
  struct OnResource {
    std::uint32_t flow;
    std::uint32_t hop;  // the resource's place in the flow's route
  };
  std::vector<std::vector<OnResource>> on_resource_;  // moving flows on each resource
  std::size_t max_hops_ = 2;                          // the longest route (the star's are 2 links)
  std::vector<std::uint32_t> slots_;                  // [flow * max_hops_ + hop]: where in on_resource_ it sits
  std::uint32_t& slot(std::uint32_t flow, std::uint32_t hop) {
    return slots_[static_cast<std::size_t>(flow) * max_hops_ + hop];
  }
  // scratch space of compute_rates, kept between calls
  std::vector<std::uint32_t> dirty_;  // links whose saturated flows need new rates
  std::vector<std::uint32_t> seeds_;  // flows that started moving
  std::vector<std::uint32_t> comp_flows_;
  std::vector<std::uint32_t> comp_res_;    // the links inside the component
  std::vector<std::uint32_t> boundary_;    // the unsaturated links its flows also cross
  std::vector<std::uint32_t> bounded_;     // fill: the component's flows with a bound, by bound
  std::vector<std::uint32_t> filled_;      // fill: the links a level fills
  std::vector<std::uint32_t> open_res_;    // fill: the component's links that still carry unfrozen flows
  std::vector<std::uint32_t> open_flows_;  // fill: its flows not yet frozen (up to the last scan)
};

// The classes of `ranks` positions running `segments` to simulate instead of the positions, where lumping is allowed:
// at most `most` of them, and fewer than the positions.
std::optional<lumping::Lumping> lump_with(int ranks, std::span<const Schedule* const> segments,
                                          const FlowOptions& options, std::size_t most,
                                          const lumping::UnitHints& hints) {
  if (!options.lump_ranks || !options.contention || ranks < 4) return std::nullopt;  // (lumped: always shared)
  std::optional<lumping::Lumping> lumped = lumping::find_classes(ranks, segments, options, most, hints);
  if (lumped && lumped->classes() >= static_cast<std::size_t>(ranks)) return std::nullopt;  // (nothing to gain)
  return lumped;
}

// Whether the full engine runs the schedule's repetitions in rounds (FlowOptions::rounds): it has a step repeated in
// lockstep (a ring's rotation) and no collective library's eager messages.
bool runs_in_rounds(const Schedule& s, const FlowOptions& options) {
  return options.rounds &&
         std::any_of(s.repeats.begin(), s.repeats.end(), [](const StepRepeat& r) { return r.lockstep; }) &&
         !segment_library_cost(options, s).active;
}

// A collective or a data-parallel step: at most a sixteenth as many classes as ranks (or 16). The lumped engine
// recomputes every moving flow's rate at each instant, so with hundreds of classes that end their steps at different
// times (butterfly on 4096 V100s: 512) the full engine's local updates win (5.7 s against 0.5 s). Schedules run in
// rounds are not lumped: the full engine skips their repeated rounds in lockstep, which costs less than finding
// classes. (A library's ring or a tree's pipeline has no rounds: its every message is simulated, by class if it can.)
std::optional<lumping::Lumping> lump(int ranks, std::span<const Schedule* const> segments, const FlowOptions& options) {
  if (std::any_of(segments.begin(), segments.end(), [&](const Schedule* s) { return runs_in_rounds(*s, options); })) {
    return std::nullopt;
  }
  return lump_with(ranks, segments, options, std::max<std::size_t>(16, static_cast<std::size_t>(ranks) / 16), {});
}

// A training step of several streams or stages in classes: units of one stream and stage start alike, and the units
// of a rank are driven together, so a class of units belongs to one class of ranks (UnitHints). The ranks of a class
// of ranks run alike (the replicas of a stage, its tensor ranks where the cluster is symmetric): one is driven.
struct LumpedStep {
  lumping::Lumping lumping;
  DrivenRanks driven;
};
// The steps an engine processes in one run of `program` by `ranks` (every rank for the full engine, a
// representative of each class for the lumped one): their units' steps in each segment, as often as the stage uses
// the segment (a tensor allreduce twice per micro-batch, a bucket once, ...); with `repetitions`, every repetition of
// a compact step, without, the stored steps only (what an engine that skips the repetitions run in lockstep runs).
double program_steps(const StepProgram& p, std::span<const int> ranks, bool repetitions) {
  auto steps = [&](std::int64_t segment, int unit) {
    if (segment < 0 || unit < 0) return 0.0;
    const Schedule& s = *p.segments[static_cast<std::size_t>(segment)];
    const std::uint64_t begin = s.rank_begin[static_cast<std::size_t>(unit)];
    const std::uint64_t end = s.rank_begin[static_cast<std::size_t>(unit) + 1];
    double n = 0;
    for (std::uint64_t i = begin; i < end; ++i)
      n += i == begin || s.ops[i].starts_step() ? 1 : 0;
    if (repetitions) {
      for (std::size_t r = s.first_repeat_from(begin); r < s.repeats.size() && s.repeats[r].op < end; ++r)
        n += s.repeats[r].count;
    }
    return n;
  };
  const double m = p.micro_batches;
  double total = 0;
  for (const int rank : ranks) {
    const StageStep& st = p.stage_of_rank(rank);
    auto unit = [&](Stream k) { return p.stream_base[static_cast<std::size_t>(k)] < 0 ? -1 : p.unit(rank, k); };
    for (const LayerStep& layer : st.layers)
      total += 2 * m * steps(layer.tensor_segment, unit(Stream::compute));
    for (const std::size_t b : st.bucket_segment)
      total += steps(static_cast<std::int64_t>(b), unit(Stream::reduce));
    for (const std::size_t g : st.gather_segment)
      total += 2 * steps(static_cast<std::int64_t>(g), unit(Stream::gather));
    total += m * (steps(st.send_forward_segment, unit(Stream::send_forward)) +
                  steps(st.receive_forward_segment, unit(Stream::receive_forward)) +
                  steps(st.send_backward_segment, unit(Stream::send_backward)) +
                  steps(st.receive_backward_segment, unit(Stream::receive_backward)));
  }
  return total;
}

std::optional<LumpedStep> lump_step(const StepProgram& program, const FlowOptions& options) {
  const auto units = static_cast<std::size_t>(program.units);
  std::vector<std::uint64_t> key(units, 0);
  std::vector<std::uint32_t> owner(units, 0);
  int first_stream = -1;
  for (std::size_t k = 0; k < stream_count; ++k) {
    if (program.stream_base[k] < 0) continue;
    if (first_stream < 0) first_stream = static_cast<int>(k);
    for (int r = 0; r < program.ranks; ++r) {
      const auto u = static_cast<std::size_t>(program.unit(r, static_cast<Stream>(k)));
      key[u] = (static_cast<std::uint64_t>(k) + 1) << 32 | program.stage_index(r);
      owner[u] = static_cast<std::uint32_t>(r);
    }
  }
  if (first_stream < 0) return std::nullopt;
  // a collective library's other channels: more units of the reduce stream's rank. A class may hold several channels'
  // units (the channels' rings are alike but for where they cross nodes); its units' owners are of one class of
  // ranks (the hints), and starting it starts them all, so a driven rank starts each of its channels' classes once.
  const int reduce_base = program.stream_base[static_cast<std::size_t>(Stream::reduce)];
  const int channels = reduce_base >= 0 ? program.reduce_channels : 1;
  auto channel_unit = [&](int r, int c) { return static_cast<std::size_t>(reduce_base + c * program.ranks + r); };
  for (int c = 1; c < channels; ++c) {
    for (int r = 0; r < program.ranks; ++r) {
      key[channel_unit(r, c)] = key[channel_unit(r, 0)];
      owner[channel_unit(r, c)] = static_cast<std::uint32_t>(r);
    }
  }
  const lumping::UnitHints hints{key, owner, static_cast<std::size_t>(program.ranks)};
  // (at most a class per 16 units: fewer units a class never paid in the layouts measured)
  std::optional<lumping::Lumping> lumped =
      lump_with(program.units, program.segments, options, std::max<std::size_t>(16, units / 16), hints);
  if (!lumped) return std::nullopt;
  LumpedStep out{std::move(*lumped), {}};
  // A driven rank per class of ranks: ranks whose units fall in the same classes (with a library's channels, the same
  // set of classes over all their reduce units: a rank's channel 0 may be alike another's channel 1)
  std::map<std::vector<int>, int> driven_of;
  std::vector<char> owned(out.lumping.classes(), 0);  // classes already given to a driven rank
  for (int r = 0; r < program.ranks; ++r) {
    std::array<int, stream_count> classes{-1, -1, -1, -1, -1, -1, -1};
    for (std::size_t k = 0; k < stream_count; ++k) {
      if (program.stream_base[k] >= 0) {
        classes[k] =
            static_cast<int>(out.lumping.class_of[static_cast<std::size_t>(program.unit(r, static_cast<Stream>(k)))]);
      }
    }
    std::vector<int> reduce_set;  // with channels: the classes of all its reduce units, each once
    for (int c = 0; channels > 1 && c < channels; ++c)
      reduce_set.push_back(static_cast<int>(out.lumping.class_of[channel_unit(r, c)]));
    std::sort(reduce_set.begin(), reduce_set.end());
    reduce_set.erase(std::unique(reduce_set.begin(), reduce_set.end()), reduce_set.end());
    std::vector<int> identity(classes.begin(), classes.end());
    if (channels > 1) {
      identity[static_cast<std::size_t>(Stream::reduce)] = -1;
      identity.insert(identity.end(), reduce_set.begin(), reduce_set.end());
    }
    identity.push_back(static_cast<int>(program.stage_index(r)));
    const auto [at, added] = driven_of.try_emplace(identity, static_cast<int>(out.driven.rank.size()));
    if (!added) continue;   // (a rank alike one already driven: the same classes, started by it)
    std::vector<int> more;  // its other channels' classes: the set but the one its reduce stream's unit is in
    if (channels > 1) {
      more = reduce_set;
      std::erase(more, classes[static_cast<std::size_t>(Stream::reduce)]);
    }
    out.driven.rank.push_back(r);
    out.driven.unit.push_back(classes);
    out.driven.more_reduce_units.push_back(more);
    for (const std::span<const int> list : {std::span<const int>(classes), std::span<const int>(more)}) {
      for (const int c : list) {  // a class of units serves one driven rank and stream (the hints make it so)
        if (c < 0) continue;
        if (owned[static_cast<std::size_t>(c)]) return std::nullopt;
        owned[static_cast<std::size_t>(c)] = 1;
      }
    }
  }
  std::vector<int> all(static_cast<std::size_t>(program.ranks));
  std::iota(all.begin(), all.end(), 0);
  const double full_steps = program_steps(program, all, false);
  // (both engines skip the repetitions of a step repeated in lockstep that run alone, in rounds)
  const double lumped_steps = program_steps(program, out.driven.rank, !(options.rounds && options.skip_repeats));
  // The lumped engine pays more per step (it recomputes every moving class's rate at each instant, and classes whose
  // rounds drift apart multiply its instants): lumped when it has 8 times fewer steps to run. Measured on gpt2-xl-3d's
  // layouts (docs/benchmarks.md): 512 d x 4 t x 4 p on 8192 H100s (13x fewer) 8.1 s lumped against 11.5 s in full; 512
  // d x 4 t x 2 p on 4096 (4.3x) 12.4 s against 4.8 s.
  if (!options.lump_always && full_steps < 8 * lumped_steps) return std::nullopt;
  return out;
}

// Runs `units` ranks (or classes of ranks) through segment 0 from time 0: when each one finished.
std::vector<double> run_once(Network& engine, std::size_t units, const char* what) {
  std::vector<double> finish(units, 0.0);
  for (std::size_t u = 0; u < units; ++u)
    engine.start_segment(static_cast<int>(u), 0, 0.0);
  engine.run([&](int unit) { finish[static_cast<std::size_t>(unit)] = engine.now(); });
  if (const std::size_t n = engine.inside_segments(); n > 0) {
    throw std::runtime_error("flow executor: deadlock: " + std::to_string(n) + " " + what + " never finished");
  }
  return finish;
}

void check_placement(int ranks, const FlowOptions& options, const char* what) {
  if ((options.topology != nullptr || !options.accelerator_of.empty()) &&
      options.accelerator_of.size() != static_cast<std::size_t>(ranks)) {
    throw std::invalid_argument(std::string("flow executor: ") + what + " has " + std::to_string(ranks) +
                                " ranks but " + std::to_string(options.accelerator_of.size()) +
                                " are placed on the cluster");
  }
}

}  // namespace

namespace {

// The flow engine with its own copy of the options it reads by reference.
class OwnedFlowNetwork final : public Network {
public:
  OwnedFlowNetwork(int units, std::span<const Schedule* const> segments, const FlowOptions& options)
      : placed_(options, units), engine_(units, segments, placed_.options) {}
  double now() const override { return engine_.now(); }
  void start_segment(int unit, std::size_t segment, double release_s) override {
    engine_.start_segment(unit, segment, release_s);
  }
  void run(const std::function<void(int)>& on_done) override { engine_.run(on_done); }
  std::size_t inside_segments() const override { return engine_.inside_segments(); }

private:
  Placed<FlowOptions> placed_;
  FlowEngine engine_;
};

}  // namespace

std::unique_ptr<Network> make_flow_network(int units, std::span<const Schedule* const> segments,
                                           const FlowOptions& options) {
  check_placement(units, options, "the network");
  for (const Schedule* segment : segments) {
    if (std::string problem = check_well_formed(*segment, true); !problem.empty()) {
      throw std::invalid_argument("flow executor: " + problem);
    }
  }
  return std::make_unique<OwnedFlowNetwork>(units, segments, options);
}

ExecutionResult run_flow(const Schedule& schedule, const FlowOptions& options) {
  if (std::string problem = check_well_formed(schedule, true); !problem.empty()) {
    throw std::invalid_argument("flow executor: " + problem);
  }
  check_placement(schedule.ranks, options, "the schedule");
  const auto started = std::chrono::steady_clock::now();
  const Placed<FlowOptions> on(options, schedule.ranks);
  const FlowOptions& o = on.options;
  const Schedule* const segments[] = {&schedule};
  ExecutionResult result;
  if (auto lumped = lump(schedule.ranks, segments, o)) {
    lumping::LumpedEngine engine(*lumped, o);
    const std::vector<double> finish = run_once(engine, lumped->classes(), "classes of ranks");
    for (const std::uint32_t c : lumped->class_of)
      result.rank_finish_s.push_back(finish[c]);
    result.messages = lumped->messages;
    result.bytes_sent = lumped->bytes_sent;
    result.event_batches = engine.batches();
    result.rank_classes = lumped->classes();
  } else {
    FlowEngine engine(schedule.ranks, segments, o);
    if (o.progress) engine.report_progress_of(expanded_send_count(schedule));
    result.rank_finish_s = run_once(engine, static_cast<std::size_t>(schedule.ranks), "ranks");
    result.messages = engine.messages();
    result.bytes_sent = engine.bytes_sent();
    result.event_batches = engine.batches();
    result.skipped_steps = engine.skipped_steps();
  }
  result.time_s = *std::max_element(result.rank_finish_s.begin(), result.rank_finish_s.end());
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

StepRun run_flow_step(const StepProgram& program, const FlowOptions& options, RunTrace* trace) {
  if (std::string problem = check_step_program(program); !problem.empty()) {
    throw std::invalid_argument("training step: " + problem);
  }
  check_placement(program.units, options, "the training step");
  for (const Schedule* segment : program.segments) {
    if (std::string problem = check_well_formed(*segment, true); !problem.empty()) {
      throw std::invalid_argument("training step: " + problem);
    }
  }
  const Placed<FlowOptions> on(options, program.units);
  const FlowOptions& placed_options = on.options;
  if (!program.helper_units.empty()) {
    // (rank 0 alone starts the helper units: a class of ranks would start them once for each of its ranks' classes)
  } else if (program.noise != nullptr) {
    // (ranks that draw their own times do not run alike: every rank is simulated)
  } else if (program.units == program.ranks && program.stages.size() == 1) {
    if (auto lumped = lump(program.units, program.segments, placed_options)) {
      lumping::LumpedEngine engine(*lumped, placed_options);
      DrivenRanks driven;  // (one stream: a class of units is a class of ranks)
      for (std::size_t c = 0; c < lumped->classes(); ++c) {
        driven.rank.push_back(static_cast<int>(lumped->representative[c]));
        driven.unit.emplace_back().fill(-1);
        for (std::size_t k = 0; k < stream_count; ++k) {
          if (program.stream_base[k] >= 0) driven.unit.back()[k] = static_cast<int>(c);
        }
      }
      StepRun run = drive_step(program, engine, driven, "flow executor (classes of ranks)", trace);
      run.batches = engine.batches();
      return run;
    }
  } else if (auto lumped = lump_step(program, placed_options)) {
    lumping::LumpedEngine engine(lumped->lumping, placed_options);
    StepRun run = drive_step(program, engine, lumped->driven, "flow executor (classes of ranks)", trace);
    run.batches = engine.batches();
    return run;
  }
  FlowOptions o = placed_options;
  if (program.units != program.ranks) o.segment_rounds = true;
  FlowEngine engine(program.units, program.segments, o);
  StepRun run = drive_step(program, engine, "flow executor", trace);
  run.batches = engine.batches();
  return run;
}

TrainingResult run_flow_training(const TrainingProgram& program, int ranks, const FlowOptions& options) {
  check_placement(ranks, options, "the training program");
  if (std::string problem =
          check_training_program(program, ranks, options.topology != nullptr ? options.accelerator_of.size() : 0);
      !problem.empty()) {
    throw std::invalid_argument("training step: " + problem);
  }
  std::vector<const Schedule*> buckets;
  for (const Schedule& bucket : program.buckets) {
    if (std::string problem = check_well_formed(bucket, true); !problem.empty()) {
      throw std::invalid_argument("training step: " + problem);
    }
    buckets.push_back(&bucket);
  }
  const auto started = std::chrono::steady_clock::now();
  const Placed<FlowOptions> on(options, ranks);
  const FlowOptions& placed_options = on.options;
  TrainingResult result;
  if (program.reduce_channels > 1 || !program.helper_endpoints.empty()) {
    // a library's channels and switch helpers: units of their own, on their ranks' accelerators and on switches
    FlowOptions o = placed_options;
    o.accelerator_of = training_unit_accelerators(program, placed_options.accelerator_of);
    o.segment_rounds = true;
    // channels without helpers, by classes of units where the cluster is symmetric (each driven rank starts its
    // channels' classes); switch helpers, started by rank 0 alone, and per-rank variability run every unit
    const StepProgram step = data_parallel_step(program, ranks);
    std::optional<LumpedStep> lumped;
    if (program.helper_endpoints.empty() && program.noise == nullptr) lumped = lump_step(step, o);
    if (lumped) {
      lumping::LumpedEngine engine(lumped->lumping, o);
      result = training_result(program, drive_step(step, engine, lumped->driven, "flow executor (classes of ranks)"));
      result.rank_classes = lumped->lumping.classes();
    } else {
      FlowEngine engine(training_units(program, ranks), buckets, o);
      result = training_result(program, drive_step(step, engine, "flow executor"));
    }
  } else if (auto lumped = program.noise == nullptr ? lump(ranks, buckets, placed_options) : std::nullopt) {
    // every class's ranks run the same steps (not with per-rank variability)
    lumping::LumpedEngine engine(*lumped, placed_options);
    result = drive_training(program, engine, static_cast<int>(lumped->classes()), "flow executor (classes of ranks)");
    result.rank_classes = lumped->classes();
  } else {
    FlowEngine engine(ranks, buckets, placed_options);
    result = drive_training(program, engine, ranks, "flow executor");
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace dtsim
