// The flow executor: a third executor of the same Schedule, at the level of flows instead of SimGrid's per-message
// engine. Each rank runs its steps as in every executor (post, wait for transfers and computes, then reduce); a
// transfer starts once both sides have posted it (rendezvous), spends its route's latency, then moves its bytes at the
// rate max-min fairness gives it among the transfers moving at the same time (progressive filling over the route's
// links, each direction of a link a resource of its own). This is the model of SimGrid's CM02 network without
// cross-traffic, so both executors give the same times (tests/test_flow.cpp).
// Cost: rates are recomputed only when the set of moving transfers changes, once for every batch of events that
// fall at the same instant; in a symmetric step (a ring's, a butterfly's) all transfers start and end together, so a
// step costs one rate computation whatever the rank count.
#pragma once

#include <vector>

#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "sim/executor.hpp"
#include "sim/topology.hpp"

namespace dtsim {

struct FlowOptions {
  AlphaBetaGamma cost;                 // the star's links (alpha split over uplink and downlink) and reduce rate
  double compute_flops_per_s = 1e12;   // speed of Compute ops
  const Topology* topology = nullptr;  // a cluster instead of the star: routes, links and the node's reduce rate
  std::vector<int> accelerator_of;     // position -> accelerator
  std::vector<FactorRange> factors;    // calibrated latency and bandwidth factors by message size
};

// Throws std::invalid_argument for a malformed schedule and std::runtime_error for one that deadlocks.
ExecutionResult run_flow(const Schedule& schedule, const FlowOptions& options);

}  // namespace dtsim
