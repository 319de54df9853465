#include "models/model_zoo.hpp"

#include <array>
#include <numeric>

namespace dtsim {
namespace {

constexpr std::array<const char*, 12> kind_names{"conv",       "linear",  "attention",  "norm",
                                                 "activation", "pool",    "embedding",  "elementwise",
                                                 "softmax",    "lm_head", "moe_router", "other"};

}  // namespace

const char* to_string(LayerKind kind) { return kind_names.at(static_cast<std::size_t>(kind)); }

std::optional<LayerKind> layer_kind_from_string(std::string_view name) {
  for (std::size_t i = 0; i < kind_names.size(); ++i) {
    if (name == kind_names[i]) return static_cast<LayerKind>(i);
  }
  return std::nullopt;
}

std::string_view layer_kind_names() {
  return "conv|linear|attention|norm|activation|pool|embedding|elementwise|softmax|lm_head|moe_router|other";
}

double Model::params() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0, [](double s, const Layer& l) { return s + l.params; });
}
double Model::param_tensors() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const Layer& l) { return s + l.param_tensors; });
}
double Model::forward_flops() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const Layer& l) { return s + l.forward_flops; });
}
double Model::activation_bytes() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const Layer& l) { return s + l.activation_bytes; });
}

}  // namespace dtsim
