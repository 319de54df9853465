#include "models/measured_profile.hpp"

namespace dtsim {

double MeasuredProfile::forward_s() const {
  double s = 0;
  for (const MeasuredLayer& l : layers)
    s += l.forward_s;
  return s;
}

double MeasuredProfile::backward_s() const {
  double s = 0;
  for (const MeasuredLayer& l : layers)
    s += l.backward_s;
  return s;
}

double MeasuredProfile::step_s() const { return forward_s() + backward_s() + optimizer_s + overhead_s; }

Model model_of(const MeasuredProfile& profile) {
  Model model;
  model.name = "profile " + profile.source;
  model.source = profile.source;
  model.input = "as profiled";
  for (const MeasuredLayer& m : profile.layers) {
    Layer layer;
    layer.name = m.name;
    layer.params = m.params;
    layer.kind = LayerKind::other;
    model.layers.push_back(layer);
  }
  return model;
}

}  // namespace dtsim
