#include "models/transformer.hpp"

#include <algorithm>
#include <cmath>

namespace dtsim {
namespace {

// The rows and keys of one tile of a fused attention kernel (FlashAttention-2 on A100 and H100 with 128-wide heads)
constexpr double flash_tile = 128;

constexpr double float_bytes = 4;

// A norm's tensors (LayerNorm: scale and shift; RMSNorm: scale), each hidden wide.
double norm_tensors(const TransformerSpec& t) { return t.norm == NormKind::layernorm ? 2.0 : 1.0; }
double norm_params(const TransformerSpec& t) { return norm_tensors(t) * t.hidden; }

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
double mlp_units(FfnKind ffn, double f, double h) { return ffn != FfnKind::swiglu ? 4 * f / h + 1 : 8 * f / h + 1; }

// H_n = 1 + 1/2 + ... + 1/n (n >= 1), by its asymptotic series past the first terms (error below 1e-12 there).
double harmonic(double n) {
  if (n < 1) return 0;
  if (n < 32) {
    double sum = 0;
    for (int i = 1; i <= static_cast<int>(n); ++i)
      sum += 1.0 / i;
    return sum;
  }
  constexpr double euler_gamma = 0.57721566490153286;
  return std::log(n) + euler_gamma + 1 / (2 * n) - 1 / (12 * n * n);
}

// One cluster of an adaptive input or softmax: its words [first, last), its embeddings' width and the share of the
// tokens it holds.
struct Cluster {
  double first = 0;
  double last = 0;
  double width = 0;
  double share = 0;
  double words() const { return last - first; }
};

std::vector<Cluster> clusters(const AdaptiveSpec& a, double vocab, double h) {
  std::vector<Cluster> out;
  double first = 0;
  double width = h;
  for (std::size_t i = 0; i <= a.cutoffs.size(); ++i) {
    const double last = i < a.cutoffs.size() ? a.cutoffs[i] : vocab;
    out.push_back({first, last, std::max(1.0, std::floor(width)), zipf_share(first, last, vocab)});
    first = last;
    width /= a.div_val;
  }
  return out;
}

}  // namespace

double zipf_share(double first, double last, double vocab) {
  if (vocab < 1 || last <= first) return 0;
  return (harmonic(std::min(last, vocab)) - harmonic(std::max(first, 0.0))) / harmonic(vocab);
}

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
    emb.param_tensors = 1 + (t.biases ? 1 : 0) + (p.class_token ? 1 : 0);
    emb.forward_flops = 2 * patch_in * h * patches;
    m.input =
        std::to_string(p.channels) + "x" + std::to_string(p.image_size) + "x" + std::to_string(p.image_size) + " image";
    m.input_bytes = patch_in * patches * float_bytes;
  } else {
    if (t.adaptive) {
      // adaptive input: each cluster's table (and with div_val > 1 its projection to hidden, 2 width h FLOPs per
      // token of it); the gathers counted as a table's s h
      for (const Cluster& c : clusters(*t.adaptive, t.vocab, h)) {
        emb.params += c.words() * c.width;
        emb.param_tensors += t.adaptive->div_val > 1 ? 2 : 1;
        if (t.adaptive->div_val > 1) {
          emb.params += c.width * h;
          emb.forward_flops += s * c.share * 2 * c.width * h;
        }
      }
      // per cluster: mask, select, gather, project, copy
      emb.kernels = 1 + 5.0 * (static_cast<double>(t.adaptive->cutoffs.size()) + 1);
    } else {
      emb.params = static_cast<double>(t.vocab) * h;
      emb.param_tensors = 1;
    }
    tables = 1;
    m.input = std::to_string(t.sequence) + " tokens";
    m.tokens_per_sample = t.sequence;
    m.input_bytes = s * float_bytes * (t.token_types > 0 ? 2 : 1);  // token ids (and segment ids)
  }
  if (learned) {
    emb.params += static_cast<double>(t.positions) * h;
    emb.param_tensors += 1;
    tables += 1;
  }
  if (t.token_types > 0) {
    emb.params += static_cast<double>(t.token_types) * h;
    emb.param_tensors += 1;
    tables += 1;
  }
  if (t.embedding_norm) {
    emb.params += norm;
    emb.param_tensors += norm_tensors(t);
    tables += 1;
  }
  emb.forward_flops += tables * s * h;
  m.layers.push_back(emb);

  // Blocks. Per token: Q, K, V and output projections 2 (h q + 2 h kv + q h); scores Q K^T and their weighted sum of
  // V 2 x 2 s q (Kaplan et al. 2020 Table 1, 2 n_ctx d_attn per token for each; causal masks not subtracted).
  // Transformer-XL: keys and values over the memory too (k = s + memory per query); its code projects the
  // concatenation of memory and segment, so Q, K and V are computed for all k tokens. Relative positions add a
  // projection of the k positions (h q parameters; once a step, not per sample: its FLOPs are left out) and the
  // position scores Q R^T (2 s k q).
  const bool relative = t.position == PositionKind::relative;
  const double k = s + t.memory;
  const double score_products = relative ? 6 : 4;
  const double attention_params =
      2 * h * q + 2 * h * kv + (relative ? h * q : 0) + (t.biases ? q + 2 * kv + h : 0) + norm;
  const double attention_flops = 2 * k * (h * q + 2 * h * kv) + 2 * s * q * h + score_products * s * k * q;
  double mlp_act_units = 0;
  const double attention_units = 2 + 4 * q / h + 4 * kv / h + 1;
  if (t.moe) {
    const double fe = t.moe->expert_ffn_hidden;
    mlp_act_units = 2 + t.moe->top_k * t.moe->capacity_factor * mlp_units(t.ffn, fe, h) + 2.0 * t.moe->experts / h;
  } else {
    mlp_act_units = 2 + mlp_units(t.ffn, t.ffn_hidden, h);
  }
  // fp32: 2 x the 16-bit bytes; each layer holds its own terms and one norm
  // (relative: the position scores and their shifted copy, 16-bit, go through memory before the sum: 7 a s k)
  const double score_bytes = 2 * (relative ? 7.0 : 5.0) * t.heads * s * k;
  // (the memory's tokens: the projections' input and their K and V kept as well)
  const double attention_bytes =
      2 * s * h * (attention_units + 2) + 2.0 * t.memory * h * (2 + 4 * kv / h) + score_bytes;
  const double mlp_bytes = 2 * s * h * (mlp_act_units + 2);
  const double layer_input_bytes = s * h * float_bytes;
  // one MLP: GELU 2 matrices (h f, f h), SwiGLU 3 (gate, up: h f; down: f h)
  auto mlp_params = [&](double f) {
    const double matrices = t.ffn != FfnKind::swiglu ? 2 : 3;
    return matrices * h * f + (t.biases ? (matrices - 1) * f + h : 0);
  };
  const double mlp_tensors = (t.ffn != FfnKind::swiglu ? 2 : 3) * (t.biases ? 2 : 1);  // matrices and their biases
  auto mlp_flops = [&](double f) { return 2 * (t.ffn != FfnKind::swiglu ? 2 : 3) * h * f; };  // per token
  for (int i = 0; i < t.layers; ++i) {
    const std::string n = "blocks." + std::to_string(i);
    Layer attention;
    attention.name = n + ".attention";
    attention.kind = LayerKind::attention;
    attention.params = attention_params;
    attention.param_tensors = 4 + (relative ? 1 : 0) + (t.biases ? 4 : 0) + norm_tensors(t);  // Q K V O (positions)
    attention.forward_flops = attention_flops;
    attention.activation_bytes = attention_bytes;
    attention.score_bytes = score_bytes;
    attention.score_flops = score_products * s * k * q;
    // causal: query tile j of B rows sees the memory and keys up to its own last row, so the key tiles past the
    // diagonal's are masked whole: s (s - B) / 2 of the s k scores (B = 128, FlashAttention-2's tile for 128-wide
    // heads; the diagonal tiles are computed and masked)
    if (t.decoder) attention.masked_score_flops = attention.score_flops * std::max(0.0, s - flash_tile) / (2 * k);
    attention.checkpoint_bytes = layer_input_bytes;
    // norm, Q K V GEMM, bias, 2 reshapes, Q K^T, scale and mask, softmax, dropout, weighted V, projection, bias with
    // dropout and residual add; relative positions: the memory's concatenation, the positions' GEMM, 2 bias adds, Q
    // R^T, its shift (pad, copy, slice) and the sum
    attention.kernels = relative ? 20 : 12;
    attention.tensor_parallel_values = s * h;  // Megatron allreduces the attention output
    attention.kv_values = 2 * k * kv;
    // per-op selective recomputation: products 1-4 of the block are Q, K, V and the output projection; K (over the k
    // tokens) and the output projection are the second and fourth
    attention.op_recompute_flops = 2 * k * h * kv + 2 * s * q * h;
    m.layers.push_back(attention);
    if (!t.moe) {
      Layer mlp;
      mlp.name = n + ".mlp";
      mlp.kind = LayerKind::linear;
      mlp.params = mlp_params(t.ffn_hidden) + norm;
      mlp.param_tensors = mlp_tensors + norm_tensors(t);
      mlp.forward_flops = s * mlp_flops(t.ffn_hidden);
      mlp.activation_bytes = mlp_bytes;
      mlp.checkpoint_bytes = layer_input_bytes;
      mlp.kernels = t.ffn != FfnKind::swiglu ? 6 : 7;  // norm, GEMMs, GELU (or SiLU and product), dropout, residual add
      mlp.tensor_parallel_values = s * h;              // and the MLP output
      // products 5-7 (SwiGLU: gate, up, down) or 5-6 (GELU: up, down): the sixth, one h x f product, again
      mlp.op_recompute_flops = 2 * s * h * t.ffn_hidden;
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
    router.param_tensors = 1 + norm_tensors(t);
    router.forward_flops = s * 2 * h * experts;
    router.activation_bytes = s * experts * float_bytes;
    m.layers.push_back(router);
    Layer ex;
    ex.name = n + ".experts";
    ex.kind = LayerKind::linear;
    ex.params = experts * mlp_params(t.moe->expert_ffn_hidden);
    ex.param_tensors = experts * mlp_tensors;
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
  head.param_tensors = t.final_norm ? norm_tensors(t) : 0;
  const std::string prefix = t.final_norm ? "final_norm+" : "";
  switch (t.head) {
    case TransformerHead::lm:  // every token's logits: 2 h V FLOPs per token
      head.name = prefix + "lm_head";
      head.kind = LayerKind::lm_head;
      if (t.adaptive) {  // the first cluster's logits for every token, a tail's for its tokens (their Zipf share)
        const std::vector<Cluster> cs = clusters(*t.adaptive, t.vocab, h);
        const double tails = static_cast<double>(cs.size()) - 1;
        const double head_logits = cs[0].words() + tails;    // the first cluster's words and a logit per tail
        head.params += t.vocab + tails * (cs[0].width + 1);  // the output biases, the tails' logit weights
        head.param_tensors += 3;
        for (std::size_t i = 0; i < cs.size(); ++i) {
          const Cluster& c = cs[i];
          const bool own = i == 0 || !t.tied_embeddings;  // Transformer-XL ties the tails' projections, not the head's
          if (!t.tied_embeddings) head.params += c.words() * c.width;
          if (t.adaptive->div_val > 1 && own) head.params += c.width * h;
          head.param_tensors += (t.tied_embeddings ? 0 : 1) + (t.adaptive->div_val > 1 && own ? 1 : 0);
          const double tokens = i == 0 ? s : s * c.share;
          const double logits = i == 0 ? head_logits : c.words();
          head.forward_flops += tokens * 2 * c.width * (logits + (t.adaptive->div_val > 1 ? h : 0));
          head.activation_bytes += tokens * logits * float_bytes;
        }
        head.kernels = 3 + 8 * tails;  // per tail: mask, nonzero, select, project, logits, log-softmax, gather, copy
        break;
      }
      head.params += t.tied_embeddings ? 0 : static_cast<double>(t.vocab) * h;
      head.param_tensors += t.tied_embeddings ? 0 : 1;
      head.forward_flops = s * 2 * h * t.vocab;
      head.activation_bytes = s * t.vocab * float_bytes;
      break;
    case TransformerHead::pooler:  // BERT: a dense h x h layer on the first token
      head.name = prefix + "pooler";
      head.kind = LayerKind::linear;
      head.params += h * h + h;
      head.param_tensors += 2;
      head.forward_flops = 2 * h * h;
      head.activation_bytes = h * float_bytes;
      break;
    case TransformerHead::classifier:  // ViT: a dense h x classes layer on the class token
      head.name = prefix + "classifier";
      head.kind = LayerKind::linear;
      head.params += h * t.classes + t.classes;
      head.param_tensors += 2;
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
