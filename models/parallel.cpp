#include "models/parallel.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim {

const char* to_string(PipelineSchedule schedule) { return schedule == PipelineSchedule::gpipe ? "gpipe" : "1f1b"; }

const char* to_string(Sharding sharding) {
  switch (sharding) {
    case Sharding::none: return "none";
    case Sharding::zero1: return "zero1";
    case Sharding::zero2: return "zero2";
    case Sharding::zero3: return "zero3";
  }
  return "?";
}

std::string ParallelLayout::describe() const {
  std::string s = std::to_string(data) + "d x " + (context > 1 ? std::to_string(context) + "c x " : "") +
                  std::to_string(tensor) + "t x " + std::to_string(pipeline) + "p";
  if (pipeline > 1) s += std::string(", ") + to_string(schedule);
  s += ", " + std::to_string(micro_batches) + " micro-batch" + (micro_batches == 1 ? "" : "es");
  if (sharding != Sharding::none) s += std::string(", ") + to_string(sharding);
  if (expert > 1) s += ", " + std::to_string(expert) + "-way experts";
  if (async_tensor && tensor > 1) s += ", async tensor";
  return s;
}

ParallelLayout ParallelSpec::layout(int accelerators) const {
  const int split = context * tensor * pipeline;
  if (accelerators < 1 || accelerators % split != 0) {
    throw std::invalid_argument(std::to_string(accelerators) + " is not a multiple of " +
                                (context > 1 ? "context x " : "") + "tensor x pipeline = " + std::to_string(split));
  }
  ParallelLayout l;
  l.context = context;
  l.tensor = tensor;
  l.pipeline = pipeline;
  l.data = accelerators / split;
  l.micro_batches = micro_batches;
  l.schedule = schedule;
  l.sharding = sharding;
  l.prefetch = prefetch;
  l.expert = expert;
  l.async_tensor = async_tensor;
  return l;
}

double tensor_overlap_fraction(double products_s, double pass_s, int tensor) {
  if (tensor <= 1 || pass_s <= 0 || products_s <= 0) return 0;
  return std::min(1.0, products_s * (tensor - 1) / tensor / pass_s);
}

double expert_params(const Model& model) {
  double sum = 0;
  for (const Layer& l : model.layers)
    sum += expert_layer(l) ? l.params : 0;
  return sum;
}

Model params_of(const Model& model, bool experts) {
  Model out = model;
  for (Layer& l : out.layers)
    l.params = expert_layer(l) == experts ? l.params : 0;
  return out;
}

std::string expert_layout_problem(const Model& model, const ParallelLayout& layout) {
  const int e = layout.expert;
  if (e <= 1) return {};
  if (layout.data % e != 0) {
    return std::to_string(e) + " expert-parallel ranks do not divide the " + std::to_string(layout.data) +
           " data-parallel replicas";
  }
  if (layout.sharding == Sharding::zero3) return "expert parallelism with zero3 is not modelled (zero1 or zero2 are)";
  bool any = false;
  for (const Layer& l : model.layers) {
    if (!expert_layer(l)) continue;
    any = true;
    const auto experts = static_cast<long long>(l.experts);
    if (experts % e != 0) {
      return l.name + "'s " + std::to_string(experts) + " experts do not split over " + std::to_string(e) + " ranks";
    }
  }
  if (!any) return "model " + model.name + " has no MoE layers (no experts to split)";
  return {};
}

std::string context_layout_problem(const Model& model, const ParallelLayout& layout) {
  if (layout.context <= 1) return {};
  if (layout.expert > 1) return "context parallelism with expert parallelism is not modelled";
  if (std::none_of(model.layers.begin(), model.layers.end(), [](const Layer& l) { return l.kv_values > 0; }))
    return "model " + model.name + " has no attention layers (no sequence to split)";
  return {};
}

Layer context_rank_layer(Layer layer, int context) {
  if (context <= 1) return layer;
  const double c = context;
  for (double* per_sample :
       {&layer.forward_flops, &layer.activation_bytes, &layer.score_bytes, &layer.score_flops,
        &layer.masked_score_flops, &layer.checkpoint_bytes, &layer.winograd_flops, &layer.output_bytes,
        &layer.tensor_parallel_values, &layer.dispatch_values, &layer.op_recompute_flops, &layer.kv_values})
    *per_sample /= c;
  return layer;
}

