// The flow engine (sim/flow_executor.hpp says what it models): its state, and the FlowEngine that runs schedules
// on it. Internal to the flow executor: sim/flow_engine.cpp runs events, sim/flow_rates.cpp shares links (max-min),
// sim/flow_skipping.cpp skips repeated rounds and periods.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "algorithms/schedule.hpp"
#include "sim/engine_constants.hpp"
#include "sim/flow_executor.hpp"
#include "sim/flow_lumping.hpp"
#include "sim/flow_queues.hpp"
#include "sim/library_cost.hpp"
#include "sim/network.hpp"
#include "sim/open_index.hpp"
#include "sim/segment_rounds.hpp"

namespace dtsim::flow_engine {

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

// compute_rates' flows of one route with the same cost, penalty and bound: progressive filling treats them alike, so
// it fills them as one, with their count as its weight (an NVLS tree's chunks in flight share a route several at a
// time). Max-min rates are unique, so the rates are those of filling the flows one by one.
struct RateGroup {
  std::uint32_t first_resource = 0;  // its route, as Flow's
  std::uint32_t resource_count = 0;
  std::uint32_t members = 0;
  std::uint32_t next_of_route = none;  // the route's other groups in this computation
  double cost = 1;
  double penalty = 1;
  double bound = infinity;
  double rate_sum = 0;   // the members' rates before the computation
  double next_rate = 0;  // each member's rate, computed before it is set
  bool frozen = false;
};

// A resource (one direction of a link), with the scratch of compute_rates, kept together for locality.
struct Resource {
  double capacity = 0;  // bytes per second
  double load = 0;      // rate x cost of the flows moving on it
  double left = 0;      // compute_rates: capacity not yet given to frozen flows
  double weight = 0;    // compute_rates: sum of 1 / penalty of its unfrozen flows
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
  void start_segment(int rank, std::size_t index, double release) override;

  void run(const std::function<void(int)>& on_segment_done) override;

  // Ranks inside a segment (after run: those that deadlocked).
  std::size_t inside_segments() const override { return inside_; }

private:
  Segment make_segment(const Schedule& s) const;

  // The span an op of step `c` moves, and the bytes it is timed at.
  static std::uint32_t span_of(const StepCursor& c, const Op& op) {
    return c.k == 0 ? op.span() : c.repeat->shifted(op.span(), c.k);
  }
  static std::uint64_t timed_bytes(const Segment& segment, std::uint32_t span) {
    return lumping::timed_span_bytes(*segment.schedule, span, segment.padded_chunk_bytes);
  }

  // Moves `c` to the rank's next step (a repetition or the next stored step); false at the end of its ops.
  static bool next_step(const RankState& st, StepCursor& c, std::size_t& next_repeat);

  void build_resources(std::span<const Schedule* const> schedules);

  // Resources that exactly the same routes cross carry the same flows at every instant: only the narrowest of them can
  // limit them, and it does so whenever any of them would, so the others are left out of the routes' resource lists
  // (a NIC's link to its PCIe switch and to its leaf switch; on rail-aligned nodes also the accelerator's PCIe link).
  // Max-min rates stay the same, and each flow's rate computation reads fewer links. Routes crossing a resource are
  // told apart by two 64-bit fingerprints of their sets (XOR of per-route hashes) and their count.
  void drop_shadowed_resources();

  // Leaves in each route's resource list only those `keep` accepts (in place: routes are stored in order).
  template <typename Keep>
  void keep_route_resources(Keep&& keep);

  // A resource that every route crossing it leaves for (or enters from) one and the same other resource, no wider,
  // carries a subset of that one's flows within at least its capacity: it can never be over capacity when the other
  // is not, so it constrains nothing and the max-min allocation (unique over the same feasible rates) is unchanged
  // without it. A GPU's PCIe link to the switch it shares with the NIC is one (its flows all go on to the NIC).
  // Mutual dominance would mean equal route sets, merged above, so no two resources drop each other.
  void drop_dominated_resources();

  std::uint64_t pair_key(int src, int dst) const {
    return static_cast<std::uint64_t>(src) * ranks_.size() + static_cast<std::uint64_t>(dst);
  }

  // The route of a transfer from src to dst (every pair a schedule uses was routed as the engine was built).
  std::uint32_t route(int src, int dst) const;

  std::span<const std::uint32_t> resources(const Flow& f) const {
    return {route_resources_.data() + f.first_resource, f.resource_count};
  }
  std::span<const std::uint32_t> resources(const RateGroup& g) const {
    return {route_resources_.data() + g.first_resource, g.resource_count};
  }

  // A channel's FIFO of posted sends, in a pool shared by all channels (no allocation per channel).
  void push_send(Channel& ch, std::uint64_t bytes);
  std::uint64_t pop_send(Channel& ch);

  // (inline here and on handle, add_to_component and fill: each is used in one file, in its hot loop, and a function
  // declared inline is inlined there as the engine's anonymous namespace once let the compiler do; measured, the
  // predict of gpt2-xl-3d with --search at 256 GPUs took 7% longer without)
  inline Channel& channel(int src, int dst);

  // An eager message's receive sees it at `at`: a timer, counted as the rank's reductions and computes are.
  void recv_ready_at(int rank, double at);

