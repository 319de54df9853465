// Model parallelism and sharded data parallelism: how a model is split over accelerators (data x tensor x pipeline),
// what each accelerator holds, and the communication each scheme needs per training step.
//   Pipeline (GPipe, Huang et al. 2019; 1F1B, Narayanan et al. 2019 PipeDream-Flush): the layers are cut into P
//   contiguous stages of about equal forward FLOPs; a replica's batch is cut into m micro-batches; the bubble of an
//   idealised pipeline (equal stages, free transfers) is (P-1)/(m+P-1) of the step.
//   Tensor (Megatron-LM, Shoeybi et al. 2019): each transformer layer's matrices are split T ways; an allreduce of the
//   layer's output activations (s h values per sample) follows attention and the MLP in forward, and the same in
//   backward. A language model's vocabulary is split too (Megatron's vocabulary-parallel embedding and output layer,
//   torchtitan's row- and column-wise embedding and output): the token embedding's and the output layer's parameters
//   and FLOPs, and the logits, 1/T each (their small reductions, the embedding's output and the loss's max and sum,
//   are not counted). Other layers (position tables, norms, convolutions, pooler and classifier heads) are
//   replicated.
//   Expert (GShard, Lepikhin et al. 2020; DeepSpeed-MoE, Rajbhandari et al. 2022): the experts of every MoE layer are
//   split E ways over E data-parallel replicas; each token goes to its top_k experts wherever they are, an all-to-all
//   before the experts (dispatch) and one after (combine), in forward and again in backward; the experts' gradients
//   are reduced over the D/E replicas holding the same experts, the rest over all D.
//   Context (ring attention, Liu et al. 2023; PyTorch's context_parallel as torchtitan applies it): each sequence is
//   split C ways over C ranks that hold the whole model (load-balanced: each rank keeps chunks from both ends, so a
//   causal mask leaves each rank 1/C of the attention's work); every layer's per-token work is 1/C a rank, and each
//   attention layer gathers the keys and values of the others before it runs (forward) and sends their gradients back
//   after (backward): an all-gather of C x the rank's K and V over the C ranks each way, not overlapped with the
//   blocks' compute (an upper bound of its cost). The gradients are reduced, and ZeRO shards, over the D x C ranks
//   (torchtitan's FSDP mesh dp_shard x cp).
//   Sharded data parallelism (ZeRO, Rajbhandari et al. 2020; FSDP): stage 1 shards optimizer states, 2 also gradients,
//   3 also parameters (FSDP's full shard) over the D data-parallel ranks. Stages 1 and 2 move what an allreduce moves
//   (a reduce-scatter of gradients and an allgather of parameters); stage 3 allgathers parameters before forward and
//   again before backward and reduce-scatters gradients: 1.5x the allreduce's volume.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/model_zoo.hpp"
#include "models/training.hpp"