Layer tensor_rank_layer(Layer layer, int tensor) {
  if (tensor <= 1) return layer;
  if (tensor_split(layer)) {
    layer.params /= tensor;
    layer.forward_flops /= tensor;
    layer.op_recompute_flops /= tensor;
    layer.activation_bytes /= tensor;  // (Megatron without sequence parallelism keeps some replicated: a lower bound)
    layer.score_bytes /= tensor;       // each rank's heads' scores (before session 48 left whole: over-counted)
    layer.score_flops /= tensor;
    layer.masked_score_flops /= tensor;
    layer.kv_values /= tensor;  // each rank's heads' keys and values
  } else if (vocabulary_split(layer)) {
    // the vocabulary's rows (embedding) or columns (output): parameters and FLOPs; the output's logits too
    layer.params /= tensor;
    layer.forward_flops /= tensor;
    if (layer.kind == LayerKind::lm_head) layer.activation_bytes /= tensor;
  }
  return layer;
}

std::vector<std::pair<std::size_t, std::size_t>> split_stages(const Model& model, int stages, int tensor) {
  const std::size_t n = model.layers.size();
  if (stages < 1 || static_cast<std::size_t>(stages) > n) {
    throw std::invalid_argument("pipeline: " + std::to_string(stages) + " stages for a model of " + std::to_string(n) +
                                " layers (needs 1 to " + std::to_string(n) + ")");
  }
  // each layer's forward FLOPs on one tensor rank: what its stage's accelerators compute
  std::vector<double> work(n);
  double total = 0;
  for (std::size_t l = 0; l < n; ++l) {
    work[l] = tensor_rank_layer(model.layers[l], tensor).forward_flops;
    total += work[l];
  }
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t first = 0;
  double done = 0;
  for (int s = 0; s < stages; ++s) {
    const std::size_t left_stages = static_cast<std::size_t>(stages - s);
    std::size_t last = first + 1;  // every stage gets at least one layer
    double sum = work[first];
    const double target = (total - done) / static_cast<double>(left_stages);
    // add layers while the stage stays closer to its share and enough layers remain for the later stages
    while (last < n - (left_stages - 1) && std::abs(sum + work[last] - target) <= std::abs(sum - target)) {
      sum += work[last];
      ++last;
    }
    if (s == stages - 1) last = n;
    out.emplace_back(first, last);
    for (std::size_t l = first; l < last; ++l)
      done += work[l];
    first = last;
  }
  return out;
}

Model stage_model(const Model& model, std::pair<std::size_t, std::size_t> layers, int tensor, int expert, int context) {
  Model m;
  m.name = model.name;
  m.source = model.source;
  m.input = model.input;
  m.input_bytes = layers.first == 0 ? model.input_bytes : 0;
  for (std::size_t l = layers.first; l < layers.second; ++l) {
    Layer layer = context_rank_layer(tensor_rank_layer(model.layers[l], tensor), context);
    if (expert_layer(layer) && expert > 1) {
      layer.params /= expert;
      layer.experts /= expert;
    }
    m.layers.push_back(std::move(layer));
  }
  return m;
}

double boundary_bytes_per_sample(const Layer& last, Precision precision) {
  const double value = gradient_bytes_per_param(precision);
  if (last.tensor_parallel_values > 0) return last.tensor_parallel_values * value;
  return last.activation_bytes * value / 4.0;
}

double ideal_bubble_fraction(int stages, int micro_batches) {
  return static_cast<double>(stages - 1) / static_cast<double>(micro_batches + stages - 1);
}

