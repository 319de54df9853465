#include "scenarios/model_file.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "models/layer_list.hpp"
#include "models/transformer.hpp"
#include "scenarios/builtin_files.hpp"
#include "scenarios/json_reader.hpp"

namespace dtsim {
namespace {

constexpr double max_size = 1 << 24;
constexpr long long max_sequence = 1 << 24;  // tokens per sample (the sequence field's range)
constexpr std::string_view kinds = "transformer|layers";

constexpr std::array<FieldSpec, 4> moe_fields{{
    ranged_field("experts", FieldType::integer, "", "expert MLPs per block (all hold parameters)", 2, 4096),
    ranged_field("top_k", FieldType::integer, "", "experts each token runs through (at most experts)", 1, 4096),
    ranged_field("expert_ffn_hidden", FieldType::integer, "ffn_hidden", "hidden width of each expert's MLP", 1,
                 max_size),
    ranged_field("capacity_factor", FieldType::number, "1",
                 "each expert's buffer over its even share of tokens x top_k (GShard, Switch: 1 to 2): above 1 "
                 "padded, below 1 tokens dropped; the experts' FLOPs, activations and all-to-alls scale with it; 1: "
                 "dropless and balanced",
                 0.05, 16),
}};

constexpr std::array<FieldSpec, 4> patch_fields{{
    ranged_field("image_size", FieldType::integer, "", "input images are image_size x image_size", 1, 65536),
    ranged_field("patch_size", FieldType::integer, "", "patches are patch_size x patch_size; divides image_size", 1,
                 65536),
    ranged_field("channels", FieldType::integer, "3", "image channels", 1, 4096),
    value_field("class_token", FieldType::boolean, "true", "a learned class token prepended to the patches"),
}};

constexpr std::array<FieldSpec, 2> adaptive_fields{{
    ranged_field("cutoffs", FieldType::integer_list, "",
                 "where the vocabulary (most frequent words first) is cut into clusters: increasing, each below vocab "
                 "(Transformer-XL on WikiText-103: [19997, 39997, 199997])",
                 1, 1 << 30),
    ranged_field("div_val", FieldType::integer, "1",
                 "cluster i's embeddings are hidden / div_val^i wide; above 1 each cluster is projected to hidden", 1,
                 65536),
}};

constexpr std::array<FieldSpec, 28> transformer_fields{{
    value_field("name", FieldType::text, "", "the model's name in reports"),
    value_field("source", FieldType::text, "unspecified", "where the architecture and the published totals come from"),
    choice_field("kind", "", "transformer: hyperparameters; layers: a layer list", kinds),
    choice_field("architecture", "decoder",
                 "decoder (causal) or encoder (bidirectional); the masking changes no FLOPs counted here",
                 "decoder|encoder"),
    ranged_field("layers", FieldType::integer, "", "transformer blocks", 1, 4096),
    ranged_field("hidden", FieldType::integer, "", "hidden size (d_model)", 1, max_size),
    ranged_field("heads", FieldType::integer, "", "attention (query) heads; divides hidden unless head_dim is given", 1,
                 65536),
    ranged_field("kv_heads", FieldType::integer, "heads",
                 "key/value heads: heads (multi-head), fewer (grouped-query, divides heads) or 1 (multi-query)", 1,
                 65536),
    ranged_field("head_dim", FieldType::integer, "hidden / heads", "width of each head", 1, max_size),
    ranged_field("ffn_hidden", FieldType::integer, "", "hidden width of the MLP (d_ff)", 1, max_size),
    choice_field("ffn", "gelu", "gelu or relu: two matrices (h x f, f x h); swiglu: three (gate, up, down)",
                 "gelu|relu|swiglu"),
    required_when(
        ranged_field("vocab", FieldType::integer, "", "vocabulary size (token embedding and LM head rows)", 1, 1 << 30),
        "there are no patches"),
    required_when(
        ranged_field("sequence", FieldType::integer, "", "tokens per sample, the length trained at", 1, max_sequence),
        "there are no patches"),
    ranged_field("memory", FieldType::integer, "0",
                 "Transformer-XL's recurrence: tokens of the previous segment each block's attention also reads (keys "
                 "and values over sequence + memory; Q, K and V projected over both, as its code does; no gradient "
                 "into them)",
                 0, max_sequence),
    ranged_field("positions", FieldType::integer, "sequence",
                 "rows of the learned position table (position learned), at least sequence", 1, 1 << 24),
    ranged_field("token_types", FieldType::integer, "0", "rows of a segment (token type) embedding, as BERT's 2", 0,
                 1 << 20),
    object_field("patches", false, "a vision transformer's input: image patches instead of tokens", patch_fields),
    value_field("tied_embeddings", FieldType::boolean, "false", "the LM head reuses the token embedding"),
    choice_field("norm", "layernorm", "layernorm (scale and shift: 2 h parameters) or rmsnorm (scale: h)",
                 "layernorm|rmsnorm"),
    choice_field("position", "learned",
                 "learned (a position table), rope, relative (Transformer-XL's: a projection of the positions per "
                 "block and a second score product Q R^T) or none",
                 "learned|rope|relative|none"),
    value_field("biases", FieldType::boolean, "true", "biases in the linear layers (GPT-2, BERT: true; Llama: false)"),
    value_field("embedding_norm", FieldType::boolean, "false", "a norm after the embeddings (BERT)"),
    value_field("final_norm", FieldType::boolean, "true", "a norm after the last block (pre-norm models)"),
    choice_field("head", "lm",
                 "lm: logits over the vocabulary for every token; pooler: BERT's h x h layer on the first token; "
                 "classifier: h x classes on the class token; none",
                 "lm|pooler|classifier|none"),
    required_when(ranged_field("classes", FieldType::integer, "", "classes of the classifier head", 1, 1 << 24),
                  "head is classifier"),
    object_field("moe", false, "mixture of experts: every block's MLP becomes experts picked by a router", moe_fields),
    object_field("adaptive", false,
                 "adaptive input and softmax (Transformer-XL): the vocabulary in clusters of narrower embeddings; a "
                 "tail cluster's logits computed only for its tokens, their share by Zipf's law (an estimate)",
                 adaptive_fields),
    value_field("description", FieldType::text, "(none)", "free text (e.g. what was left out)"),
}};

constexpr std::array<FieldSpec, 18> layer_fields{{
    choice_field("kind", "",
                 "conv (with optional batch norm), linear (fully connected, input flattened), pool (max or average), "
                 "custom (explicit numbers)",
                 "conv|linear|pool|custom"),
    value_field("name", FieldType::text, "KIND + index", "unique name; later layers read it with from"),
    value_field("from", FieldType::text, "the previous layer",
                "the layer(s) this one reads, comma-separated names concatenated along channels (branches, "
                "shortcuts); the first layer reads the input"),
    required_when(
        ranged_field("out", FieldType::integer, "", "conv: output channels; linear: output features", 1, max_size),
        "kind is conv or linear"),
    required_when(ranged_field("kernel", FieldType::integer_list, "",
                               "conv, pool: [k] or [kh, kw] (pool: not with global)", 1, 65536),
                  "kind is conv, or pool without global"),
    ranged_field("stride", FieldType::integer, "1", "conv, pool: stride", 1, 65536),
    ranged_field("padding", FieldType::integer_list, "[0]", "conv, pool: [p] or [ph, pw] on each side", 0, 65536),
    ranged_field("groups", FieldType::integer, "1", "conv: groups (divides input and output channels)", 1, max_size),
    value_field("bias", FieldType::boolean, "not batch_norm", "conv, linear: a bias per output"),
    value_field("batch_norm", FieldType::boolean, "false",
                "conv: a batch norm after it (2 parameters per channel; its output kept too)"),
    value_field("global", FieldType::boolean, "false", "pool: over the whole feature map"),
    required_when(ranged_field("params", FieldType::number, "", "custom: trainable parameters", 0, 1e15),
                  "kind is custom"),
    required_when(ranged_field("forward_flops", FieldType::number, "",
                               "custom: forward FLOPs per sample (a multiply-add counts 2)", 0, 1e18),
                  "kind is custom"),
    required_when(ranged_field("activation_bytes", FieldType::number, "",
                               "custom: bytes per sample kept for backward (fp32)", 0, 1e15),
                  "kind is custom"),
    ranged_field("backward_flop_factor", FieldType::number, "2", "custom: backward FLOPs / forward FLOPs", 0, 100),
    ranged_field("tensor_parallel_values", FieldType::number, "0",
                 "custom: values per sample Megatron tensor parallelism allreduces after it (0: not split)", 0, 1e15),
    choice_field("compute", "other", "custom: what the layer computes (for costing its kernels)",
                 "conv|linear|attention|norm|activation|pool|embedding|elementwise|softmax|lm_head|moe_router|other"),
    ranged_field("output", FieldType::integer_list, "its input's shape",
                 "custom: its output, [channels, height, width] or [features]", 1, 1 << 24),
}};

constexpr std::array<FieldSpec, 7> list_fields{{
    value_field("name", FieldType::text, "", "the model's name in reports"),
    value_field("source", FieldType::text, "unspecified", "where the architecture and the published totals come from"),
    choice_field("kind", "", "transformer: hyperparameters; layers: a layer list", kinds),
    ranged_field("input", FieldType::integer_list, "", "one sample: [channels, height, width] or [features]", 1,
                 1 << 24),
    value_field("input_description", FieldType::text, "CxHxW values", "the input in words, e.g. \"3x224x224 image\""),
    object_list_field("layers", "the layers in order (at least one)", layer_fields),
    value_field("description", FieldType::text, "(none)", "free text (e.g. what was left out)"),
}};

// The layer kinds' own fields beyond kind, name and from: any other is refused.
std::vector<std::string_view> layer_keys(std::string_view kind) {
  if (kind == "conv") return {"out", "kernel", "stride", "padding", "groups", "bias", "batch_norm"};
  if (kind == "linear") return {"out", "bias"};
  if (kind == "pool") return {"kernel", "stride", "padding", "global"};
  return {"params",  "forward_flops", "activation_bytes", "backward_flop_factor", "tensor_parallel_values",
          "compute", "output"};
}

std::string kind_text(const nlohmann::json& value, const std::string& path) {
  const std::string where = path + ".kind";
  if (!value.is_object()) throw ScenarioError(path + ": expected an object, got " + value.dump().substr(0, 60));
  const auto it = value.find("kind");
  if (it == value.end()) throw ScenarioError(where + ": missing; expected \"transformer\" or \"layers\"");
  if (!it->is_string() || (*it != "transformer" && *it != "layers")) {
    throw ScenarioError(where + ": expected \"transformer\" or \"layers\", got " + it->dump().substr(0, 60));
  }
  return it->get<std::string>();
}

int to_int(long long v) { return static_cast<int>(v); }

void only_with(const JsonObject& o, std::string_view key, bool allowed, const std::string& when) {
  if (!allowed && o.has(key)) throw ScenarioError(o.path_of(key) + ": only " + when);
}

Model read_transformer(const JsonObject& o) {
  TransformerSpec t;
  t.name = o.text("name");
  if (t.name.empty()) throw ScenarioError(o.path_of("name") + ": expected a non-empty string");
  t.source = o.text("source");
  t.decoder = o.choice("architecture") == "decoder";
  t.layers = to_int(o.integer("layers"));
  t.hidden = to_int(o.integer("hidden"));
  t.heads = to_int(o.integer("heads"));
  if (o.has("head_dim")) {
    t.head_dim = to_int(o.integer("head_dim"));
  } else {
    if (t.hidden % t.heads != 0) {
      throw ScenarioError(o.path_of("heads") + ": expected a divisor of hidden = " + std::to_string(t.hidden) +
                          " (or give head_dim), got " + std::to_string(t.heads));
    }
    t.head_dim = t.hidden / t.heads;
  }
  t.kv_heads = o.has("kv_heads") ? to_int(o.integer("kv_heads")) : t.heads;
  if (t.heads % t.kv_heads != 0) {
    throw ScenarioError(o.path_of("kv_heads") + ": expected a divisor of heads = " + std::to_string(t.heads) +
                        " (each key/value head serves a group of query heads), got " + std::to_string(t.kv_heads));
  }
  t.ffn_hidden = to_int(o.integer("ffn_hidden"));
  const std::string ffn = o.choice("ffn");
  t.ffn = ffn == "gelu" ? FfnKind::gelu : ffn == "relu" ? FfnKind::relu : FfnKind::swiglu;
  const std::string norm = o.choice("norm");
  t.norm = norm == "layernorm" ? NormKind::layernorm : NormKind::rmsnorm;
  const std::string position = o.choice("position");
  t.position = position == "learned"    ? PositionKind::learned
               : position == "rope"     ? PositionKind::rope
               : position == "relative" ? PositionKind::relative
                                        : PositionKind::none;
  t.biases = o.boolean("biases");
  t.embedding_norm = o.boolean("embedding_norm");
  t.final_norm = o.boolean("final_norm");
  t.tied_embeddings = o.boolean("tied_embeddings");
  const std::string head = o.choice("head");
  t.head = head == "lm"           ? TransformerHead::lm
           : head == "pooler"     ? TransformerHead::pooler
           : head == "classifier" ? TransformerHead::classifier
                                  : TransformerHead::none;
  only_with(o, "classes", t.head == TransformerHead::classifier, "with head \"classifier\"");
  if (t.head == TransformerHead::classifier) t.classes = to_int(o.integer("classes"));
  only_with(o, "tied_embeddings", t.head == TransformerHead::lm, "with head \"lm\" (the head that reuses them)");
  if (o.has("patches")) {
    const JsonObject p = o.object("patches");
    PatchSpec patches;
    patches.image_size = to_int(p.integer("image_size"));
    patches.patch_size = to_int(p.integer("patch_size"));
    patches.channels = to_int(p.integer("channels"));
    patches.class_token = p.boolean("class_token");
    if (patches.image_size % patches.patch_size != 0) {
      throw ScenarioError(p.path_of("patch_size") + ": expected a divisor of image_size = " +
                          std::to_string(patches.image_size) + ", got " + std::to_string(patches.patch_size));
    }
    if (patches.tokens() > max_sequence) {  // as many tokens as a sequence may have
      throw ScenarioError(p.path_of("patch_size") + ": (image_size / patch_size)^2 patches must be at most " +
                          std::to_string(max_sequence) + " tokens, as a sequence; image_size " +
                          std::to_string(patches.image_size) + " and patch_size " + std::to_string(patches.patch_size) +
                          " make " + std::to_string(patches.tokens()));
    }
    const std::string why = "without patches (the patches make " + std::to_string(patches.tokens()) + " tokens)";
    only_with(o, "vocab", false, why);
    only_with(o, "sequence", false, why);
    only_with(o, "token_types", false, "without patches");
    if (t.head == TransformerHead::lm) {
      throw ScenarioError(o.path_of("head") + ": expected \"pooler\", \"classifier\" or \"none\" with patches (no " +
                          "vocabulary for \"lm\"), got \"lm\"");
    }
    t.patches = patches;
    t.sequence = static_cast<int>(patches.tokens());
  } else {
    t.vocab = to_int(o.integer("vocab"));
    t.sequence = to_int(o.integer("sequence"));
    t.token_types = to_int(o.integer("token_types"));
  }
  only_with(o, "positions", t.position == PositionKind::learned, "with position \"learned\"");
  if (t.position == PositionKind::learned) {
    t.positions = o.has("positions") ? to_int(o.integer("positions")) : t.sequence;
    if (t.positions < t.sequence) {
      throw ScenarioError(o.path_of("positions") + ": expected at least sequence = " + std::to_string(t.sequence) +
                          " rows, got " + std::to_string(t.positions));
    }
  }
  if (o.has("moe")) {
    const JsonObject m = o.object("moe");
    MoeSpec moe;
    moe.experts = to_int(m.integer("experts"));
    moe.top_k = to_int(m.integer("top_k"));
    moe.expert_ffn_hidden = m.has("expert_ffn_hidden") ? to_int(m.integer("expert_ffn_hidden")) : t.ffn_hidden;
    moe.capacity_factor = m.number("capacity_factor");
    if (moe.top_k > moe.experts) {
      throw ScenarioError(m.path_of("top_k") + ": expected at most experts = " + std::to_string(moe.experts) +
                          ", got " + std::to_string(moe.top_k));
    }
    t.moe = moe;
  }
  t.memory = to_int(o.integer("memory"));
  if (o.has("adaptive")) {
    const JsonObject a = o.object("adaptive");
    only_with(o, "adaptive", !t.patches, "without patches (it clusters a vocabulary)");
    AdaptiveSpec adaptive;
    adaptive.div_val = to_int(a.integer("div_val"));
    long long previous = 0;
    for (const long long cutoff : a.integer_list("cutoffs")) {
      if (cutoff <= previous || cutoff >= t.vocab) {
        throw ScenarioError(a.path_of("cutoffs") +
                            ": expected increasing values each below vocab = " + std::to_string(t.vocab) + ", got " +
                            std::to_string(cutoff) + " after " + std::to_string(previous));
      }
      adaptive.cutoffs.push_back(to_int(cutoff));
      previous = cutoff;
    }
    if (adaptive.cutoffs.empty()) throw ScenarioError(a.path_of("cutoffs") + ": expected at least one cutoff, got []");
    t.adaptive = adaptive;
  }
  return transformer_model(t);
}

FeatureShape read_shape(const JsonObject& o, std::string_view key) {
  const std::vector<long long> v = o.integer_list(key);
  if (v.size() == 1) return FeatureShape{to_int(v[0]), 1, 1};
  if (v.size() == 3) return FeatureShape{to_int(v[0]), to_int(v[1]), to_int(v[2])};
  throw ScenarioError(o.path_of(key) + ": expected [channels, height, width] or [features], got " +
                      std::to_string(v.size()) + " entries");
}

// [k] or [kh, kw]
std::pair<int, int> read_pair(const JsonObject& o, std::string_view key) {
  const std::vector<long long> v = o.integer_list(key);
  if (v.size() > 2) {
    throw ScenarioError(o.path_of(key) + ": expected [n] or [height, width], got " + std::to_string(v.size()) +
                        " entries");
  }
  return {to_int(v[0]), to_int(v.size() == 2 ? v[1] : v[0])};
}

ListLayer read_layer(const JsonObject& l, std::size_t index) {
  ListLayer layer;
  const std::string kind = l.choice("kind");
  const std::vector<std::string_view> own = layer_keys(kind);
  for (const FieldSpec& f : layer_fields) {
    if (f.key == "kind" || f.key == "name" || f.key == "from") continue;
    if (std::find(own.begin(), own.end(), f.key) == own.end() && l.has(f.key)) {
      throw ScenarioError(l.path_of(f.key) + ": not for a " + kind + " layer");
    }
  }
  layer.name = l.has("name") ? l.text("name") : kind + std::to_string(index);
  // (a layer's name is what another layer's "from" lists, comma-separated)
  if (layer.name.empty() || layer.name.find(',') != std::string::npos)
    throw ScenarioError(l.path_of("name") + ": expected a non-empty name without commas, got \"" + layer.name + "\"");
  if (l.has("from")) {
    const std::string from = l.text("from");
    std::size_t start = 0;
    while (start <= from.size()) {
      const std::size_t comma = from.find(',', start);
      layer.from.push_back(from.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (kind == "conv" || kind == "pool") {
    layer.stride = to_int(l.integer("stride"));
    std::tie(layer.pad_h, layer.pad_w) = read_pair(l, "padding");
  }
  if (kind == "conv") {
    layer.type = ListLayerType::conv;
    layer.out = to_int(l.integer("out"));
    std::tie(layer.kernel_h, layer.kernel_w) = read_pair(l, "kernel");
    layer.groups = to_int(l.integer("groups"));
    layer.batch_norm = l.boolean("batch_norm");
    layer.bias = l.has("bias") ? l.boolean("bias") : !layer.batch_norm;
  } else if (kind == "linear") {
    layer.type = ListLayerType::linear;
    layer.out = to_int(l.integer("out"));
    layer.bias = l.has("bias") ? l.boolean("bias") : true;
  } else if (kind == "pool") {
    layer.type = ListLayerType::pool;
    layer.global = l.boolean("global");
    if (layer.global) {
      only_with(l, "kernel", false, "without global (a global pool's window is its input)");
      only_with(l, "stride", false, "without global");
    } else {
      std::tie(layer.kernel_h, layer.kernel_w) = read_pair(l, "kernel");
    }
  } else {
    layer.type = ListLayerType::custom;
    layer.custom.params = l.number("params");
    layer.custom.forward_flops = l.number("forward_flops");
    layer.custom.activation_bytes = l.number("activation_bytes");
    layer.custom.backward_flop_factor = l.number("backward_flop_factor");
    layer.custom.tensor_parallel_values = l.number("tensor_parallel_values");
    layer.custom.kind = *layer_kind_from_string(l.choice("compute"));
    if (l.has("output")) layer.output = read_shape(l, "output");
  }
  return layer;
}

Model read_layer_list(const JsonObject& o) {
  LayerListSpec spec;
  spec.name = o.text("name");
  if (spec.name.empty()) throw ScenarioError(o.path_of("name") + ": expected a non-empty string");
  spec.source = o.text("source");
  spec.input = read_shape(o, "input");
  if (o.has("input_description")) spec.input_description = o.text("input_description");
  const std::vector<JsonObject> layers = o.objects("layers");
  if (layers.empty()) throw ScenarioError(o.path_of("layers") + ": expected at least one layer, got none");
  for (std::size_t i = 0; i < layers.size(); ++i)
    spec.layers.push_back(read_layer(layers[i], i));
  try {
    return layer_list_model(spec);
  } catch (const LayerListError& e) {
    throw ScenarioError(layers.at(e.layer).path_of(e.field) + ": " + e.what());
  }
}

constexpr std::array<FieldSpec, 1> model_document_fields{{
    value_field("model", FieldType::name_or_object, "", "the model (transformer or layers)"),
}};

}  // namespace

Model parse_model(const nlohmann::json& value, const std::string& path) {
  if (kind_text(value, path) == "transformer") return read_transformer(JsonObject(value, path, transformer_fields));
  return read_layer_list(JsonObject(value, path, list_fields));
}

Model parse_model_document(const nlohmann::json& document) {
  const JsonObject root(document, "", model_document_fields);
  const nlohmann::json& model = root.name_or_object("model");
  if (!model.is_object()) throw ScenarioError("model: expected an object, got " + model.dump().substr(0, 60));
  return parse_model(model, "model");
}

Model load_model_file(const std::string& path) {
  return parse_json_file(path, [](const nlohmann::json& document) { return parse_model_document(document); });
}

std::string builtin_models(const std::string& data_dir) { return builtin_list(data_dir, "models"); }

Model load_named_model(const std::string& name, const std::string& base_dir, const std::string& data_dir) {
  std::filesystem::path file;
  if (names_a_path(name)) {
    file = path_from(name, base_dir);
  } else {
    file = builtin_dir(data_dir, "models") / (name + ".json");
    std::error_code ec;
    if (name.empty() || !std::filesystem::is_regular_file(file, ec)) {
      throw ScenarioError("unknown model '" + name + "' (built-in: " + builtin_models(data_dir) +
                          "; or a path to a .json model file)");
    }
  }
  return load_model_file(file.string());
}

std::string model_fields_markdown() {
  return fields_markdown("model (kind \"transformer\")", transformer_fields) + "\n" +
         fields_markdown("model (kind \"layers\")", list_fields);
}

}  // namespace dtsim