namespace dtsim {

enum class PipelineSchedule : std::uint8_t { gpipe, one_f_one_b };
enum class Sharding : std::uint8_t { none, zero1, zero2, zero3 };
const char* to_string(PipelineSchedule schedule);
const char* to_string(Sharding sharding);

struct ParallelLayout {
  int data = 1;
  int context = 1;  // context-parallel ranks (C): each sequence split over C ranks
  int tensor = 1;
  int pipeline = 1;
  int micro_batches = 1;  // per replica and step
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Sharding sharding = Sharding::none;
  bool prefetch = true;  // ZeRO-3: gather the next layer's parameters while this one computes
  int expert = 1;        // expert-parallel ranks (E): consecutive data-parallel replicas that split the experts
  // Asynchronous tensor parallelism (torchtitan's async TP, Megatron-Core's tp_comm_overlap): each tensor-parallel
  // collective is cut into T chunks that move while the projections beside it compute theirs (an all-gather's chunk
  // during the previous chunk's product, a reduce-scatter's after its own), so a split layer waits only for what its
  // products cannot cover: see tensor_overlap_fraction.
  bool async_tensor = false;
  int accelerators() const { return data * context * tensor * pipeline; }
  // The ranks gradients are reduced over (and ZeRO shards over): data x context.
  int replicas() const { return data * context; }
  std::string describe() const;  // e.g. "8d x 8t x 16p, 1f1b, 32 micro-batches, zero1", "4d x 2c x 8t x 8p, ..."
};

// A layout at every accelerator count (a scenario's "parallel" object): data = accelerators / (context x tensor x
// pipeline), or a search over layouts.
struct ParallelSpec {
  int context = 1;
  int tensor = 1;
  int pipeline = 1;
  int micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Sharding sharding = Sharding::none;
  bool prefetch = true;
  int expert = 1;
  bool async_tensor = false;
  bool search = false;
  // Throws std::invalid_argument when `accelerators` is not a multiple of context x tensor x pipeline.
  ParallelLayout layout(int accelerators) const;
};

// Whether tensor parallelism splits this layer (a transformer layer: it carries tensor_parallel_values).
inline bool tensor_split(const Layer& layer) { return layer.tensor_parallel_values > 0; }
// Whether tensor parallelism splits this layer's vocabulary (a language model's token embedding or output layer).
inline bool vocabulary_split(const Layer& layer) {
  return layer.kind == LayerKind::lm_head || (layer.kind == LayerKind::embedding && layer.name == "embeddings");
}
// Whether T tensor ranks fit nodes of `per_node` accelerators: part of one node (T divides it), or whole nodes (T a
// multiple of it: the tensor-parallel allreduces then cross the NICs).
inline bool tensor_fits_nodes(int tensor, int per_node) {
  return tensor >= 1 && per_node >= 1 && (per_node % tensor == 0 || tensor % per_node == 0);
}

// Whether expert parallelism splits this layer (an MoE layer's experts: it carries `experts`).
inline bool expert_layer(const Layer& layer) { return layer.experts > 0; }
// The parameters of `model`'s expert layers.
double expert_params(const Model& model);
// `model` with only its expert layers' parameters (experts true) or only the others' (false): the gradients that
// expert parallelism reduces over D/E replicas, or over all D.
Model params_of(const Model& model, bool experts);
// Why `layout` cannot split `model`'s experts (an empty string when it can, or when layout.expert is 1): E must divide
// the data-parallel replicas and every MoE layer's experts, and the model must have some; ZeRO-3 is not modelled with
// it (its gathers follow one bucket list).
std::string expert_layout_problem(const Model& model, const ParallelLayout& layout);

// The share of a tensor-split layer's pass (forward or backward, `pass_s` seconds of one micro-batch on one tensor
// rank) during which asynchronous tensor parallelism moves its collective: its projections' products (`products_s`,
// projection_seconds) less the first of T chunks, which has nothing to overlap (an all-gather's first product runs on
// the local chunk while nothing has arrived; a reduce-scatter's last chunk moves after the last product). Each
// collective then takes max(products, transfer + products / T) instead of their sum. 0 for T = 1 or an empty pass.
double tensor_overlap_fraction(double products_s, double pass_s, int tensor);

// One layer as each of `tensor` tensor ranks holds and computes it: a split layer's (tensor_split, vocabulary_split)
// parameters, FLOPs and activations 1/T; any other layer whole.
Layer tensor_rank_layer(Layer layer, int tensor);

// One layer as each of `context` context ranks computes it: its per-sample FLOPs, activations and exchanged values 1/C
// (a load-balanced share of the sequence's tokens, and of a causal attention's score tiles); its parameters whole.
Layer context_rank_layer(Layer layer, int context);
// Why `layout` cannot split `model`'s sequences (an empty string when it can, or when layout.context is 1): the model
// needs attention layers, and expert parallelism is not modelled with it.
std::string context_layout_problem(const Model& model, const ParallelLayout& layout);

// Contiguous layer ranges [first, last) of `stages` stages with forward FLOPs as equal as a greedy cut makes them,
// each layer counted as one of `tensor` tensor ranks computes it (split layers 1/T). Throws std::invalid_argument when
// the model has fewer layers than stages.
std::vector<std::pair<std::size_t, std::size_t>> split_stages(const Model& model, int stages, int tensor = 1);

// The layers of one stage as one accelerator of a tensor-parallel group runs them: split layers with 1/T of their
// parameters and FLOPs, expert layers with 1/E of their parameters (and experts; their FLOPs stay: with tokens
// spread evenly, each rank's experts compute as many tokens as its own batch sends out).
// With `context` > 1, every layer as one of C context ranks computes it (context_rank_layer).
Model stage_model(const Model& model, std::pair<std::size_t, std::size_t> layers, int tensor, int expert = 1,
                  int context = 1);

// Memory of one accelerator of `stage` under the layout; `replica_batch` is one data-parallel replica's batch.
// Activations: those of one micro-batch times the micro-batches in flight (GPipe: all m; 1F1B: P - stage, at most m).
MemoryUse parallel_memory(const TrainingSetup& setup, const ParallelLayout& layout, int replica_batch, int stage);

// Bytes one accelerator of `stage` sends per step, by scheme (the textbook formulas, ring collectives):
//   data: allreduce (or ZeRO-1/2 reduce-scatter + allgather) 2 (D-1)/D G; ZeRO-3 3 (D-1)/D G, G the stage's gradient
//   bytes per accelerator; tensor: per split layer, per micro-batch, 2 allreduces of 2 (T-1)/T x b s h values;
//   pipeline: per micro-batch one activation forward and its gradient backward per stage boundary it has; expert:
//   per MoE layer and micro-batch 4 all-to-alls (dispatch and combine, forward and backward) of (E-1)/E x b x
//   dispatch_values / T values, the experts' gradients reduced over D/E replicas; context: per attention layer and
//   micro-batch 2 all-gathers (forward and backward) in which a rank sends its K and V to the C - 1 others; the data
//   part over D x C ranks.
struct CommVolume {
  double data_bytes = 0;
  double tensor_bytes = 0;
  double pipeline_bytes = 0;
  double expert_bytes = 0;
  double context_bytes = 0;
};
CommVolume comm_volume(const TrainingSetup& setup, const ParallelLayout& layout, int replica_batch, int stage);

// Bytes per sample crossing the boundary after layer `last` (the activation a stage sends the next one): the layer's
// s h values for transformer layers, its kept activations otherwise (an upper bound).
double boundary_bytes_per_sample(const Layer& last, Precision precision);

// The idealised GPipe bubble: (P-1)/(m+P-1).
double ideal_bubble_fraction(int stages, int micro_batches);

}  // namespace dtsim
