// The training step as data: what every rank runs in one step, written once for every parallelism (data, tensor,
// pipeline, ZeRO) and run by the step driver (sim/step_driver.hpp) on any Network.
//
// A rank belongs to a pipeline stage; ranks of a stage run the same program. A rank has streams, each a unit of the
// network that runs one segment (its part of a Schedule) at a time:
//   compute           local computes, timed by the driver, and the tensor-parallel allreduces inside layers (the
//                     layer waits for them, as Megatron's f and g operators do), expert parallelism's all-to-alls and
//                     context parallelism's exchanges of keys and values;
//   send_forward      the activations of each micro-batch to the next stage, in order;
//   send_backward     the input gradients of each micro-batch to the previous stage, in order;
//   receive_forward   receives posted ahead, one after another, from the previous stage;
//   receive_backward  from the next stage;
//   reduce            the gradient buckets' reductions (allreduce; ZeRO-3: reduce-scatter) across replicas, one after
//                     another as the last micro-batch's backward releases them (DDP's and Horovod's thread);
//   gather            ZeRO-3: the allgathers of each bucket's parameters before forward and before backward.
// Every segment is a Schedule laid over the units (place_groups), so pipeline sends, tensor and data-parallel
// collectives all move on the same network and share its links: on a cluster every unit runs on its rank's
// accelerator (NetworkCost::accelerator_of has one entry per unit); on the star each unit has a link of its own.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/schedule.hpp"
#include "models/parallel.hpp"
#include "models/variability.hpp"

namespace dtsim {

enum class Stream : std::uint8_t {
  compute,
  send_forward,
  send_backward,
  receive_forward,
  receive_backward,
  reduce,
  gather,
};
constexpr std::size_t stream_count = 7;
const char* to_string(Stream stream);

constexpr std::int32_t no_segment = -1;

struct LayerStep {       // one layer, per micro-batch
  double forward_s = 0;  // local compute
  double backward_s = 0;
  // >= 0: the tensor-parallel allreduce (a segment run on the compute stream) that ends the layer's forward and,
  // again, its backward
  std::int32_t tensor_segment = no_segment;
  bool expert = false;   // the segment is an expert-parallel all-to-all (its wait counts as RankStep::expert_s)
  bool context = false;  // the segment is a context-parallel exchange (its wait counts as RankStep::context_s)
  // Asynchronous tensor parallelism: the share of the forward (backward) compute, at its end, during which the
  // tensor segment already runs (tensor_overlap_fraction); the layer ends when both are done. 0: the segment starts
  // after the compute.
  double forward_overlap = 0;
  double backward_overlap = 0;
};

struct StageStep {
  std::vector<LayerStep> layers;  // in forward order
  // Bucket b's gradients are complete once the last micro-batch's backward has finished layer bucket_ready_after[b]
  // (forward order); buckets are listed in the order they become ready (the last holds the first layers).
  std::vector<std::size_t> bucket_ready_after;
  std::vector<std::size_t> bucket_segment;  // per bucket, its reduction (reduce stream)
  std::vector<std::size_t> gather_segment;  // ZeRO-3, per bucket: its parameters' allgather (empty: none)
  // A transport on the processor that computes (kernel TCP): per bucket, the time the rank's bytes take on its NIC at
  // line rate (empty: compute and transport do not slow each other). While the backward pass runs with buckets
  // waiting for the wire, the computes run at compute_rate_while_transporting of their speed and the buckets drain at
  // transport_rate_while_computing of line rate, one after another (a fluid model of the rank alone); each bucket's
  // reduction then starts on the network no earlier than a full-rate transfer that would end when its drain does.
  std::vector<double> bucket_wire_s;
  double compute_rate_while_transporting = 1;
  double transport_rate_while_computing = 1;
  std::int32_t send_forward_segment = no_segment;      // activations to the next stage
  std::int32_t receive_forward_segment = no_segment;   // from the previous stage (its send_forward_segment)
  std::int32_t send_backward_segment = no_segment;     // input gradients to the previous stage
  std::int32_t receive_backward_segment = no_segment;  // from the next stage (its send_backward_segment)
  double optimizer_s = 0;
};

struct StepProgram {
  int ranks = 0;
  std::vector<int> stage_of;  // per rank (empty: every rank runs stage 0)
  std::vector<StageStep> stages;
  // The network's segments: Schedules over `units` positions. Owned here, or borrowed (the caller keeps them alive).
  std::deque<Schedule> owned_segments;
  std::vector<const Schedule*> segments;
  // The unit of rank r's stream k is stream_base[k] + r; -1 for a stream no rank uses.
  std::array<int, stream_count> stream_base{-1, -1, -1, -1, -1, -1, -1};
  int units = 0;

