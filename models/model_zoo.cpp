#include "models/model_zoo.hpp"

#include <numeric>
#include <stdexcept>

namespace dtsim {

double Model::params() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0, [](double s, const Layer& l) { return s + l.params; });
}
double Model::forward_flops() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const Layer& l) { return s + l.forward_flops; });
}
double Model::activation_bytes() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const Layer& l) { return s + l.activation_bytes; });
}

namespace {

constexpr double float_bytes = 4;

// A feature map: channels x height x width.
struct Shape {
  int c = 0;
  int h = 0;
  int w = 0;
  double elements() const { return static_cast<double>(c) * h * w; }
};

int out_size(int in, int kernel, int stride, int pad) { return (in + 2 * pad - kernel) / stride + 1; }

// Appends layers to a model while tracking shapes, so that branches can start from any earlier shape.
class CnnBuilder {
public:
  explicit CnnBuilder(Model& model) : model_(model) {}

  // Convolution (bias or batch norm after it) from `in`; returns the output shape.
  Shape conv(const std::string& name, Shape in, int out_channels, int kh, int kw, int stride, int ph, int pw,
             bool batch_norm) {
    const Shape out{out_channels, out_size(in.h, kh, stride, ph), out_size(in.w, kw, stride, pw)};
    const double weights = static_cast<double>(in.c) * out_channels * kh * kw;
    Layer l;
    l.name = name;
    l.params = weights + (batch_norm ? 2.0 * out_channels : static_cast<double>(out_channels));
    l.forward_flops = 2.0 * weights * out.h * out.w;
    l.activation_bytes = out.elements() * float_bytes * (batch_norm ? 2 : 1);  // conv output (and BN output)
    model_.layers.push_back(l);
    return out;
  }
  Shape conv(const std::string& name, Shape in, int out_channels, int k, int stride, int pad, bool batch_norm) {
    return conv(name, in, out_channels, k, k, stride, pad, pad, batch_norm);
  }
  // Max or average pooling: no parameters, one operation per window element.
  Shape pool(const std::string& name, Shape in, int k, int stride, int pad) {
    const Shape out{in.c, out_size(in.h, k, stride, pad), out_size(in.w, k, stride, pad)};
    Layer l;
    l.name = name;
    l.forward_flops = out.elements() * k * k;
    l.activation_bytes = out.elements() * float_bytes;
    l.backward_flop_factor = 1;
    model_.layers.push_back(l);
    return out;
  }
  // Fully connected layer with bias.
  int fc(const std::string& name, int in, int out) {
    Layer l;
    l.name = name;
    l.params = static_cast<double>(in) * out + out;
    l.forward_flops = 2.0 * in * out;
    l.activation_bytes = static_cast<double>(out) * float_bytes;
    model_.layers.push_back(l);
    return out;
  }

private:
  Model& model_;
};

Model mlp() {
  Model m{"mlp-784-95-10",
          "a 784-95-10 perceptron for 28x28 images (Fashion-MNIST), ReLU hidden layer",
          "784 pixels",
          784 * float_bytes,
          {}};
  CnnBuilder b(m);
  b.fc("fc1", 784, 95);
  b.fc("fc2", 95, 10);
  return m;
}

Model alexnet() {
  Model m{"alexnet",
          "Krizhevsky et al. 2012 as in torchvision (single-tower, 64-192-384-256-256 filters): 61.1M parameters, "
          "0.71 GMACs",
          "3x224x224 image",
          3 * 224 * 224 * float_bytes,
          {}};
  CnnBuilder b(m);
  Shape s{3, 224, 224};
  s = b.conv("conv1", s, 64, 11, 4, 2, false);
  s = b.pool("pool1", s, 3, 2, 0);
  s = b.conv("conv2", s, 192, 5, 1, 2, false);
  s = b.pool("pool2", s, 3, 2, 0);
  s = b.conv("conv3", s, 384, 3, 1, 1, false);
  s = b.conv("conv4", s, 256, 3, 1, 1, false);
  s = b.conv("conv5", s, 256, 3, 1, 1, false);
  s = b.pool("pool5", s, 3, 2, 0);
  b.fc("fc6", static_cast<int>(s.elements()), 4096);
  b.fc("fc7", 4096, 4096);
  b.fc("fc8", 4096, 1000);
  return m;
}

Model vgg16() {
  Model m{"vgg16",
          "Simonyan and Zisserman 2015, configuration D: 138.4M parameters, 15.5 GMACs",
          "3x224x224 image",
          3 * 224 * 224 * float_bytes,
          {}};
  CnnBuilder b(m);
  Shape s{3, 224, 224};
  const int blocks[5][2] = {{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}};
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < blocks[i][1]; ++j) {
      s = b.conv("conv" + std::to_string(i + 1) + "_" + std::to_string(j + 1), s, blocks[i][0], 3, 1, 1, false);
    }
    s = b.pool("pool" + std::to_string(i + 1), s, 2, 2, 0);
  }
  b.fc("fc6", static_cast<int>(s.elements()), 4096);
  b.fc("fc7", 4096, 4096);
  b.fc("fc8", 4096, 1000);
  return m;
}

