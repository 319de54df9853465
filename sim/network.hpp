// One network, many engines: the cost description every executor reads, and the contract every engine fulfils for
// the step driver (sim/step_driver.hpp).
//
// NetworkCost is the one description of a simulated network: the star's alpha-beta-gamma costs (or a cluster's
// topology with the accelerator each position runs on), the compute speed of Compute ops and the calibrated factors
// by message size. The options of each executor (SimGridOptions, FlowOptions, AnalyticalOptions) are a NetworkCost
// plus the knobs of that engine alone, so a network described once is run by any of them.
//
// Network is what an engine does for a program that is more than one collective (a training step): it runs a unit's
// part of a Schedule (a segment) from a release time on, tells the caller when each unit finishes a segment, and keeps
// the clock. Computes are local to a unit, so the caller times them itself and releases the next segment when they end;
// whatever the caller starts in its callback runs on the same network, contending with what is already moving. The
// SimGrid engine (every message, sim/simgrid_network.cpp), the flow engine (sim/flow_engine.hpp) and its lumped form
// (sim/lumped_engine.cpp) implement it; the step is written once, against it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "models/collective_library.hpp"
#include "sim/topology.hpp"

namespace dtsim {

struct NetworkCost {
  // The star's alpha-beta-gamma costs: where no topology is given, every engine runs Topology::star with a link per
  // host of alpha/2 latency (a route crosses two), the bandwidth and the per-message gap, reductions at
  // cost.reduce_Bps (place_on_star). Unused for transfers when `topology` is set.
  AlphaBetaGamma cost;
  double compute_flops_per_s = 1e12;  // speed of a Schedule's Compute ops
  // The network the positions run on: routes, links and reduce rates; position p runs on endpoint accelerator_of[p]
  // (one entry per position of the schedules run; several may share one, sharing its links: a parameter server's
  // units, a library's channels). Null: the star above, accelerator_of empty for a host per position.
  const Topology* topology = nullptr;
  std::vector<int> accelerator_of;
  std::vector<FactorRange> factors;  // calibrated latency and bandwidth factors by message size
  // The collective library whose costs a Schedule's protocol selects (models/collective_library.hpp): each segment
  // run in a protocol other than none starts after the launch and the protocol's base latency, moves its payload at
  // the protocol's share of the wire and pays its per-step latency (sim/library_cost.hpp resolves it per segment).
  CollectiveLibrary library;
};

// The one place the star becomes a topology: where `network` names none, builds Topology::star from its cost with a
// host per position (or per host accelerator_of names), points network.topology at it and fills accelerator_of (a
// host per position where empty); returns it, to be kept alive while `network` is used. Where network names a
// topology, changes nothing and returns null. Every engine calls it as it starts, so none has a path of its own for
// the star.
std::unique_ptr<Topology> place_on_star(NetworkCost& network, int positions);

// An engine's copy of its options, placed (place_on_star), with the star they point at kept alive beside them.
template <typename Options>
struct Placed {
  Placed(const Options& given, int positions) : options(given), star(place_on_star(options, positions)) {}
  Options options;
  std::unique_ptr<Topology> star;
};

// How fast position `position` adds up data: its endpoint's rate (Topology::reduce_Bps: a switch endpoint reduces in
// flight; the star's hosts at cost.reduce_Bps). Needs a placed network (place_on_star).
inline double position_reduce_Bps(const NetworkCost& network, int position) {
  return network.topology->reduce_Bps(network.accelerator_of[static_cast<std::size_t>(position)]);
}

class Network {
public:
  virtual ~Network() = default;
  // The simulated clock, in seconds.
  virtual double now() const = 0;
  // Unit `unit` runs its part of segment `segment` (in the order the network was built with) from `release_s`, or
  // from now if that is later. A unit runs one segment at a time: it is started again only once it has finished.
  virtual void start_segment(int unit, std::size_t segment, double release_s) = 0;
  // Simulates until nothing is left to run, calling on_done(unit) at the instant each unit finishes a segment; the
  // callback may start further segments.
  virtual void run(const std::function<void(int unit)>& on_done) = 0;
  // Units still inside a segment (after run: those that deadlocked).
  virtual std::size_t inside_segments() const = 0;
};

}  // namespace dtsim
