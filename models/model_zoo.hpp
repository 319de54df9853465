// The model zoo: networks as data, layer by layer. Each layer has its parameter count, its forward FLOPs per sample
// (2 per multiply-add) and the activation bytes per sample it keeps for the backward pass. The layer lists are
// generated from each architecture's published shapes (models/model_zoo.cpp says which paper or implementation), so
// the totals can be checked against the published parameter counts and multiply-add counts.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim {

struct Layer {
  std::string name;
  double params = 0;                // trainable parameters
  double forward_flops = 0;         // per sample (a multiply-add counts 2)
  double activation_bytes = 0;      // per sample, kept for backward (fp32)
  double backward_flop_factor = 2;  // backward FLOPs = this x forward (input and weight gradients)
  // Transformer layers (attention, MLP): the values per sample of the output that Megatron-style tensor parallelism
  // allreduces (sequence x hidden); 0 for layers tensor parallelism does not split.
  double tensor_parallel_values = 0;
};

struct Model {
  std::string name;
  std::string source;      // architecture reference
  std::string input;       // e.g. "3x224x224 image"
  double input_bytes = 0;  // one decoded sample as the first layer reads it (fp32)
  std::vector<Layer> layers;

  double params() const;
  double forward_flops() const;
  double activation_bytes() const;
};

// The zoo: mlp-784-95-10, alexnet, vgg16, resnet50, inception-v3, bert-large, gpt2-xl.
std::span<const Model> model_zoo();
// Throws std::invalid_argument listing the zoo when the name is unknown.
const Model& find_model(std::string_view name);
std::string model_names();

}  // namespace dtsim