Model resnet50() {
  Model m{"resnet50",
          "He et al. 2016, ResNet-50 v1.5 as in torchvision (stride in the 3x3 convolution): 25.6M parameters, "
          "4.1 GMACs",
          "3x224x224 image",
          3 * 224 * 224 * float_bytes,
          {}};
  CnnBuilder b(m);
  Shape s{3, 224, 224};
  s = b.conv("conv1", s, 64, 7, 2, 3, true);
  s = b.pool("maxpool", s, 3, 2, 1);
  const int widths[4] = {64, 128, 256, 512};
  const int depth[4] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < depth[stage]; ++block) {
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      const int stride = (block == 0 && stage > 0) ? 2 : 1;
      const Shape in = s;
      Shape x = b.conv(name + ".conv1", in, widths[stage], 1, 1, 0, true);
      x = b.conv(name + ".conv2", x, widths[stage], 3, stride, 1, true);
      x = b.conv(name + ".conv3", x, 4 * widths[stage], 1, 1, 0, true);
      if (block == 0) b.conv(name + ".downsample", in, 4 * widths[stage], 1, stride, 0, true);
      s = x;
    }
  }
  b.pool("avgpool", s, s.h, 1, 0);
  b.fc("fc", 2048, 1000);
  return m;
}

// Inception-v3 as in torchvision (Szegedy et al. 2016), without the auxiliary classifier: 23.8M parameters, 5.7 GMACs.
Model inception_v3() {
  Model m{"inception-v3",
          "Szegedy et al. 2016 as in torchvision, without the auxiliary classifier: 23.8M parameters, 5.7 GMACs",
          "3x299x299 image",
          3 * 299 * 299 * float_bytes,
          {}};
  CnnBuilder b(m);
  auto conv = [&](const std::string& name, Shape in, int out, int kh, int kw, int stride, int ph, int pw) {
    return b.conv(name, in, out, kh, kw, stride, ph, pw, true);
  };
  Shape s{3, 299, 299};
  s = conv("Conv2d_1a_3x3", s, 32, 3, 3, 2, 0, 0);
  s = conv("Conv2d_2a_3x3", s, 32, 3, 3, 1, 0, 0);
  s = conv("Conv2d_2b_3x3", s, 64, 3, 3, 1, 1, 1);
  s = b.pool("maxpool1", s, 3, 2, 0);
  s = conv("Conv2d_3b_1x1", s, 80, 1, 1, 1, 0, 0);
  s = conv("Conv2d_4a_3x3", s, 192, 3, 3, 1, 0, 0);
  s = b.pool("maxpool2", s, 3, 2, 0);
  auto inception_a = [&](const std::string& n, Shape in, int pool_features) {
    conv(n + ".branch1x1", in, 64, 1, 1, 1, 0, 0);
    conv(n + ".branch5x5_2", conv(n + ".branch5x5_1", in, 48, 1, 1, 1, 0, 0), 64, 5, 5, 1, 2, 2);
    Shape d = conv(n + ".branch3x3dbl_1", in, 64, 1, 1, 1, 0, 0);
    d = conv(n + ".branch3x3dbl_2", d, 96, 3, 3, 1, 1, 1);
    conv(n + ".branch3x3dbl_3", d, 96, 3, 3, 1, 1, 1);
    conv(n + ".branch_pool", b.pool(n + ".avgpool", in, 3, 1, 1), pool_features, 1, 1, 1, 0, 0);
    return Shape{64 + 64 + 96 + pool_features, in.h, in.w};
  };
  s = inception_a("Mixed_5b", s, 32);
  s = inception_a("Mixed_5c", s, 64);
  s = inception_a("Mixed_5d", s, 64);
  {  // InceptionB
    const Shape in = s;
    const Shape a = conv("Mixed_6a.branch3x3", in, 384, 3, 3, 2, 0, 0);
    Shape d = conv("Mixed_6a.branch3x3dbl_1", in, 64, 1, 1, 1, 0, 0);
    d = conv("Mixed_6a.branch3x3dbl_2", d, 96, 3, 3, 1, 1, 1);
    conv("Mixed_6a.branch3x3dbl_3", d, 96, 3, 3, 2, 0, 0);
    b.pool("Mixed_6a.maxpool", in, 3, 2, 0);
    s = Shape{384 + 96 + in.c, a.h, a.w};
  }
  auto inception_c = [&](const std::string& n, Shape in, int c7) {
    conv(n + ".branch1x1", in, 192, 1, 1, 1, 0, 0);
    Shape x = conv(n + ".branch7x7_1", in, c7, 1, 1, 1, 0, 0);
    x = conv(n + ".branch7x7_2", x, c7, 1, 7, 1, 0, 3);
    conv(n + ".branch7x7_3", x, 192, 7, 1, 1, 3, 0);
    Shape d = conv(n + ".branch7x7dbl_1", in, c7, 1, 1, 1, 0, 0);
    d = conv(n + ".branch7x7dbl_2", d, c7, 7, 1, 1, 3, 0);
    d = conv(n + ".branch7x7dbl_3", d, c7, 1, 7, 1, 0, 3);
    d = conv(n + ".branch7x7dbl_4", d, c7, 7, 1, 1, 3, 0);
    conv(n + ".branch7x7dbl_5", d, 192, 1, 7, 1, 0, 3);
    conv(n + ".branch_pool", b.pool(n + ".avgpool", in, 3, 1, 1), 192, 1, 1, 1, 0, 0);
    return Shape{768, in.h, in.w};
  };
  s = inception_c("Mixed_6b", s, 128);
  s = inception_c("Mixed_6c", s, 160);
  s = inception_c("Mixed_6d", s, 160);
  s = inception_c("Mixed_6e", s, 192);
  {  // InceptionD
    const Shape in = s;
    const Shape a =
        conv("Mixed_7a.branch3x3_2", conv("Mixed_7a.branch3x3_1", in, 192, 1, 1, 1, 0, 0), 320, 3, 3, 2, 0, 0);
    Shape x = conv("Mixed_7a.branch7x7x3_1", in, 192, 1, 1, 1, 0, 0);
    x = conv("Mixed_7a.branch7x7x3_2", x, 192, 1, 7, 1, 0, 3);
    x = conv("Mixed_7a.branch7x7x3_3", x, 192, 7, 1, 1, 3, 0);
    conv("Mixed_7a.branch7x7x3_4", x, 192, 3, 3, 2, 0, 0);
    b.pool("Mixed_7a.maxpool", in, 3, 2, 0);
    s = Shape{320 + 192 + in.c, a.h, a.w};
  }
  auto inception_e = [&](const std::string& n, Shape in) {
    conv(n + ".branch1x1", in, 320, 1, 1, 1, 0, 0);
    const Shape x = conv(n + ".branch3x3_1", in, 384, 1, 1, 1, 0, 0);
    conv(n + ".branch3x3_2a", x, 384, 1, 3, 1, 0, 1);
    conv(n + ".branch3x3_2b", x, 384, 3, 1, 1, 1, 0);
    Shape d = conv(n + ".branch3x3dbl_1", in, 448, 1, 1, 1, 0, 0);
    d = conv(n + ".branch3x3dbl_2", d, 384, 3, 3, 1, 1, 1);
    conv(n + ".branch3x3dbl_3a", d, 384, 1, 3, 1, 0, 1);
    conv(n + ".branch3x3dbl_3b", d, 384, 3, 1, 1, 1, 0);
    conv(n + ".branch_pool", b.pool(n + ".avgpool", in, 3, 1, 1), 192, 1, 1, 1, 0, 0);
    return Shape{2048, in.h, in.w};
  };
  s = inception_e("Mixed_7b", s);
  s = inception_e("Mixed_7c", s);
  b.pool("avgpool", s, s.h, 1, 0);
  b.fc("fc", 2048, 1000);
  return m;
}