  std::uint32_t push_eager(Channel& ch, std::uint32_t flow);
  EagerEntry pop_eager(Channel& ch);

  std::uint32_t start_transfer(Channel& ch, int src, int dst, std::uint64_t bytes);

  inline void handle(const Event& e);

  void finish_flow(std::uint32_t id);

  void mark_dirty(std::uint32_t res) {
    if (res_[res].mark != 0) return;
    res_[res].mark = 1;
    dirty_.push_back(res);
  }

  void post_step(int rank);

  // The per-message gap of the messages on a channel: its route's.
  double gap_of(Channel& ch, int src, int dst);

  void item_done(int rank);

  // The step's transfers and compute are done: its reductions run, then the rank is ready for its next step.
  void items_done(int rank);

  // All ranks inside segments finished a step at this instant with nothing else pending: a lockstep point. If the
  // previous global step also ran from a lockstep point to this one and every rank's next step repeats its last
  // one (same peers, kinds, bytes and flops, so the same flows on the same links, started together), the next step
  // takes exactly as long: it is skipped in one move. A run of repetitions of a compact schedule's step whose chunks
  // are timed alike is skipped whole. Cost: one comparison of each rank's two steps per move.
  void skip_repeated_steps();

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

  Snapshot snapshot() const;

  // Rank 0 posted a step. Every eighth time, the state is recorded; the next time it is compared. If in between every
  // rank posted exactly one more repetition of the same compact step, and the state is the same but for the time, the
  // pipeline is in a periodic regime (ranks that do not run in lockstep, e.g. NVLink inside nodes and a NIC between
  // them): it repeats every period until some rank's repetitions run out, so that many periods are skipped at once.
  void skip_periods();

  // Counts the messages and bytes of skipped repetitions first .. first+count-1 of the rank's stored step as if they
  // had been posted. A rotation by one chunk either way sums chunk sizes from prefix sums, so a ring's skipped pass
  // costs O(1) per rank.
  void count_sends(const RankState& st, std::uint32_t first, std::uint32_t count);

  static bool same_shape(const Segment& segment, const StepCursor& a, const StepCursor& b);

  // Weighted max-min fairness by progressive filling over the flows that share saturated links, transitively, with the
  // links whose load changed: as the level rises, every such flow uses level / penalty of each link it crosses (its
  // rate x cost), so that it moves level / (penalty x cost) bytes a second: SimGrid's CM02 shares a link's capacity
  // among its variables by penalty and moves a variable's bytes at its value times the bandwidth factor (1 / cost). A
  // link whose remaining capacity the level fills, or a flow that reaches its bound, freezes its flows. Flows whose
  // rate changed get a new finish event.
  // The component stops at links that are not saturated (a non-blocking fabric's links), its boundary: the flows
  // outside keep their rates, and the flows inside are filled without the boundary's limits. That is exact as long as
  // the new rates fit in what the flows outside leave on each boundary link, since then no flow has it for bottleneck;
  // a boundary link that they would fill or overload joins the component and the rates are computed again.
  void compute_rates();

  static bool saturated(const Resource& r) { return r.load >= r.capacity * (1 - 1e-6); }

  // A flow joins the component; so do the saturated links it crosses (with their flows, as compute_rates goes on);
  // the others are its boundary.
  inline void add_to_component(std::uint32_t id);

  // Progressive filling of the component (comp_flows_ in groups_, comp_res_ with left, weight and unfrozen set):
  // each group's next_rate. Boundary links (mark 2) only have the new rates taken from what is left on them. Each level
  // freezes the flows of the links it fills (read from the links' flow lists) or those that reach their bound (walked
  // in order of bound), so that a level costs the links of the component and the flows it freezes, not every flow
  // again.
  inline void fill();

  void set_rate(std::uint32_t id, double rate);

  // Forgets compute_rates' groups (a new epoch: every route_group_ entry is stale).
  void clear_groups();

  const FlowOptions& o_;
  double now_ = 0;
  std::vector<RankState> ranks_;
  std::vector<Flow> flows_;
  std::vector<std::uint8_t> flow_mark_;  // compute_rates' scratch: 1 in the component (apart, dense)
  std::vector<std::uint32_t> group_of_;  // compute_rates' scratch: a component flow's group in groups_
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
  std::vector<std::uint32_t> comp_res_;  // the links inside the component
  std::vector<std::uint32_t> boundary_;  // the unsaturated links its flows also cross
  std::vector<RateGroup> groups_;        // the component's flows by route, cost, penalty and bound
  struct RouteGroup {
    std::uint32_t epoch = 0;  // the computation that set `first` (group_epoch_); another one: none
    std::uint32_t first = none;
  };
  std::vector<RouteGroup> route_group_;  // by a route's first resource: its first group in groups_
  std::uint32_t group_epoch_ = 1;
  std::vector<std::uint32_t> bounded_;      // fill: the component's groups with a bound, by bound
  std::vector<std::uint32_t> filled_;       // fill: the links a level fills
  std::vector<std::uint32_t> open_res_;     // fill: the component's links that still carry unfrozen flows
  std::vector<std::uint32_t> open_groups_;  // fill: its groups not yet frozen (up to the last scan)
};

}  // namespace dtsim::flow_engine
