// The flow executor: a third executor of the same Schedule, at the level of flows instead of SimGrid's per-message
// engine. Each rank runs its steps as in every executor (post, wait for transfers and computes, then reduce); a
// transfer starts once both sides have posted it (rendezvous), spends its route's latency, then moves its bytes at the
// rate max-min fairness gives it among the transfers moving at the same time (progressive filling over the route's
// links, each direction of a link a resource of its own). This is the model of SimGrid's CM02 network without
// cross-traffic, so both executors give the same times (tests/test_flow.cpp).
// Cost: events that fall at the same instant are handled as one batch; rates are recomputed after each batch, only
// for the transfers that started and those sharing saturated links (transitively) with transfers that started or
// ended. When all ranks end a step together and their next steps repeat their last ones, the repetitions are not
// simulated again but skipped (see skip_repeated_steps): a compact ring costs a handful of simulated steps whatever the
// rank count. docs/flow.md explains each of these and what they cost.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "algorithms/direct.hpp"
#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "sim/all_pairs_fit.hpp"
#include "sim/executor.hpp"
#include "sim/network.hpp"
#include "sim/step_driver.hpp"
#include "sim/topology.hpp"

namespace dtsim {

// The network (NetworkCost: the star's costs or a cluster's routes, placement, factors) and the flow engine's knobs.
struct FlowOptions : NetworkCost {
  FlowOptions() = default;
  explicit FlowOptions(NetworkCost network) : NetworkCost(std::move(network)) {}
  // Chunks whose sizes differ by at most this fraction of the largest (one element of a buffer that does not split
  // evenly over the ranks) are all timed at the largest size, so that the steps of a ring repeat exactly and are
  // simulated once. Times err by at most this fraction, upwards; 0 times every chunk at its own size.
  double pad_chunks_within = 1e-3;
  // And chunks that differ by at most this many bytes (one element, of up to 8 bytes): on 8192 ranks a 25 MB bucket's
  // chunks are 800 elements, one more is 0.125%. A step's time then errs upwards by at most this many bytes' time on
  // its route (under rounds, which end with the round's slowest flow, a largest chunk's, much less). 0: off.
  std::uint64_t pad_chunks_bytes = 8;
  // Skip repeated steps (lockstep points) and periods of a periodic regime instead of simulating them again; the
  // result is the same (tests/test_flow.cpp compares), false only to check that.
  bool skip_repeats = true;
  // Rotations in rounds: a rank that finished a repetition of a step repeated in lockstep (StepRepeat::lockstep: a
  // ring's rotating step, not a tree's pipeline, and not under a collective library's eager messages) posts the next
  // one only when no transfer, reduction or compute is in flight anywhere, so that every such round ends at a
  // lockstep point and the repetitions after the first two are skipped (skip_repeats). Without it, ranks whose steps
  // take unequal times (NVLink inside a node, a NIC between nodes, longer routes between pods) drift apart and a
  // 4096-rank ring costs millions of events. The round only delays ranks that would have waited for their slowest
  // neighbour a step later anyway: the ring's time is the same (tests/test_flow.cpp compares with rounds off and
  // with SimGrid; docs/flow.md has the measured differences).
  bool rounds = true;
  // Rounds per segment: a repetition waits only for what its own segment has in flight (its flows, reductions and
  // computes), not for other segments' traffic. For several programs at once (a training step's streams: tensor
  // rings, pipeline sends and bucket reductions): a ring's round then ends when its own messages do, while the others'
  // traffic still shares its links. run_flow_step sets it for programs of several streams.
  bool segment_rounds = false;
  // false: the analytical network. Every transfer moves at its route's narrowest link (times the calibrated bandwidth
  // factor) as if alone, after its route's latency: the analytical executor's cost for every message of a program
  // bigger than one Schedule (a training step), with the same steps, rendezvous, gaps and reductions.
  bool contention = true;
  // Leave out of the routes the links that constrain nothing (those crossed by exactly the same routes as a narrower
  // or equal one, and those whose every route goes on to, or comes from, one no-wider link): the max-min rates are the
  // same (tests/test_flow.cpp compares), each rate computation reads fewer links; false only to check that.
  bool prune_links = true;
  // Simulate classes of ranks instead of ranks where the run is symmetric enough: colour refinement finds the ranks,
  // messages and links that provably run alike (sim/flow_lumping.hpp), and one of each class is simulated, with the
  // same times. Used for schedules that are not compact when there are at most a sixteenth as many classes as ranks,
  // or 16 (a parameter server, direct, butterfly on a star); false only to check that (tests/test_flow.cpp).
  bool lump_ranks = true;
  // A training step's classes run whenever they exist, not only where the lumped engine is expected to be faster
  // (run_flow_step); true only to check the lumped engine against the full one.
  bool lump_always = false;
  // run_flow on every rank (not in classes): called every 4096 instants with the fraction of the schedule's messages
  // posted so far, for a progress line (empty: never).
  std::function<void(double)> progress;
};

// Throws std::invalid_argument for a malformed schedule and std::runtime_error for one that deadlocks.
ExecutionResult run_flow(const Schedule& schedule, const FlowOptions& options);

// An all-pairs algorithm (direct allreduce or all-to-all) without writing its P x P messages: in classes of ranks found
// from the network's symmetry (sim/all_pairs_lumping.hpp), in the collective library's `protocol` (none: plain
// messages; one channel, as the library runs direct), where those classes are at least as exact as `allowed`
// (lumping::AllPairsFit; unsupported: on any network); nothing otherwise. `fit`, when given, is set to how exact they
// are. Throws std::invalid_argument when it cannot run so (options.lump_ranks or contention off, chunks that padding
// cannot time alike) and as run_flow does.
std::optional<ExecutionResult> run_flow_all_pairs(const AllPairs& pairs, const FlowOptions& options,
                                                  Protocol protocol = Protocol::none,
                                                  lumping::AllPairsFit allowed = lumping::AllPairsFit::unsupported,
                                                  lumping::AllPairsFit* fit = nullptr);

// The flow engine as a Network over `units` positions running `segments` (kept alive by the caller), for programs
// that drive it themselves (dtsim train). Throws std::invalid_argument for a malformed segment or placement.
std::unique_ptr<Network> make_flow_network(int units, std::span<const Schedule* const> segments,
                                           const FlowOptions& options);

// A training step program (sim/step_program.hpp) on the flow network; `trace`: the driver's spans. Ranks that
// provably run alike are driven once (FlowOptions::lump_ranks; sim/flow_lumping.hpp): for data parallelism the classes
// of ranks of its non-compact schedules; for a layout of several streams or stages the classes of units, found with
// its stages and streams as hints, compact rings included, when there are 16 units a class on average (the replicas of
// a stage and its tensor ranks on a symmetric cluster). Either engine runs rounds per segment
// (FlowOptions::segment_rounds) and skips the repetitions of a ring's rotation that run alone. Throws as run_flow
// does.
StepRun run_flow_step(const StepProgram& program, const FlowOptions& options, RunTrace* trace = nullptr);

// A data-parallel training step on the flow network, the same program and timeline as run_simgrid_training (compute
// local to each rank, bucket allreduces one after another as backward releases them). Throws as run_flow does.
TrainingResult run_flow_training(const TrainingProgram& program, int ranks, const FlowOptions& options);

}  // namespace dtsim
