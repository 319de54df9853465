// Networks as data, layer by layer. Each layer has its parameter count, its forward FLOPs per sample (2 per
// multiply-add), the activation bytes per sample it keeps for the backward pass and its kind (what kernels it runs).
// The built-in networks (the zoo) are model files, scenarios/models/NAME.json, read by scenarios/model_file.cpp; their
// layer lists come from models/transformer.cpp (transformers from their hyperparameters) and models/layer_list.cpp
// (CNNs and MLPs from their layers' shapes), so totals can be checked against published parameter and multiply-add
// counts (docs/models.md lists them with their sources).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim {

// What a layer computes, for a compute model that costs kernels by kind.
enum class LayerKind : std::uint8_t {
  conv,
  linear,
  attention,
  norm,
  activation,
  pool,
  embedding,
  elementwise,
  softmax,
  lm_head,
  moe_router,
  other
};
const char* to_string(LayerKind kind);
// nullopt when `name` is not one of to_string's names.
std::optional<LayerKind> layer_kind_from_string(std::string_view name);
// "conv|linear|...|other", the accepted names.
std::string_view layer_kind_names();

struct Layer {
  std::string name;
  double params = 0;                // trainable parameters
  double forward_flops = 0;         // per sample (a multiply-add counts 2)
  double activation_bytes = 0;      // per sample, kept for backward (fp32)
  double backward_flop_factor = 2;  // backward FLOPs = this x forward (input and weight gradients)
  // Transformer layers (attention, MLP): the values per sample of the output that Megatron-style tensor parallelism
  // allreduces (sequence x hidden); 0 for layers tensor parallelism does not split.
  double tensor_parallel_values = 0;
  LayerKind kind = LayerKind::other;
  double kernels = 0;  // kernels its forward pass launches; 0: its kind's count (models/compute_model.cpp)
  // Attention: the part of activation_bytes and forward_flops that is the score matrix (softmax, its dropout; Q K^T
  // and the weighted sum of V), which a fused (flash) kernel never writes and selective recomputation does not keep.
  double score_bytes = 0;
  double score_flops = 0;
  // Causal attention: the part of score_flops in the key tiles a causal mask hides entirely, which a fused (flash)
  // kernel skips (FlashAttention-2, Dao 2023, arXiv:2307.08691, section 3.1.1: blocks whose every entry is masked are
  // not computed) and an unfused attention computes and then masks; 0 for bidirectional attention.
  double masked_score_flops = 0;
  // Attention: the values per sample of the keys and values it computes (2 x keys x the K and V width), which context
  // parallelism exchanges between the ranks that split a sequence; 0 for other layers.
  double kv_values = 0;
  // Activation bytes per sample full recomputation keeps (the layer's input); 0: recomputation keeps all of it.
  double checkpoint_bytes = 0;
  // The part of forward_flops a Winograd algorithm can compute with fewer multiplies (3x3, stride-1, ungrouped
  // convolutions; models/compute_model.hpp says when it is used).
  double winograd_flops = 0;
  // Convolutions: their output map per sample (fp32 bytes), which with the input (checkpoint_bytes) is what an NCHW
  // layout transposes; 0 for other layers.
  double output_bytes = 0;
  // Grouped convolutions (groups > 1: ResNeXt's, depthwise ones): the input channels each group reduces over (1 for a
  // depthwise convolution); 0 for ungrouped convolutions and other layers (models/compute_model.hpp).
  double channels_per_group = 0;
  // MoE expert layers: how many experts' parameters the layer holds (expert parallelism shards them over its ranks)
  // and the values per sample each of its all-to-alls moves (tokens x top_k x hidden: every token to each of its
  // experts, dispatch and combine alike); 0 for every other layer.
  double experts = 0;
  double dispatch_values = 0;
  // The tensors its parameters are held in (weights, biases, norms' scales and shifts): what an optimizer that loops
  // over parameter tensors launches its kernels for (models/compute_model.hpp, OptimizerLoop).
  double param_tensors = 0;
  // Transformer blocks: the FLOPs per sample of the matrix products torchtitan's per-op selective recomputation runs
  // again in backward (every second product of a block in forward order: K and the output projection, the MLP's
  // second; Recompute::selective_op); 0 for every other layer.
  double op_recompute_flops = 0;
};

struct Model {
  std::string name;
  std::string source;         // architecture reference
  std::string input;          // e.g. "3x224x224 image"
  double input_bytes = 0;     // one decoded sample as the first layer reads it (fp32)
  int tokens_per_sample = 0;  // a language model's sequence length (0: its samples are not token sequences)
  std::vector<Layer> layers;

  double params() const;
  double param_tensors() const;
  double forward_flops() const;
  double activation_bytes() const;
};

}  // namespace dtsim
