// Predicting model-parallel and sharded data-parallel training (data x tensor x pipeline, ZeRO/FSDP) on a cluster.
// A step is one step program (sim/step_program.hpp) run by the step driver on the layout's routed cluster (SimGrid up
// to 64 accelerators, the flow engine above): every rank runs its stage's layers at 1/T of their work per
// micro-batch in GPipe or 1F1B order; each tensor-split layer waits for its Megatron allreduce over the stage's T
// tensor ranks (a ring on the network); activations and their gradients cross each stage boundary as messages between
// tensor rank t of one stage and tensor rank t of the next (1/T of the activation each); the last micro-batch's
// backward releases the stage's gradient buckets, reduced over its D replicas (allreduce; ZeRO-3: reduce-scatter, and
// each bucket's parameters allgathered before its first forward and first backward, ahead of them when prefetching).
// All of it moves on the same links at once: pipeline sends crossing an oversubscribed fabric, tensor-parallel rings
// sharing NVLink with data-parallel ones. The breakdown is the slowest rank's, measured by the driver.
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

// Samples per data-parallel replica and step. Weak scaling keeps the batch per accelerator: the global batch is
// setup.batch x accelerators whatever the layout, so a replica of T x P accelerators takes setup.batch x T x P. Strong
// scaling splits the global batch setup.batch over the D replicas (std::invalid_argument when it does not divide).
int replica_batch(const TrainingSetup& setup, const ParallelLayout& layout);

struct ParallelPrediction {
  ParallelLayout layout;
  int accelerators = 0;
  int nodes = 0;
  int replica_batch = 0;       // samples per data-parallel replica and step (replica_batch above)
  long long global_batch = 0;  // replica_batch x data
  double micro_batch = 0;      // samples per micro-batch: what each accelerator of a replica computes on at a time
  MemoryUse memory;            // the stage that needs the most
  bool fits = true;
  double step_s = 0;
  double samples_per_s = 0;
  // the slowest rank's step: compute + tensor communication + expert all-to-alls + pipeline bubble (waiting for
  // activations and gradients from other stages, their transfers included) + exposed data-parallel communication
  // (ZeRO-3 gathers included) + input stall + optimizer
  double compute_s = 0;
  double tensor_comm_s = 0;
  double expert_comm_s = 0;   // waiting for expert parallelism's all-to-alls (dispatch and combine)
  double context_comm_s = 0;  // waiting for context parallelism's key and value exchanges
  double bubble_s = 0;
  double bubble_fraction = 0;
  double data_exposed_s = 0;
  double data_comm_s = 0;
  double input_stall_s = 0;
  double optimizer_s = 0;
  CommVolume volume;  // of stage 0's accelerators
  std::string bottleneck;
  int simulated_stage = 0;  // the stage of the slowest rank, whose breakdown this is
  double wall_s = 0;        // what the simulation cost
  RunTrace pipeline_trace;  // replica 0, tensor rank 0: each stage's forward and backward spans (recorded on request)
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
// and 4 micro-batches per stage where the batch allows; MoE models each also with their experts split 2, 4, ... ways
// where the replicas and the experts allow. Layouts that fit with no sharding at all are left out.
std::vector<ParallelLayout> candidate_layouts(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators);

}  // namespace dtsim
