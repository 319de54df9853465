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
// SimGrid engine (every message, sim/simgrid_network.cpp), the flow engine and its lumped form (sim/flow_executor.cpp)
// implement it; the step is written once, against it.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "models/collective_library.hpp"
#include "sim/topology.hpp"

namespace dtsim {

struct NetworkCost {
  // The star: every position has one link to one switch (alpha split over its up and down direction), reductions at
  // cost.reduce_Bps. Unused for transfers when `topology` is set.
  AlphaBetaGamma cost;
  double compute_flops_per_s = 1e12;  // speed of a Schedule's Compute ops
  // A cluster instead of the star: routes, links and the node's reduce rate; position p runs on accelerator
  // accelerator_of[p] (one entry per position of the schedules run). On the star, accelerator_of may put several
  // positions on one host, sharing its link (a parameter server's units); empty: a host per position.
  const Topology* topology = nullptr;
  std::vector<int> accelerator_of;
  std::vector<FactorRange> factors;  // calibrated latency and bandwidth factors by message size
  // The collective library whose costs a Schedule's protocol selects (models/collective_library.hpp): each segment
  // run in a protocol other than none starts after the launch and the protocol's base latency, moves its payload at
  // the protocol's share of the wire and pays its per-step latency (sim/library_cost.hpp resolves it per segment).
  CollectiveLibrary library;
};

// How fast position `position` adds up data: its endpoint's rate on a cluster (Topology::reduce_Bps: a switch
// endpoint reduces in flight), the star's cost.reduce_Bps otherwise.
inline double position_reduce_Bps(const NetworkCost& network, int position) {
  if (network.topology == nullptr) return network.cost.reduce_Bps;
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
