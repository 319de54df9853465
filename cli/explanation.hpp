// What `dtsim explain` says about one scenario, every number from simulate_step (the code `dtsim predict` runs):
// the step at each size (plain data parallelism, or the scenario's data x tensor x pipeline layout with its ZeRO
// stage), scaling efficiency against one replica, where it falls below 80%, the part of the exposed communication no
// overlap can hide (the last gradient bucket's allreduce, simulated alone), and what-ifs at the largest size, each
// re-simulated: other algorithms, a faster network, a larger batch, smaller buckets, more input cores, and layout
// changes (more or less tensor or pipeline parallelism, more micro-batches, another ZeRO stage).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario_file.hpp"
#include "sim/scenario_step.hpp"

namespace dtsim::cli {

struct SizeExplained {
  StepRequest request;
  StepResult result;
  std::optional<double> speedup;     // over the baseline (absent: no baseline fits, or this size does not)
  std::optional<double> efficiency;  // per accelerator, against the baseline's
};

// A what-if at the largest size, re-simulated.
struct Claim {
  std::string what;
  bool possible = true;  // false: the configuration is invalid (`why` says so); nothing was simulated
  std::string why;
  std::optional<StepResult> result;  // when possible
  std::optional<double> factor;      // samples/s over the largest size's as it is (both must fit)
};

// The exposed communication that no overlap can hide, at the largest size.
struct ExposedFloor {
  LastBucket last;
  std::string first_layer, last_layer;  // the layers whose gradients the last bucket holds (names)
  double exposed_s = 0;                 // the step's exposed data-parallel communication
  std::string rest;                     // what else it can be, e.g. "earlier buckets' allreduces"
  bool overlapped = true;               // false: no bucket starts before backward ends (framework.overlap false)
};

struct Explanation {
  std::string algorithm;
  StepRequest baseline_request;
  std::optional<StepResult> baseline;  // one replica, or the smallest size that fits when one replica does not
  bool baseline_is_one_replica = true;
  std::string one_replica_bottleneck;  // why one replica does not fit, when it does not
  std::vector<SizeExplained> sizes;
  std::optional<int> below_80;  // the first size whose efficiency is below 80%
  int claims_at = 0;
  std::vector<Claim> claims;  // possible ones that fit, the best first; then those that do not fit; then impossible
  std::optional<ExposedFloor> floor;
};

// Throws UsageError (naming `where`, what set the sizes) for a configuration the scenario cannot run.
Explanation explain_scenario(const Scenario& scenario, const std::string& algorithm, const std::string& where);

// The layout a scenario runs at `accelerators` (absent: plain data parallelism).
std::optional<ParallelLayout> scenario_layout(const Scenario& scenario, int accelerators);

}  // namespace dtsim::cli
