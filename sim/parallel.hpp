// Predicting model-parallel and sharded data-parallel training (data x tensor x pipeline, ZeRO/FSDP) on a cluster.
// A step is simulated in two parts:
//   1. the pipeline of one replica: per stage and micro-batch, forward and backward times from the device model
//      (tensor-split layers at 1/T of their FLOPs, plus their Megatron allreduces over the node's links) and the
//      activation transfers between stages over the links the stages' accelerators are joined by, scheduled GPipe
//      or 1F1B by an event simulation (simulate_pipeline);
//   2. the data-parallel gradient synchronisation on SimGrid: every (stage, tensor rank) group of D accelerators runs
//      its allreduce (ZeRO-3: reduce-scatter) over the routed cluster at once, so groups that share NICs share them,
//      overlapped with the backward pass of the last micro-batch as its buckets become ready (DDP-style); ZeRO-3's
//      parameter allgathers are simulated on SimGrid too and hidden behind compute when prefetching.
// The stage whose pipeline finishes last is the one simulated in part 2 (all groups run its program: stages are
// balanced, so this is the slowest stage's view of a contention all stages cause).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/parallel.hpp"
#include "models/training.hpp"
#include "sim/executor.hpp"
#include "sim/predict.hpp"

namespace dtsim {

struct StageCost {       // per micro-batch
  double forward_s = 0;  // compute and tensor-parallel allreduces
  double backward_s = 0;
  double send_forward_s = 0;   // the activation to the next stage (0 for the last)
  double send_backward_s = 0;  // its gradient to the previous stage (0 for the first)
};

struct PipelineRun {
  double time_s = 0;                          // the last stage's last backward ends... the whole pipeline's end
  std::vector<double> last_backward_start_s;  // per stage: when its last micro-batch's backward starts
  std::vector<double> finish_s;               // per stage
  double bubble_fraction = 0;                 // of the slowest-finishing stage: idle / time
  RunTrace trace;                             // spans per stage (forward, backward), when recorded
};

// Event simulation of one replica's pipeline. Throws std::invalid_argument for no stages or micro-batches.
PipelineRun simulate_pipeline(std::span<const StageCost> stages, int micro_batches, PipelineSchedule schedule,
                              bool record = false);

// Samples per data-parallel replica and step. Weak scaling keeps the batch per accelerator: the global batch is
// setup.batch x accelerators whatever the layout, so a replica of T x P accelerators takes setup.batch x T x P. Strong
// scaling splits the global batch setup.batch over the D replicas (std::invalid_argument when it does not divide).
int replica_batch(const TrainingSetup& setup, const ParallelLayout& layout);

struct ParallelPrediction {
  ParallelLayout layout;
  int accelerators = 0;
  int nodes = 0;
  int replica_batch = 0;   // samples per data-parallel replica and step (replica_batch above)
  int global_batch = 0;    // replica_batch x data
  double micro_batch = 0;  // samples per micro-batch: what each accelerator of a replica computes on at a time
  MemoryUse memory;        // the stage that needs the most
  bool fits = true;
  double step_s = 0;
  double samples_per_s = 0;
  // the simulated stage's step: compute + tensor communication + pipeline bubble + exposed data-parallel
  // communication + input stall + optimizer (the bubble also absorbs the activation transfers)
  double compute_s = 0;
  double tensor_comm_s = 0;
  double bubble_s = 0;
  double bubble_fraction = 0;
  double data_exposed_s = 0;
  double data_comm_s = 0;
  double input_stall_s = 0;
  double optimizer_s = 0;
  CommVolume volume;  // of stage 0's accelerators
  std::string bottleneck;
  int simulated_stage = 0;  // the stage whose step is simulated (the one whose pipeline finishes last)
  double wall_s = 0;        // what the simulation cost
  RunTrace pipeline_trace;  // the pipeline's spans per stage (recorded on request)
};

// Throws std::invalid_argument for a layout the cluster or batch cannot take (naming what), OptionError from the
// algorithm options.
ParallelPrediction predict_parallel(const TrainingSetup& setup, const ClusterSpec& cluster,
                                    const ParallelLayout& layout, const std::string& algorithm, bool record = false);

// The last gradient bucket of `stage` (its first layers' gradients, complete only when its last backward ends), its
// reduction (allreduce; ZeRO-3: reduce-scatter) run by every (stage, tensor rank) group at once, simulated alone on the
// layout's network: the part of the exposed data-parallel communication no overlap can hide. Throws
// std::invalid_argument for fewer than 2 replicas.
LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, const ParallelLayout& layout,
                             const std::string& algorithm, int stage);

// The layouts of `accelerators` accelerators worth trying: tensor parallelism within a node (1, 2, 4, ... up to the
// node), pipelines of 1, 2, 4, ... stages, the rest data-parallel; per layout the least sharding that fits in memory
// and 4 micro-batches per stage where the batch allows. Layouts that fit with no sharding at all are left out.
std::vector<ParallelLayout> candidate_layouts(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators);

}  // namespace dtsim
