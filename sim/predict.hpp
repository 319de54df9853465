// Predicting data-parallel training: one training step of a model on N accelerators of a cluster, simulated on
// SimGrid (compute from the device model, gradients allreduced in buckets with the chosen algorithm over the routed
// cluster), with memory checked first and the bottleneck named.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/options.hpp"
#include "models/cluster.hpp"
#include "models/collective_library.hpp"
#include "models/training.hpp"
#include "sim/executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/link_load.hpp"
#include "sim/link_usage.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/step_sampler.hpp"

namespace dtsim {

// What a run may hold: the memory estimate of the executor that will run it, checked against `available_bytes` once
// the first bucket's schedule is built (before the others and before any simulation).
struct MemoryBudget {
  RunMemory executor = RunMemory::flow;
  std::uint64_t available_bytes = 0;  // 0: unchecked
};

// A run refused because its estimate exceeds the memory available.
class InsufficientMemory : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

// One gradient bucket: the gradients of layers [first_layer, last_layer] (forward order), complete once backward has
// finished first_layer.
struct GradientBucket {
  std::uint64_t bytes = 0;
  std::size_t first_layer = 0;
  std::size_t last_layer = 0;
};
// The buckets of the setup's framework preset, in the order backward fills them (the last holds the first layers).
std::vector<GradientBucket> gradient_buckets(const TrainingSetup& setup);

// The step program of one accelerator (compute times, buckets) with every bucket's allreduce built by `algorithm`
// over `ranks` ranks. Throws InsufficientMemory when the budget is exceeded (estimated as the first bucket's run
// plus the other buckets' schedules at the first one's size). `library`: the network whose collective library lays
// each bucket's call (its protocol and channels, sim/library_cost.hpp), ranks placed node by node; none: as built.
TrainingProgram make_program(const TrainingSetup& setup, int ranks, int local_batch, const std::string& algorithm,
                             const AlgorithmOptions& options, int accelerators_per_node, MemoryBudget budget = {},
                             const NetworkCost* library = nullptr);

// The step's gradient buckets that one algorithm reduced in one protocol on one number of channels (`--algorithm
// auto` picks per bucket size: NCCL's tuner on a cluster that names a library, MPICH's thresholds elsewhere).
struct BucketReduction {
  std::string algorithm;
  Protocol protocol = Protocol::none;  // none: plain messages
  int channels = 1;
  int buckets = 0;
  std::uint64_t smallest_bytes = 0;
  std::uint64_t largest_bytes = 0;
};
// The buckets' reductions (Schedule::algorithm, protocol, channels of each of `buckets`, whose gradient buffers are
// `bucket_bytes`, in the same order) grouped, in the order each group's first bucket comes.
std::vector<BucketReduction> bucket_reductions(const std::vector<Schedule>& buckets,
                                               const std::vector<std::uint64_t>& bucket_bytes);

inline constexpr std::size_t busiest_link_groups = 5;

struct Prediction {
  int accelerators = 0;
  int nodes = 0;
  std::string algorithm;
  int local_batch = 0;         // one micro-batch of one accelerator
  long long global_batch = 0;  // samples of one optimizer step, all accelerators and micro-batches
  int accumulation = 1;        // micro-batches per optimizer step
  MemoryUse memory;
  bool fits = true;
  TrainingResult step;  // zero when it does not fit
  double samples_per_s = 0;
  double speedup = 0;     // over one accelerator (filled by the caller that has the baseline)
  double efficiency = 0;  // speedup / accelerators
  std::string bottleneck;
  std::vector<BucketReduction> reductions;  // how its gradient buckets were reduced (empty on one accelerator)
  Backend backend = Backend::simgrid;       // the executor that timed the step
  // the class of the link the step's allreduces load most over the step's time (from the schedules and routes;
  // empty on one accelerator, where nothing is sent, and where the schedules are too large to count)
  LinkClassLoad most_utilised_links;
  // the busiest groups of links alike over the step (at most busiest_link_groups, the most utilised first), from the
  // schedules and routes as most_utilised_links (no busy times); empty where those are not counted
  std::vector<LinkGroup> busiest_links;
  // Sampled under the setup's variability (samples 0: not sampled); samples_per_s, speedup and efficiency then
  // follow its mean, `step` stays the run without jitter (slow nodes in)
  StepDistribution distribution;
};

// What a recorded step did: every rank's timeline over the simulated steps, and the links it loaded, busiest first.
struct StepTrace {
  RunTrace run;
  std::vector<LinkUsage> links;
};

// The flow executor's options for the network that SimGrid's options describe (costs, cluster, placement, factors).
FlowOptions flow_options(const SimGridOptions& sg);

// One configuration on `accelerators` accelerators of `cluster` (nodes filled one by one). Throws
// std::invalid_argument when a strong-scaling batch does not split evenly, InsufficientMemory (before simulating)
// when the run would need more than `available_bytes` (default: this machine's available memory; 0: unchecked).
// `trace`: record the simulated steps (SimGrid only). `backend`: the executor of the step. `rank_classes`: the flow
// executor simulates one rank per class of ranks that run alike (FlowOptions::lump_ranks). Slow nodes of the setup's
// variability slow their ranks' computes (sample 0's choice); `sampling` (samples > 0): the step is also sampled under
// its jitter and slow nodes (sim/step_sampler.hpp) into Prediction::distribution. `progress` (flow executor): called
// with the fraction of the step's reductions simulated, each thousandth.
struct StepSampling {
  int samples = 0;
  std::uint64_t seed = 1;
  Sampler sampler = Sampler::fast;
  // exact: refused (std::invalid_argument) when the samples, at what the first of them took each, would take longer
  // than this (0: no limit)
  double max_seconds = 0;
};
Prediction predict_step(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators,
                        const std::string& algorithm, StepTrace* trace = nullptr, Backend backend = Backend::simgrid,
                        std::optional<std::uint64_t> available_bytes = std::nullopt, bool rank_classes = true,
                        const StepSampling& sampling = {}, const std::function<void(double)>* progress = nullptr);
// The last gradient bucket's allreduce simulated alone on the configuration's network and executor. That bucket is
// complete only when backward ends, so its allreduce cannot overlap backward: at least this much of every step's
// communication is exposed, whatever the batch. Throws std::invalid_argument below 2 accelerators.
struct LastBucket {
  GradientBucket bucket;
  std::size_t buckets = 0;  // buckets in the step
  std::string operation;    // what reduces it, e.g. "ring allreduce" ("ring reduce-scatter" under ZeRO-3)
  double alone_s = 0;
  Backend backend = Backend::simgrid;
};
LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators,
                             const std::string& algorithm, Backend backend);

// Fills speedup and efficiency from a one-accelerator baseline.
void compare_to_baseline(Prediction& p, const Prediction& baseline);

}  // namespace dtsim
