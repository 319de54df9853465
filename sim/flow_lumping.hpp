// Symmetry reduction for the flow executor: ranks that provably run alike are simulated once.
//
// A parameter server on 4096 GPUs with one shard per node moves 4 million messages a phase, yet on a fat-tree they
// fall into ten classes of ranks and 158 of messages (a GPU that holds a shard or not, a server on the same leaf or
// not, ...). Colour refinement (1-dimensional Weisfeiler-Leman, as used for lumping linear programs: Grohe et al. 2014,
// "Dimension reduction via colour refinement") over the ranks, the messages between them and the links they cross finds
// the coarsest partition in which
//   - ranks of one class run the same steps (flops, bytes reduced) and take part in the same number of messages of
//     each message class, as sender and as receiver, in each step;
//   - messages of one class have senders of one class and receivers of one class, the same steps on both sides, the
//     same bytes, the same route latency, narrowest link and per-message gap, and cross the same number of links of
//     each link class (so ranks of one class have the same gaps in each step);
//   - links of one class have the same capacity and carry the same number of messages of each message class.
// In such an (equitable) partition every rank of a class posts its steps at the same instants, every message of a
// class starts, moves and ends at the same instants, and every link of a class carries the same load: by induction
// over events, since progressive filling treats all flows of a class and all links of a class alike, and max-min
// allocations are unique. So one flow per message class and one rank per rank class give the exact times, with a link
// class carrying (members x links of that class per member / links in the class) flows of a message class.
// Transfers are matched as the executors match them (in order per sender-receiver pair), once, before the run.
//
// Refinement compares neighbourhoods by two order-free 64-bit sums (of mixed hashes, and of their squares), and names a
// message class by a 64-bit hash; a multiplicity that does not divide exactly (as a collision could cause) falls
// back to the full simulation. Checked against the full simulation, every rank's time, in tests/test_flow.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "algorithms/schedule.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/network.hpp"

namespace dtsim::lumping {

// The smallest and largest chunk of a schedule; even when they are the same size (or there is none).
struct ChunkRange {
  std::uint64_t smallest = 0;
  std::uint64_t largest = 0;
  bool even() const { return smallest >= largest; }
};
ChunkRange chunk_range(const Schedule& schedule);
// The size chunks from `smallest` to `largest` bytes are all timed at (the largest, where FlowOptions::
// pad_chunks_within or pad_chunks_bytes allows), or 0 to time each at its own (or when they are all alike).
std::uint64_t padded_bytes(std::uint64_t smallest, std::uint64_t largest, const FlowOptions& options);
// The size every chunk of `schedule` is timed at (FlowOptions::pad_chunks_within and pad_chunks_bytes), or 0 to time
// each at its own.
std::uint64_t padded_chunk_bytes(const Schedule& schedule, const FlowOptions& options);
// The bytes a span is timed at: its chunks at `padded` bytes each (padded_chunk_bytes), or its own size when 0.
inline std::uint64_t timed_span_bytes(const Schedule& schedule, std::uint32_t span, std::uint64_t padded) {
  return padded > 0 ? schedule.spans[span].chunk_count * padded : schedule.span_bytes(span);
}

// One class of messages: its senders' and receivers' classes and steps, and how it loads each link class.
struct LumpedFlow {
  std::uint32_t segment = 0;
  std::uint32_t src_class = 0;
  std::uint32_t src_step = 0;  // in the segment, counted from 0
  std::uint32_t dst_class = 0;
  std::uint32_t dst_step = 0;
  std::uint64_t bytes = 0;    // timed
  std::uint64_t members = 0;  // messages in the class
  std::uint32_t first_hop = 0;
  std::uint32_t hop_count = 0;
  double latency_s = 0;
  double narrowest_Bps = 0;
  HopClass hop = HopClass::net;  // the hardware its messages cross (a collective library's per-hop latency)
};

struct LumpedHop {
  std::uint32_t resource = 0;  // a link class (one direction)
  double flows = 0;            // flows of the message class on each link of the class
};

// A step of a rank class in a segment: what its representative computes and reduces, and the message classes it
// waits for (flow id x 2 + 0 as sender, + 1 as receiver).
struct LumpedStep {
  std::uint32_t repeats = 0;  // a compact schedule's step: how many more times it runs (its chunks rotated)
  bool lockstep = false;      // its repetitions run in lockstep (StepRepeat::lockstep: a ring's rotation)
  double flops = 0;
  double gap_s = 0;  // how long its per-message gaps keep the rank busy (StepGaps)
  std::uint64_t reduce_bytes = 0;
  std::uint32_t first = 0;  // into Lumping::step_flows
  std::uint32_t count = 0;
};

struct Lumping {
  std::vector<std::uint32_t> class_of;        // by rank
  std::vector<std::uint32_t> representative;  // by class: its smallest rank
  std::vector<double> capacity_Bps;           // by link class
  std::vector<LumpedFlow> flows;
  std::vector<LumpedHop> hops;
  std::vector<LumpedStep> steps;
  std::vector<std::uint32_t> step_flows;
  std::vector<std::vector<std::uint32_t>> first_step;  // [segment][class], classes + 1 entries: steps of the class
  std::vector<SegmentLibraryCost> library;             // by segment: the collective library's costs
  std::uint64_t messages = 0;                          // in one run of every segment
  std::uint64_t bytes_sent = 0;
  std::size_t classes() const { return representative.size(); }
};

// What the network does not see about its units: for a training step, the units of one rank (its streams) are
// driven together, and ranks of different stages compute differently. Units of one class must then have the same
// key, and owners whose units fall in the same classes (so that a class's units all belong to alike owners).
struct UnitHints {
  std::span<const std::uint64_t> unit_key;  // by unit: what else tells units apart (empty: nothing)
  std::span<const std::uint32_t> owner;     // by unit: the rank it belongs to, in [0, owners) (empty: none)
  std::size_t owners = 0;
};

// The coarsest equitable partition of the ranks (units) running `segments` (schedules over `ranks` positions, placed
// and routed as `options` says; a compact one only when its chunks are all timed alike and each repeated step meets
// one repeated step), or nothing when it has more than `max_classes` classes or cannot be had.
std::optional<Lumping> find_classes(int ranks, std::span<const Schedule* const> segments, const FlowOptions& options,
                                    std::size_t max_classes, const UnitHints& hints = {});

// Runs segments on the classes of a Lumping: the same events as the flow executor's, one rank and one flow per class
// (sim/lumped_engine.cpp), with the same rounds per segment (FlowOptions::rounds) and skipped repetitions of a step
// repeated in lockstep (FlowOptions::skip_repeats). A Network whose units are the classes.
class LumpedEngine final : public Network {
public:
  LumpedEngine(const Lumping& lumping, const FlowOptions& options);
  ~LumpedEngine() override;
  LumpedEngine(const LumpedEngine&) = delete;
  LumpedEngine& operator=(const LumpedEngine&) = delete;

  double now() const override;
  std::uint64_t batches() const;
  // Class `cls` runs its part of segment `index` from `release`, or now if that is later.
  void start_segment(int cls, std::size_t index, double release) override;
  // Runs until nothing is pending; on_segment_done(cls) when a class ends a segment (it may start the next).
  void run(const std::function<void(int)>& on_segment_done) override;
  // Classes inside a segment (after run: those that deadlocked).
  std::size_t inside_segments() const override;

private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace dtsim::lumping