  int micro_batches = 1;
  // The reduce stream's units per rank (a collective library's channels: each bucket's segment may run on all of
  // them at once, unit c x ranks + r of the stream being rank r's c-th; the bucket is done when all are). Set it
  // before use_stream(Stream::reduce).
  int reduce_channels = 1;
  // Units beyond the streams' that rank 0 starts with each of its buckets' reductions, as it starts its other
  // channels (switch helpers: nvls, sharp); the bucket is done when they are too.
  std::vector<int> helper_units;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  bool overlap = true;          // false: the buckets' reductions start only after the whole backward pass
  double fusion_cycle_s = 0;    // > 0 (Horovod): a ready bucket starts at the next multiple of this cycle
  double batch_s = 0;           // input pipeline: seconds to produce one batch of the rank (0: no pipeline)
  int prefetch = 2;             // batches the pipeline may prepare ahead, >= 1
  int steps = 3;                // simulated steps; the last one is reported (earlier ones fill the pipeline)
  bool gather_prefetch = true;  // ZeRO-3: gathers run ahead of the layers that need them (false: on demand)
  // Variability (models/variability.hpp): each rank's computes scaled by its slowdown and its jitter draws; null:
  // every rank computes exactly the stage's times. The caller keeps it alive.
  const ComputeNoise* noise = nullptr;
  // Null, or called with the fraction of all driven ranks' bucket reductions over all steps done so far, each time it
  // grows by a thousandth (a progress line for long runs)
  const std::function<void(double)>* progress = nullptr;

  // Gives stream `stream` units (stream_base, units); call once per used stream, before laying segments.
  void use_stream(Stream stream);
  int unit(int rank, Stream stream) const { return stream_base[static_cast<std::size_t>(stream)] + rank; }
  std::size_t add_segment(Schedule segment);  // an owned segment; returns its index
  // The boundary between `stage` and stage + 1: for each (rank of stage, rank of stage + 1) pair, a message of `bytes`
  // from the first's send_forward to the second's receive_forward, and one back from the second's send_backward to
  // the first's receive_backward (two segments, each a two-rank broadcast laid over the pairs). Call after every
  // stream is in use and every stage added.
  void connect_stages(int stage, std::span<const std::pair<int, int>> pairs, std::uint64_t bytes);
  std::size_t stage_index(int rank) const {
    return stage_of.empty() ? 0 : static_cast<std::size_t>(stage_of[static_cast<std::size_t>(rank)]);
  }
  const StageStep& stage_of_rank(int rank) const { return stages[stage_index(rank)]; }
};

// The order of a stage's work: GPipe runs every forward, then every backward (last micro-batch first); 1F1B
// (PipeDream-Flush) runs P - s - 1 warm-up forwards, then alternates one forward and one backward, then drains.
struct PipeOp {
  bool forward;
  int micro_batch;
};
std::vector<PipeOp> stage_order(int stage, int stages, int micro_batches, PipelineSchedule schedule);

// The first inconsistency of a program, or an empty string.
std::string check_step_program(const StepProgram& program);

}  // namespace dtsim
