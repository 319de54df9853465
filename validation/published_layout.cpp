#include "validation/published_layout.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/compute_model.hpp"
#include "models/parallel.hpp"
#include "sim/parallel.hpp"

namespace dtsim {

std::string layout_not_modelled(const PublishedRow& row) {
  const PublishedLayout& l = row.layout;
  if (l.hsdp > 0) return "hybrid sharding (sharded within a group, replicated across groups)";
  if (l.schedule == "interleaved-1f1b") return "an interleaved 1F1B pipeline (dtsim runs GPipe and 1F1B)";
  // torchao's float8 with one scale a tensor (tensorwise, its default and what the rows that name no recipe ran) is
  // dtsim's fp8; rowwise scales and MX blocks run other kernels
  if (row.precision == "fp8" &&
      (row.notes.find("rowwise") != std::string::npos || row.id.find("mxfp8") != std::string::npos))
    return "float8 with rowwise or MX scaling (dtsim's fp8 is tensorwise-scaled products)";
  if (row.recompute.empty()) return "the source does not state its activation checkpointing";
  if (row.recompute == "selective_layer") return "layer-selective checkpointing (every Nth block; N not stated)";
  if (row.compiled.empty()) return "the source does not state whether the model was compiled";
  if (l.pipeline > 1 && l.micro_batches == 0) return "the source does not state the pipeline's micro-batches";
  return "";
}

namespace {

// FSDP2 as torchtitan applies it wraps each transformer block in its own unit: a block's parameters are gathered and
// its gradients reduce-scattered together.
double block_bytes(const Model& model, double value_bytes) {
  double block = 0;
  for (const Layer& l : model.layers) {
    if (l.name.starts_with("blocks.0.")) block += l.params;
  }
  return block * value_bytes;
}

}  // namespace

LayoutPrediction predict_layout_row(const PublishedRow& row, TrainingSetup setup, const ClusterSpec& cluster) {
  const PublishedLayout& l = row.layout;
  const std::optional<Recompute> recompute = recompute_from_string(row.recompute);
  if (!recompute) throw std::invalid_argument("recompute '" + row.recompute + "' is not dtsim's");
  setup.compute.recompute = *recompute;
  setup.compute.flash_attention = true;  // scaled_dot_product_attention's fused kernels (torchtitan's attention)
  // torch.compile fuses chains of memory-bound kernels, as the compiled runtime does (docs/compute.md)
  setup.compute.runtime = row.compiled == "yes" ? Runtime::xla : Runtime::eager;
  setup.compute.optimizer = Optimizer::adam;  // AdamW in every torchtitan preset, foreach (multi-tensor) by default
  ParallelLayout layout;
  layout.context = l.context;  // torchtitan's context_parallel (its FSDP shards over dp_shard x cp, as dtsim's ZeRO)
  layout.tensor = l.tensor;
  layout.pipeline = l.pipeline;
  layout.data = row.device_count / l.model_parallel();
  layout.sharding = l.fsdp > 0 ? Sharding::zero3 : Sharding::none;
  layout.micro_batches = l.pipeline > 1 ? l.micro_batches : 1;
  layout.schedule = l.schedule == "gpipe" ? PipelineSchedule::gpipe : PipelineSchedule::one_f_one_b;
  // torchtitan's async TP (experimental.enable_async_tensor_parallel): torch.compile's micro-pipelined all-gather and
  // reduce-scatter matrix products
  layout.async_tensor = l.async_tp;
  // the batch of a data-parallel rank (a replica of tensor x pipeline devices): the global batch, split over replicas
  setup.scaling = ScalingMode::strong;
  setup.batch = row.batch_per_device * layout.data;
  setup.accumulation = 1;
  apply_preset(setup, FrameworkPreset::ddp);  // buckets in reverse layer order, overlapped with backward: FSDP's units
  // torchtitan's FSDP reduce-scatters gradients in fp32 (training.mixed_precision_reduce, "float32" by default and
  // the only choice in 2024's releases) and gathers parameters in bf16 (mixed_precision_param)
  if (layout.sharding == Sharding::zero3) setup.reduce_precision = Precision::fp32;
  setup.bucket_bytes = block_bytes(setup.model, reduce_bytes_per_param(setup)) / l.tensor;
  setup.first_bucket_bytes = setup.bucket_bytes;
  setup.steps = 2;
  LayoutPrediction out;
  const int per_replica = replica_batch(setup, layout);
  for (int stage = 0; stage < layout.pipeline; ++stage) {
    if (parallel_memory(setup, layout, per_replica, stage).total_bytes() > setup.device.memory_bytes) out.fits = false;
  }
  setup.device.memory_bytes = 1e18;  // the measured run fitted: predict its time whatever the memory model says
  const ParallelPrediction p = predict_parallel(setup, cluster, layout, "ring");
  out.tokens_per_device_s = p.samples_per_s * setup.model.tokens_per_sample / row.device_count;
  return out;
}

}  // namespace dtsim
