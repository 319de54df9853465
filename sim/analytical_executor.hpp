// The analytical executor: walks a Schedule with one clock per rank under alpha-beta-gamma costs and no contention.
// A transfer starts when both its send and its receive are posted and takes alpha + bytes / bandwidth; a step ends
// when its transfers and computes are done, and its per-message gaps (models/alpha_beta.hpp) have passed, then its
// reductions run at the reduce rate. This is exactly the timing
// the SimGrid executor produces on a contention-free network (CM02, no cross-traffic), on a star or on a cluster's
// routes.
#pragma once

#include <utility>
#include <vector>

#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"
#include "models/calibration.hpp"
#include "sim/executor.hpp"
#include "sim/network.hpp"
#include "sim/topology.hpp"

namespace dtsim {

// The network, as every executor reads it. On a cluster (topology set), a transfer from position a to b takes the sum
// of its route's latencies plus bytes over the route's narrowest link (as alone on the network), and reductions run
// at the node's reduce rate.
struct AnalyticalOptions : NetworkCost {
  AnalyticalOptions() = default;
  explicit AnalyticalOptions(NetworkCost network) : NetworkCost(std::move(network)) {}
  bool record_trace = false;  // record every transfer's start and end in ExecutionResult::trace
};

// A compact schedule is expanded first. Throws std::invalid_argument for a malformed schedule (or one whose expanded
// form exceeds ScheduleBuilder::max_ops) and std::runtime_error for one that deadlocks.
ExecutionResult run_analytical(const Schedule& schedule, const AnalyticalOptions& options);

}  // namespace dtsim