// A transformer block as two layers (attention, feed-forward). Activations per sample follow Korthikanti et al. 2022
// (sequence s, hidden h, heads a): s h (34 + 5 a s / h) bytes per block at 16-bit, doubled here for fp32.
void transformer_blocks(Model& m, const std::string& prefix, int blocks, int seq, int hidden, int heads, int ffn) {
  const double s = seq;
  const double h = hidden;
  const double activations = 2.0 * s * h * (34.0 + 5.0 * heads * s / h);
  for (int i = 0; i < blocks; ++i) {
    const std::string n = prefix + std::to_string(i);
    Layer attention;
    attention.name = n + ".attention";
    attention.params = 4 * (h * h + h) + 2 * h;  // Q, K, V, output projections and a layer norm
    // projections 2 x 4 h^2 per token, scores Q K^T and their use on V: 2 x 2 s h per token
    attention.forward_flops = s * (8 * h * h + 4 * s * h);
    attention.activation_bytes = activations * 0.6;
    attention.tensor_parallel_values = s * h;  // Megatron allreduces the attention output
    Layer mlp;
    mlp.name = n + ".mlp";
    mlp.params = h * ffn + ffn + ffn * h + h + 2 * h;  // two projections and a layer norm
    mlp.forward_flops = s * 4 * h * ffn;
    mlp.activation_bytes = activations * 0.4;
    mlp.tensor_parallel_values = s * h;
    m.layers.push_back(attention);
    m.layers.push_back(mlp);
  }
}

