// CNNs and MLPs by their layer lists: each layer's shape (a convolution's output channels, kernel, stride, padding and
// groups; a pooling window; a fully connected layer's outputs) applied to the feature map it reads, so that the
// parameters, FLOPs and activations follow from the input size. A layer reads the previous layer's output, or named
// earlier layers' outputs (concatenated along channels): branches and residual shortcuts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/model_zoo.hpp"

namespace dtsim {

// A feature map: channels x height x width (a vector of n values: n x 1 x 1).
struct FeatureShape {
  int c = 0;
  int h = 1;
  int w = 1;
  double elements() const { return static_cast<double>(c) * h * w; }
};

enum class ListLayerType : std::uint8_t { conv, linear, pool, custom };

struct ListLayer {
  ListLayerType type = ListLayerType::conv;
  std::string name;
  std::vector<std::string> from;  // empty: the previous layer's output (the input for the first layer)
  int out = 0;                    // conv: output channels; linear: output features
  int kernel_h = 1;
  int kernel_w = 1;
  int stride = 1;
  int pad_h = 0;
  int pad_w = 0;
  int groups = 1;
  bool bias = true;
  bool batch_norm = false;  // conv: a batch norm after it (its scale and shift, its output kept)
  bool global = false;      // pool: over the whole feature map
  // custom: the layer's numbers as given (name is set from `name`), and its output shape (default: its input's)
  Layer custom;
  std::optional<FeatureShape> output;
};

struct LayerListSpec {
  std::string name;
  std::string source;
  std::string input_description;  // empty: "CxHxW values"
  FeatureShape input;
  std::vector<ListLayer> layers;
};

// A layer whose shape does not fit what it reads: which layer and which of its fields.
struct LayerListError : std::invalid_argument {
  LayerListError(std::size_t index, std::string key, const std::string& message)
      : std::invalid_argument(message), layer(index), field(std::move(key)) {}
  std::size_t layer;
  std::string field;
};

// Throws LayerListError for a duplicate name, an unknown `from`, maps of different sizes concatenated, channels that
// groups do not divide, or a window larger than its padded input.
Model layer_list_model(const LayerListSpec& spec);

}  // namespace dtsim
