#include "models/transformer.hpp"

namespace dtsim {
namespace {

constexpr double float_bytes = 4;

double norm_params(const TransformerSpec& t) { return (t.norm == NormKind::layernorm ? 2.0 : 1.0) * t.hidden; }

// Korthikanti et al. 2022 (sec. 4.1) count a block's activations at 16 bits as s h (34 + 5 a s / h) bytes per sample:
// attention 11 s h + 5 a s^2, MLP 19 s h, two norms 4 s h. Their terms, in units of s h bytes, with the widths of
// this block (q = heads x head_dim, kv = kv_heads x head_dim, f = ffn_hidden):
//   attention: QKV input 2, Q 2q/h, K 2kv/h, V 2kv/h, output-projection input 2q/h, dropout mask 1;
//   scores: softmax output 2, its dropout mask 1 and output 2, per score: 5 a s / h;
//   GELU MLP: input 2, GELU input 2f/h, GELU output 2f/h, dropout mask 1 (19 at f = 4h);
//   SwiGLU MLP: input 2, gate and up outputs 4f/h, SiLU output and product 4f/h, dropout mask 1;
//   MoE: input 2, each of the top_k experts' MLP without the input, router logits 2 E/h;
//   norms: 4.
// fp32 doubles them. The attention layer holds the attention and score terms and one norm, the MLP layer the rest.
double mlp_units(FfnKind ffn, double f, double h) { return ffn == FfnKind::gelu ? 4 * f / h + 1 : 8 * f / h + 1; }

}  // namespace

Model transformer_model(const TransformerSpec& t) {
  Model m;
  m.name = t.name;
  m.source = t.source;
  const double s = t.patches ? t.patches->tokens() : t.sequence;
  const double h = t.hidden;
  const double q = static_cast<double>(t.heads) * t.head_dim;
  const double kv = static_cast<double>(t.kv_heads) * t.head_dim;
  const double norm = norm_params(t);
  const bool learned = t.position == PositionKind::learned;

  // Embeddings: a gather per table, no multiply-adds; counted as s h FLOPs per table read and summed (and per
  // embedding norm), as the zoo counted BERT (token, position, segment and a norm: 4 s h) and GPT-2 (2 s h).
  Layer emb;
  emb.name = "embeddings";
  emb.kind = LayerKind::embedding;
  emb.backward_flop_factor = 1;
  emb.activation_bytes = s * h * float_bytes;
  double tables = 0;
  if (t.patches) {
    const PatchSpec& p = *t.patches;
    const double patch_in = static_cast<double>(p.channels) * p.patch_size * p.patch_size;
    const double patches = s - (p.class_token ? 1 : 0);
    emb.name = "patch_embedding";
    emb.kind = LayerKind::conv;  // a convolution of kernel and stride patch_size
    emb.backward_flop_factor = 2;
    emb.params = patch_in * h + (t.biases ? h : 0) + (p.class_token ? h : 0);
    emb.forward_flops = 2 * patch_in * h * patches;
    m.input =
        std::to_string(p.channels) + "x" + std::to_string(p.image_size) + "x" + std::to_string(p.image_size) + " image";
    m.input_bytes = patch_in * patches * float_bytes;
  } else {
    emb.params = static_cast<double>(t.vocab) * h;
    tables = 1;
    m.input = std::to_string(t.sequence) + " tokens";
    m.tokens_per_sample = t.sequence;
    m.input_bytes = s * float_bytes * (t.token_types > 0 ? 2 : 1);  // token ids (and segment ids)
  }
  if (learned) {
    emb.params += static_cast<double>(t.positions) * h;
    tables += 1;
  }
  if (t.token_types > 0) {
    emb.params += static_cast<double>(t.token_types) * h;
    tables += 1;
  }
  if (t.embedding_norm) {
    emb.params += norm;
    tables += 1;
  }
  emb.forward_flops += tables * s * h;
  m.layers.push_back(emb);

  // Blocks. Per token: Q, K, V and output projections 2 (h q + 2 h kv + q h); scores Q K^T and their weighted sum of
  // V 2 x 2 s q (Kaplan et al. 2020 Table 1, 2 n_ctx d_attn per token for each; causal masks not subtracted).
  const double attention_params = 2 * h * q + 2 * h * kv + (t.biases ? q + 2 * kv + h : 0) + norm;
  const double attention_flops = s * (2 * (2 * h * q + 2 * h * kv) + 4 * s * q);
  double mlp_act_units = 0;
  const double attention_units = 2 + 4 * q / h + 4 * kv / h + 1;
  if (t.moe) {
    const double fe = t.moe->expert_ffn_hidden;
    mlp_act_units = 2 + t.moe->top_k * t.moe->capacity_factor * mlp_units(t.ffn, fe, h) + 2.0 * t.moe->experts / h;
  } else {
    mlp_act_units = 2 + mlp_units(t.ffn, t.ffn_hidden, h);
  }
  // fp32: 2 x the 16-bit bytes; each layer holds its own terms and one norm
  const double score_bytes = 2 * s * h * 5.0 * t.heads * s / h;
  const double attention_bytes = 2 * s * h * (attention_units + 2) + score_bytes;
  const double mlp_bytes = 2 * s * h * (mlp_act_units + 2);
  const double layer_input_bytes = s * h * float_bytes;
  // one MLP: GELU 2 matrices (h f, f h), SwiGLU 3 (gate, up: h f; down: f h)
  auto mlp_params = [&](double f) {
    const double matrices = t.ffn == FfnKind::gelu ? 2 : 3;
    return matrices * h * f + (t.biases ? (matrices - 1) * f + h : 0);
  };
  auto mlp_flops = [&](double f) { return 2 * (t.ffn == FfnKind::gelu ? 2 : 3) * h * f; };  // per token
  for (int i = 0; i < t.layers; ++i) {
    const std::string n = "blocks." + std::to_string(i);
    Layer attention;
    attention.name = n + ".attention";
    attention.kind = LayerKind::attention;
    attention.params = attention_params;
    attention.forward_flops = attention_flops;
    attention.activation_bytes = attention_bytes;
    attention.score_bytes = score_bytes;
    attention.score_flops = s * 4 * s * q;
    attention.checkpoint_bytes = layer_input_bytes;
    // norm, Q K V GEMM, bias, 2 reshapes, Q K^T, scale and mask, softmax, dropout, weighted V, projection, bias with
    // dropout and residual add
    attention.kernels = 12;
    attention.tensor_parallel_values = s * h;  // Megatron allreduces the attention output
    m.layers.push_back(attention);
    if (!t.moe) {
      Layer mlp;
      mlp.name = n + ".mlp";
      mlp.kind = LayerKind::linear;
      mlp.params = mlp_params(t.ffn_hidden) + norm;
      mlp.forward_flops = s * mlp_flops(t.ffn_hidden);
      mlp.activation_bytes = mlp_bytes;
      mlp.checkpoint_bytes = layer_input_bytes;
      mlp.kernels = t.ffn == FfnKind::gelu ? 6 : 7;  // norm, GEMMs, GELU (or SiLU and product), dropout, residual add
      mlp.tensor_parallel_values = s * h;            // and the MLP output
      m.layers.push_back(mlp);
      continue;
    }
    // MoE (Shazeer et al. 2017; Mixtral, Jiang et al. 2024): a router h x E (no bias) picks top_k experts per token;
    // all experts' parameters, top_k experts' FLOPs per token.
    const double experts = t.moe->experts;
    Layer router;
    router.name = n + ".router";
    router.kind = LayerKind::moe_router;
    router.params = h * experts + norm;
    router.forward_flops = s * 2 * h * experts;
    router.activation_bytes = s * experts * float_bytes;
    m.layers.push_back(router);
    Layer ex;
    ex.name = n + ".experts";
    ex.kind = LayerKind::linear;
    ex.params = experts * mlp_params(t.moe->expert_ffn_hidden);
    ex.forward_flops = s * t.moe->top_k * t.moe->capacity_factor * mlp_flops(t.moe->expert_ffn_hidden);
    ex.activation_bytes = mlp_bytes - router.activation_bytes;
    ex.checkpoint_bytes = layer_input_bytes;
    ex.kernels = 4 + 4 * t.moe->top_k;  // permute and un-permute tokens, each chosen expert's MLP
    ex.tensor_parallel_values = s * h;  // each expert's matrices split as a dense MLP's are
    ex.experts = experts;
    ex.dispatch_values = s * t.moe->top_k * t.moe->capacity_factor * h;
    m.layers.push_back(ex);
  }

  Layer head;
  head.params = t.final_norm ? norm : 0;
  const std::string prefix = t.final_norm ? "final_norm+" : "";
  switch (t.head) {
    case TransformerHead::lm:  // every token's logits: 2 h V FLOPs per token
      head.name = prefix + "lm_head";
      head.kind = LayerKind::lm_head;
      head.params += t.tied_embeddings ? 0 : static_cast<double>(t.vocab) * h;
      head.forward_flops = s * 2 * h * t.vocab;
      head.activation_bytes = s * t.vocab * float_bytes;
      break;
    case TransformerHead::pooler:  // BERT: a dense h x h layer on the first token
      head.name = prefix + "pooler";
      head.kind = LayerKind::linear;
      head.params += h * h + h;
      head.forward_flops = 2 * h * h;
      head.activation_bytes = h * float_bytes;
      break;
    case TransformerHead::classifier:  // ViT: a dense h x classes layer on the class token
      head.name = prefix + "classifier";
      head.kind = LayerKind::linear;
      head.params += h * t.classes + t.classes;
      head.forward_flops = 2 * h * t.classes;
      head.activation_bytes = static_cast<double>(t.classes) * float_bytes;
      break;
    case TransformerHead::none:
      head.name = "final_norm";
      head.kind = LayerKind::norm;
      head.activation_bytes = s * h * float_bytes;
      break;
  }
  if (t.head != TransformerHead::none || t.final_norm) m.layers.push_back(head);
  return m;
}

}  // namespace dtsim
