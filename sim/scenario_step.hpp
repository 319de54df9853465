// One configuration of a training scenario, simulated the way `dtsim predict` simulates it and `dtsim explain`
// re-simulates it: plain data parallelism over N accelerators (predict_step), or a data x tensor x pipeline layout of
// them with optional ZeRO sharding (predict_parallel). Both commands go through simulate_step, so a claim of explain
// and a row of predict are the same simulation.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "models/cluster.hpp"
#include "models/parallel.hpp"
#include "models/training.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"

namespace dtsim {

// What --backend auto runs a data-parallel step of `accelerators` on: SimGrid up to auto_flow_above_ranks, the flow
// engine above, and the flow engine at every size where the cluster names a collective library: its channels are
// copies of each call side by side, which SimGrid's per-message engine ran about 100 times slower for the same times
// (GPT-2 XL with NCCL on 64 H100s: 59.9 s and 1.28 GB against 0.59 s and 43 MB; docs/flow.md).
Backend auto_step_backend(int accelerators, const ClusterSpec& cluster);

struct StepRequest {
  int accelerators = 1;
  std::string algorithm = "ring";
  std::optional<ParallelLayout> layout;  // absent: plain data parallelism over `accelerators`
  std::optional<Backend> backend;        // plain: the executor (absent: auto_step_backend); a layout chooses by size
  bool rank_classes = true;              // plain, flow executor: one rank simulated per class of ranks
  StepTrace* trace = nullptr;            // plain: record the step (SimGrid only)
  bool record_pipeline = false;          // layout: record the pipeline's spans
  StepSampling sampling;                 // plain: Monte Carlo of the step under the setup's variability
  // plain, flow executor: called with the fraction of the step's reductions simulated, each thousandth (empty: none)
  std::function<void(double)> progress;
};

// What simulate_step found, with the quantities explain compares read the same way for both kinds.
class StepResult {
public:
  explicit StepResult(Prediction p) : result_(std::move(p)) {}
  explicit StepResult(ParallelPrediction p) : result_(std::move(p)) {}

  const Prediction* plain() const { return std::get_if<Prediction>(&result_); }
  const ParallelPrediction* parallel() const { return std::get_if<ParallelPrediction>(&result_); }
  int accelerators() const;
  bool fits() const;
  double step_s() const;  // 0 when it does not fit; sampled (StepRequest::sampling): the mean
  double samples_per_s() const;
  long long global_batch() const;
  double exposed_comm_s() const;  // data-parallel communication the step waits for (not hidden by backward)
  double comm_s() const;          // data-parallel communication in the step, hidden or not
  const std::string& bottleneck() const;
  std::string layout_text() const;  // "data parallel" or the layout, e.g. "64d x 4t x 4p, 1f1b, ..."

private:
  std::variant<Prediction, ParallelPrediction> result_;
};

// Throws what predict_step and predict_parallel throw (std::invalid_argument naming what the configuration cannot
// take, OptionError from the algorithm's options, InsufficientMemory).
StepResult simulate_step(const TrainingSetup& setup, const ClusterSpec& cluster, const StepRequest& request);

// The last gradient bucket's reduction of a configuration that ran (`as_run`), simulated alone on its network
// (last_bucket_alone of sim/predict.hpp or sim/parallel.hpp): at least this much communication stays exposed.
LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, const StepRequest& request,
                             const StepResult& as_run);

// The request's one-replica counterpart, the baseline of scaling efficiency: one accelerator of plain data
// parallelism, or the layout with one replica (tensor x pipeline accelerators; with expert parallelism, the E replicas
// of one expert group: the fewest that hold every expert).
StepRequest one_replica(const StepRequest& request);

}  // namespace dtsim