MemoryUse parallel_memory(const TrainingSetup& setup, const ParallelLayout& layout, int replica_batch, int stage) {
  const auto stages = split_stages(setup.model, layout.pipeline, layout.tensor);
  const Model m = stage_model(setup.model, stages.at(static_cast<std::size_t>(stage)), layout.tensor, layout.expert,
                              layout.context);
  const double experts = expert_params(m);  // sharded over the D/E replicas that hold the same experts
  const double value = gradient_bytes_per_param(setup.compute.precision);
  const double d = layout.replicas();  // (ZeRO shards over the context ranks too)
  // the parameters as ZeRO shards them: dense ones over D, experts over D/E
  const auto sharded = [&](bool sharding) {
    return sharding ? (m.params() - experts) / d + experts * layout.expert / d : m.params();
  };
  MemoryUse use;
  use.weights_bytes = sharded(layout.sharding == Sharding::zero3) * value;
  use.gradient_bytes = sharded(layout.sharding >= Sharding::zero2) * value;
  use.optimizer_bytes = sharded(layout.sharding >= Sharding::zero1) *
                        optimizer_state_bytes_per_param(setup.compute.optimizer, setup.compute.precision);
  const double micro_batch = static_cast<double>(replica_batch) / layout.micro_batches;
  // (one stage under 1F1B runs each micro-batch's forward and backward in turn: one in flight, as the driver runs it)
  const int in_flight = layout.schedule == PipelineSchedule::gpipe
                            ? layout.micro_batches
                            : std::min(layout.micro_batches, layout.pipeline - stage);
  use.activation_bytes = kept_activation_bytes(m, setup.compute) * micro_batch * in_flight * value / 4.0;
  if (layout.sharding == Sharding::zero3) {  // the largest layer's parameters, gathered whole while it runs
    double largest = 0;
    for (const Layer& l : m.layers)
      largest = std::max(largest, l.params);
    use.weights_bytes += largest * value * (layout.prefetch ? 2 : 1);
  }
  return use;
}

CommVolume comm_volume(const TrainingSetup& setup, const ParallelLayout& layout, int replica_batch, int stage) {
  const auto stages = split_stages(setup.model, layout.pipeline, layout.tensor);
  const auto range = stages.at(static_cast<std::size_t>(stage));
  const Model m = stage_model(setup.model, range, layout.tensor, layout.expert, layout.context);
  const double value = gradient_bytes_per_param(setup.compute.precision);
  const double d = layout.replicas();
  const double t = layout.tensor;
  const double e = layout.expert;
  const double micro_batch = static_cast<double>(replica_batch) / layout.micro_batches;
  CommVolume v;
  // an allreduce reduce-scatters and allgathers the gradients (in the dtype they are reduced in); ZeRO-3
  // reduce-scatters them and allgathers the parameters twice (forward and backward, in the training precision)
  const double reduced = reduce_bytes_per_param(setup);
  const auto replica_bytes = [&](double params) {
    return layout.sharding == Sharding::zero3 ? params * (reduced + 2 * value) : params * 2 * reduced;
  };
  const double experts = expert_params(m);
  const double expert_replicas = d / e;
  v.data_bytes = (d - 1) / d * replica_bytes(m.params() - experts) +
                 (expert_replicas - 1) / expert_replicas * replica_bytes(experts);
  for (const Layer& l : m.layers) {
    if (tensor_split(l)) {
      v.tensor_bytes +=
          layout.micro_batches * 2.0 * (2.0 * (t - 1) / t) * micro_batch * l.tensor_parallel_values * value;
    }
    if (expert_layer(l) && e > 1)
      v.expert_bytes += layout.micro_batches * 4.0 * (e - 1) / e * micro_batch * l.dispatch_values * value / t;
    if (l.kv_values > 0 && layout.context > 1)  // (the stage model's K and V are the rank's own: 1/C)
      v.context_bytes += layout.micro_batches * 2.0 * (layout.context - 1) * micro_batch * l.kv_values * value;
  }
  // the stage sends its output forward (if it has a next stage) and its input's gradient backward (if a previous one)
  double sent = 0;
  if (stage < layout.pipeline - 1) {
    sent += boundary_bytes_per_sample(setup.model.layers[range.second - 1], setup.compute.precision);
  }
  if (stage > 0) sent += boundary_bytes_per_sample(setup.model.layers[range.first - 1], setup.compute.precision);
  // each tensor rank sends its 1/T slice (Megatron's scatter-gather, Narayanan et al. 2021)
  v.pipeline_bytes = sent * micro_batch * layout.micro_batches / t;
  return v;
}

}  // namespace dtsim
