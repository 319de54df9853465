// Transformers from their hyperparameters: the layer list of a decoder (GPT, Llama, Mixtral, Transformer-XL) or an
// encoder (BERT, ViT) with grouped-query attention, GELU, ReLU or SwiGLU MLPs, mixture-of-experts MLPs, and
// Transformer-XL's segment memory, relative positions and adaptive input and softmax. FLOPs count the matrix
// multiplications, 2 per multiply-add, as Kaplan et al. 2020 (Table 1) and Narayanan et al. 2021 (eq. 3) do; biases,
// norms, softmax and nonlinearities are left out as they leave them out (docs/models.md has every formula).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/model_zoo.hpp"

namespace dtsim {

enum class FfnKind : std::uint8_t { gelu, relu, swiglu };  // gelu and relu: two matrices; swiglu: three
enum class NormKind : std::uint8_t { layernorm, rmsnorm };
// relative: Transformer-XL's (Dai et al. 2019, sec. 3.3): per block a projection of the relative positions and a
// second score product, Q R^T, the size of Q K^T, added to it after a shift.
enum class PositionKind : std::uint8_t { learned, rope, relative, none };
enum class TransformerHead : std::uint8_t { lm, pooler, classifier, none };

// Every block's MLP replaced by `experts` MLPs of which a learned router picks `top_k` per token.
struct MoeSpec {
  int experts = 8;
  int top_k = 2;
  int expert_ffn_hidden = 0;
  // Each expert's buffer as a multiple of its even share of the tokens x top_k (GShard, Lepikhin et al. 2020; Switch,
  // Fedus et al. 2022): above 1 padded, below 1 tokens dropped; the experts' FLOPs, activations and all-to-alls scale
  // with it. 1: every token reaches its experts and nothing is padded (a dropless, balanced router).
  double capacity_factor = 1;
};

// Adaptive input and softmax (Baevski and Auli 2019; Grave et al. 2017), as Transformer-XL's code builds them: the
// vocabulary, most frequent first, cut at `cutoffs` into clusters; cluster i's embeddings are hidden / div_val^i wide
// (with div_val > 1 each projected to hidden). The softmax computes, for every token, logits over the first cluster
// and one per other cluster; a tail cluster's logits only for the tokens whose target is in it.
struct AdaptiveSpec {
  std::vector<int> cutoffs;  // increasing, each below vocab
  int div_val = 1;
};

// The share of a corpus's tokens whose word has frequency rank [first, last) in a vocabulary of `vocab` words, by
// Zipf's law with exponent 1 (the frequency of rank r proportional to 1 / r): an estimate where the corpus's own counts
// are not at hand (docs/models.md).
double zipf_share(double first, double last, double vocab);

// A vision transformer's input: the image cut into patch_size x patch_size patches, each projected to hidden (a
// convolution of stride patch_size), with an optional class token.
struct PatchSpec {
  int image_size = 224;
  int patch_size = 16;
  int channels = 3;
  bool class_token = true;
  // (64-bit: a 65536-pixel image of 1-pixel patches has 2^32 patches)
  long long tokens() const {
    const long long side = image_size / patch_size;
    return side * side + (class_token ? 1 : 0);
  }
};

struct TransformerSpec {
  std::string name;
  std::string source;
  bool decoder = true;  // causal masking: the score tiles it hides are skipped by fused attention (masked_score_flops)
  int layers = 1;
  int hidden = 1;
  int heads = 1;
  int kv_heads = 1;  // heads of K and V: = heads (multi-head), < heads (grouped-query), 1 (multi-query)
  int head_dim = 1;
  int ffn_hidden = 1;
  FfnKind ffn = FfnKind::gelu;
  int vocab = 0;        // 0 with patches
  int sequence = 1;     // tokens per sample
  int memory = 0;       // Transformer-XL: tokens of the previous segment each block's attention also reads
  int positions = 0;    // rows of a learned position table
  int token_types = 0;  // BERT's segment embeddings
  bool tied_embeddings = false;
  NormKind norm = NormKind::layernorm;
  PositionKind position = PositionKind::learned;
  bool biases = true;           // biases in the linear layers (GPT-2, BERT, ViT: yes; Llama, Mixtral: no)
  bool embedding_norm = false;  // a norm after the embeddings (BERT)
  bool final_norm = true;       // a norm after the last block (pre-norm models)
  TransformerHead head = TransformerHead::lm;
  int classes = 0;  // head classifier
  std::optional<MoeSpec> moe;
  std::optional<AdaptiveSpec> adaptive;
  std::optional<PatchSpec> patches;
};

// The layers: embeddings; per block an attention layer and an MLP layer (with MoE: a router layer and an experts
// layer), each holding its block's norm; the head. Expects a consistent spec (scenarios/model_file.cpp checks one).
Model transformer_model(const TransformerSpec& spec);

}  // namespace dtsim