Model bert_large() {
  Model m{"bert-large",
          "Devlin et al. 2019, BERT-large (24 layers, hidden 1024, 16 heads, FFN 4096, vocabulary 30522), sequence "
          "512: 340M parameters",
          "512 tokens",
          512 * 2 * float_bytes,
          {}};
  Layer embeddings;
  embeddings.name = "embeddings";
  embeddings.params = (30522 + 512 + 2) * 1024.0 + 2 * 1024;  // token, position, segment, layer norm
  embeddings.forward_flops = 512 * 1024 * 4.0;
  embeddings.activation_bytes = 512 * 1024 * float_bytes;
  embeddings.backward_flop_factor = 1;
  m.layers.push_back(embeddings);
  transformer_blocks(m, "encoder.", 24, 512, 1024, 16, 4096);
  Layer pooler;
  pooler.name = "pooler";
  pooler.params = 1024.0 * 1024 + 1024;
  pooler.forward_flops = 2.0 * 1024 * 1024;
  pooler.activation_bytes = 1024 * float_bytes;
  m.layers.push_back(pooler);
  return m;
}

Model gpt2_xl() {
  Model m{"gpt2-xl",
          "Radford et al. 2019, GPT-2 XL (48 layers, hidden 1600, 25 heads, vocabulary 50257, context 1024, output "
          "layer tied to the token embedding): 1.5B parameters",
          "1024 tokens",
          1024 * float_bytes,
          {}};
  Layer embeddings;
  embeddings.name = "embeddings";
  embeddings.params = (50257 + 1024) * 1600.0;
  embeddings.forward_flops = 1024 * 1600 * 2.0;
  embeddings.activation_bytes = 1024 * 1600 * float_bytes;
  embeddings.backward_flop_factor = 1;
  m.layers.push_back(embeddings);
  transformer_blocks(m, "h.", 48, 1024, 1600, 25, 6400);
  Layer head;
  head.name = "ln_f+lm_head";
  head.params = 2 * 1600;  // the final layer norm; the output projection reuses the token embedding
  head.forward_flops = 1024 * 2.0 * 1600 * 50257;
  head.activation_bytes = 1024 * 50257 * float_bytes;
  m.layers.push_back(head);
  return m;
}

const std::vector<Model>& zoo() {
  static const std::vector<Model> models{mlp(),          alexnet(),    vgg16(),  resnet50(),
                                         inception_v3(), bert_large(), gpt2_xl()};
  return models;
}

}  // namespace

std::span<const Model> model_zoo() { return zoo(); }

std::string model_names() {
  std::string names;
  for (const Model& m : zoo())
    names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

const Model& find_model(std::string_view name) {
  for (const Model& m : zoo()) {
    if (m.name == name) return m;
  }
  throw std::invalid_argument("unknown model '" + std::string(name) + "' (accepted: " + model_names() + ")");
}

}  // namespace dtsim
