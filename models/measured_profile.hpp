// A training step measured on one device: what `dtsim import-profile` reads from a torch.profiler trace or a CSV of
// per-layer times (scenarios/profile_file.hpp), and what `predict` costs compute with instead of the device model.
#pragma once

#include <string>
#include <vector>

#include "models/model_zoo.hpp"

namespace dtsim {

struct MeasuredLayer {
  std::string name;
  double params = 0;      // trainable parameters the layer owns
  double forward_s = 0;   // its forward at the profile's batch
  double backward_s = 0;  // from the instant its output's gradient was ready to the next layer's
};

struct MeasuredProfile {
  std::string source;                    // the file it was read from
  int batch = 0;                         // samples per step on the device
  int steps = 0;                         // steps measured; each time is the median over them
  std::vector<MeasuredLayer> layers;     // forward order
  std::vector<std::size_t> ready_order;  // layers in the order backward reached them (their gradients ready)
  double optimizer_s = 0;                // the optimizer's step
  double overhead_s = 0;                 // the rest of the step: zero_grad, the loss, ops outside every layer, Python
  double step_s() const;                 // everything: forward, backward, optimizer and overhead
  double forward_s() const;
  double backward_s() const;
};

// The profile's network as a Model: its layers with their parameters (kind other, no FLOPs or activations: the
// profile's times stand for them).
Model model_of(const MeasuredProfile& profile);

}  // namespace dtsim
