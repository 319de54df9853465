#include "models/layer_list.hpp"

#include <map>

namespace dtsim {
namespace {

constexpr double fp32_bytes = 4;

int out_size(int in, int kernel, int stride, int pad) { return (in + 2 * pad - kernel) / stride + 1; }

std::string shape_text(const FeatureShape& s) {
  return std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}

}  // namespace

Model layer_list_model(const LayerListSpec& spec) {
  Model m;
  m.name = spec.name;
  m.source = spec.source;
  m.input = spec.input_description.empty() ? shape_text(spec.input) + " values" : spec.input_description;
  m.input_bytes = spec.input.elements() * fp32_bytes;
  std::map<std::string, FeatureShape, std::less<>> outputs;
  FeatureShape previous = spec.input;
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const ListLayer& l = spec.layers[i];
    auto fail = [i](const std::string& field, const std::string& message) { throw LayerListError(i, field, message); };
    if (outputs.contains(l.name)) fail("name", "a second layer named '" + l.name + "' (names must be unique)");
    FeatureShape in = previous;
    if (!l.from.empty()) {
      in = FeatureShape{0, 0, 0};
      for (const std::string& f : l.from) {
        const auto it = outputs.find(f);
        if (it == outputs.end()) fail("from", "no earlier layer is named '" + f + "'");
        if (in.c > 0 && (it->second.h != in.h || it->second.w != in.w)) {
          fail("from", "cannot concatenate '" + f + "' (" + shape_text(it->second) + ") with maps of " +
                           std::to_string(in.h) + "x" + std::to_string(in.w));
        }
        in = FeatureShape{in.c + it->second.c, it->second.h, it->second.w};
      }
    }
    Layer layer;
    layer.name = l.name;
    FeatureShape out = in;
    switch (l.type) {
      case ListLayerType::conv: {
        if (in.c % l.groups != 0 || l.out % l.groups != 0) {
          fail("groups", std::to_string(l.groups) + " groups do not divide " + std::to_string(in.c) + " input and " +
                             std::to_string(l.out) + " output channels");
        }
        out = FeatureShape{l.out, out_size(in.h, l.kernel_h, l.stride, l.pad_h),
                           out_size(in.w, l.kernel_w, l.stride, l.pad_w)};
        if (in.h + 2 * l.pad_h < l.kernel_h || in.w + 2 * l.pad_w < l.kernel_w) {
          fail("kernel", "a " + std::to_string(l.kernel_h) + "x" + std::to_string(l.kernel_w) +
                             " kernel is larger than its padded input " + shape_text(in));
        }
        const double weights = static_cast<double>(in.c / l.groups) * l.out * l.kernel_h * l.kernel_w;
        layer.kind = LayerKind::conv;
        layer.params = weights + (l.bias ? l.out : 0) + (l.batch_norm ? 2.0 * l.out : 0);
        layer.param_tensors = 1 + (l.bias ? 1 : 0) + (l.batch_norm ? 2 : 0);
        layer.forward_flops = 2.0 * weights * out.h * out.w;
        if (l.kernel_h == 3 && l.kernel_w == 3 && l.stride == 1 && l.groups == 1)
          layer.winograd_flops = layer.forward_flops;
        layer.activation_bytes = out.elements() * fp32_bytes * (l.batch_norm ? 2 : 1);  // conv (and BN) output
        layer.output_bytes = out.elements() * fp32_bytes;
        if (l.groups > 1) layer.channels_per_group = static_cast<double>(in.c / l.groups);
        layer.kernels = l.batch_norm ? 3 : 2;  // the convolution, its norm (or bias) and its activation
        break;
      }
      case ListLayerType::pool: {  // max or average: one operation per window element, no parameters
        const int kh = l.global ? in.h : l.kernel_h;
        const int kw = l.global ? in.w : l.kernel_w;
        const int stride = l.global ? 1 : l.stride;
        if (in.h + 2 * l.pad_h < kh || in.w + 2 * l.pad_w < kw) {
          fail("kernel", "a " + std::to_string(kh) + "x" + std::to_string(kw) + " window is larger than its padded " +
                             "input " + shape_text(in));
        }
        out = FeatureShape{in.c, out_size(in.h, kh, stride, l.pad_h), out_size(in.w, kw, stride, l.pad_w)};
        layer.kind = LayerKind::pool;
        layer.forward_flops = out.elements() * kh * kw;
        layer.activation_bytes = out.elements() * fp32_bytes;
        layer.backward_flop_factor = 1;
        break;
      }
      case ListLayerType::linear: {  // the input flattened
        const double n = in.elements();
        out = FeatureShape{l.out, 1, 1};
        layer.kind = LayerKind::linear;
        layer.params = n * l.out + (l.bias ? l.out : 0);
        layer.param_tensors = 1 + (l.bias ? 1 : 0);
        layer.forward_flops = 2.0 * n * l.out;
        layer.activation_bytes = static_cast<double>(l.out) * fp32_bytes;
        break;
      }
      case ListLayerType::custom: {
        layer = l.custom;
        layer.name = l.name;
        layer.param_tensors = layer.params > 0 ? 1 : 0;  // (a custom layer's parameters: taken as one tensor)
        if (l.output) out = *l.output;
        break;
      }
    }
    if (l.type != ListLayerType::custom) layer.checkpoint_bytes = in.elements() * fp32_bytes;
    outputs.emplace(l.name, out);
    previous = out;
    m.layers.push_back(std::move(layer));
  }
  return m;
}

}  // namespace dtsim
