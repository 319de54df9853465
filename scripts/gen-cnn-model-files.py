#!/usr/bin/env python3
"""Writes the CNN and MLP model files of scenarios/models/ (kind "layers") from their architectures as published.

The layer lists are long (Inception-v3 has 109 layers), so they are generated here from each architecture's
stage table rather than typed; the files are the data dtsim reads (`python3 scripts/gen-cnn-model-files.py` rewrites
them). Conventions, as models/layer_list.cpp computes them: a convolution followed by a batch norm has no bias; a
branch or shortcut reads an earlier layer by "from"; residual additions and ReLUs are not layers.
"""
import json
import math
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "models")


class Builder:
    """Layer entries as dtsim's model files spell them, and each layer's output shape [c, h, w] (models/layer_list.cpp's
    arithmetic), which layers sized by the map they read (scale) need."""

    def __init__(self, input_shape):
        self.layers = []
        self.shapes = {None: list(input_shape) + [1] * (3 - len(input_shape))}

    def _from(self, entry, ref):
        last = self.layers[-1]["name"] if self.layers else None
        if ref is not None and ref != last:
            entry["from"] = ref
        return entry

    def _input(self, ref):
        if ref is None and self.layers:
            ref = self.layers[-1]["name"]
        parts = [self.shapes[r] for r in ref.split(",")] if ref else [self.shapes[None]]
        return [sum(p[0] for p in parts), parts[0][1], parts[0][2]]

    @staticmethod
    def _out_size(size, k, stride, pad):
        return (size + 2 * pad - k) // stride + 1

    def conv(self, name, ref, out, k, stride=1, pad=0, bn=True, groups=1, bias=None):
        kh, kw = (k, k) if isinstance(k, int) else k
        ph, pw = (pad, pad) if isinstance(pad, int) else pad
        c, h, w = self._input(ref)
        e = {"kind": "conv", "name": name}
        self._from(e, ref)
        e["out"] = out
        e["kernel"] = [kh] if kh == kw else [kh, kw]
        if stride != 1:
            e["stride"] = stride
        if ph or pw:
            e["padding"] = [ph] if ph == pw else [ph, pw]
        if groups != 1:
            e["groups"] = groups
        if bn:
            e["batch_norm"] = True
        if bias is not None and bias != (not bn):
            e["bias"] = bias
        self.layers.append(e)
        self.shapes[name] = [out, self._out_size(h, kh, stride, ph), self._out_size(w, kw, stride, pw)]
        return name

    def pool(self, name, ref, k=None, stride=None, pad=0, global_pool=False):
        c, h, w = self._input(ref)
        e = {"kind": "pool", "name": name}
        self._from(e, ref)
        if global_pool:
            e["global"] = True
            self.shapes[name] = [c, 1, 1]
        else:
            e["kernel"] = [k]
            if stride != 1:
                e["stride"] = stride
            if pad:
                e["padding"] = [pad]
            s = 1 if stride is None else stride
            self.shapes[name] = [c, self._out_size(h, k, s, pad), self._out_size(w, k, s, pad)]
        self.layers.append(e)
        return name

    def scale(self, name, ref, flops_per_value):
        """A feature map multiplied by a per-channel vector (a squeeze-and-excitation's output; with 2 FLOPs a value,
        fused with the residual add): a memory-bound elementwise kernel over the map it reads, which it keeps for
        backward; its output has the map's shape."""
        c, h, w = self._input(ref)
        e = {"kind": "custom", "name": name}
        self._from(e, ref)
        e.update({"params": 0, "forward_flops": flops_per_value * c * h * w, "activation_bytes": 4 * c * h * w,
                  "compute": "elementwise"})
        self.layers.append(e)
        self.shapes[name] = [c, h, w]
        return name

    def fc(self, name, ref, out):
        e = {"kind": "linear", "name": name}
        self._from(e, ref)
        e["out"] = out
        self.layers.append(e)
        self.shapes[name] = [out, 1, 1]
        return name


def mlp():
    b = Builder([784])
    x = b.fc("fc1", None, 95)
    b.fc("fc2", x, 10)
    return b, [784], "784 pixels"


def alexnet():
    b = Builder([3, 224, 224])
    s = b.conv("conv1", None, 64, 11, 4, 2, bn=False)
    s = b.pool("pool1", s, 3, 2)
    s = b.conv("conv2", s, 192, 5, 1, 2, bn=False)
    s = b.pool("pool2", s, 3, 2)
    s = b.conv("conv3", s, 384, 3, 1, 1, bn=False)
    s = b.conv("conv4", s, 256, 3, 1, 1, bn=False)
    s = b.conv("conv5", s, 256, 3, 1, 1, bn=False)
    s = b.pool("pool5", s, 3, 2)
    s = b.fc("fc6", s, 4096)
    s = b.fc("fc7", s, 4096)
    b.fc("fc8", s, 1000)
    return b, [3, 224, 224], "3x224x224 image"


def vgg16():
    b = Builder([3, 224, 224])
    s = None
    for i, (width, n) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)]):
        for j in range(n):
            s = b.conv(f"conv{i + 1}_{j + 1}", s, width, 3, 1, 1, bn=False)
        s = b.pool(f"pool{i + 1}", s, 2, 2)
    s = b.fc("fc6", s, 4096)
    s = b.fc("fc7", s, 4096)
    b.fc("fc8", s, 1000)
    return b, [3, 224, 224], "3x224x224 image"


def bottleneck_net(depth, widths, expansion, groups=1, se_hidden=0):
    """The ResNet family's stem, bottleneck stages and classifier: per block a 1x1 convolution to the stage's width,
    a 3x3 one (with the stage's stride, as v1.5 puts it, and `groups`), a 1x1 one to width x expansion, a 1x1
    downsampling shortcut on each stage's first block; with se_hidden, a squeeze-and-excitation on the block's output
    (pool, 1x1 convolution to se_hidden channels with bias, ReLU, back with bias, sigmoid) fused with the residual add
    (torch.addcmul). Residual sums have conv3's shape and are not layers."""
    b = Builder([3, 224, 224])
    s = b.conv("conv1", None, 64, 7, 2, 3)
    s = b.pool("maxpool", s, 3, 2, 1)
    for stage, (width, blocks) in enumerate(zip(widths, depth)):
        for block in range(blocks):
            name = f"layer{stage + 1}.{block}"
            stride = 2 if block == 0 and stage > 0 else 1
            block_in = s
            x = b.conv(name + ".conv1", block_in, width, 1)
            x = b.conv(name + ".conv2", x, width, 3, stride, 1, groups=groups)
            x = b.conv(name + ".conv3", x, expansion * width, 1)
            if block == 0:
                b.conv(name + ".downsample", block_in, expansion * width, 1, stride)
            if se_hidden:
                q = b.pool(name + ".se.pool", x, global_pool=True)
                q = b.conv(name + ".se.squeeze", q, se_hidden, 1, bn=False)
                b.conv(name + ".se.expand", q, expansion * width, 1, bn=False)
                x = b.scale(name + ".se.scale", x, 2)
            s = x
    s = b.pool("avgpool", s, global_pool=True)
    b.fc("fc", s, 1000)
    return b, [3, 224, 224], "3x224x224 image"


def resnet(depth):
    """ResNet v1.5 as torchvision builds it: widths 64-512, expansion 4."""
    return bottleneck_net(depth, [64, 128, 256, 512], 4)


def resnext(depth, se_hidden=0):
    """ResNeXt 32x4d (Xie et al. 2017) as NVIDIA's DeepLearningExamples builds it (PyTorch/Classification/ConvNets,
    image_classification/models/resnet.py): widths 128-1024 with 32 groups in the 3x3 convolution, expansion 2; SE-
    ResNeXt with se_hidden 16 (its SEBottleneck's se_squeeze, taken by common.py as 16 channels)."""
    return bottleneck_net(depth, [128, 256, 512, 1024], 2, groups=32, se_hidden=se_hidden)


def efficientnet(width, depth, resolution):
    """EfficientNet (Tan and Le 2019) scaled by width and depth as NVIDIA's DeepLearningExamples and torchvision scale
    it (channels x width rounded to a multiple of 8, never more than 10% down; repeats x depth rounded up): a 3x3
    stride-2 stem, MBConv blocks (1x1 expansion, depthwise kxk, squeeze-and-excitation to a quarter of the block's
    input channels, 1x1 projection; SiLU after the expansion, the depthwise convolution and in the excitation), a 1x1
    head to 1280 x width channels, pooling and the classifier. Residual adds and dropout are not layers."""
    def channels(c):
        c *= width
        rounded = max(8, int(c + 4) // 8 * 8)
        return rounded + 8 if rounded < 0.9 * c else rounded

    stages = [  # expansion, kernel, stride, channels, repeats (EfficientNet-B0, the paper's Table 1)
        (1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
        (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]
    b = Builder([3, resolution, resolution])
    s = b.conv("stem", None, channels(32), 3, 2, 1)
    c_in = channels(32)
    for i, (expansion, k, stride, c, repeats) in enumerate(stages):
        c_out = channels(c)
        for r in range(int(math.ceil(repeats * depth))):
            name = f"layers.{i}.block{r}"
            hidden = c_in * expansion
            x = s
            if expansion != 1:
                x = b.conv(name + ".expand", x, hidden, 1)
            x = b.conv(name + ".depsep", x, hidden, k, stride if r == 0 else 1, k // 2, groups=hidden)
            q = b.pool(name + ".se.pool", x, global_pool=True)
            q = b.conv(name + ".se.squeeze", q, max(1, int(c_in * 0.25)), 1, bn=False)
            b.conv(name + ".se.expand", q, hidden, 1, bn=False)
            x = b.scale(name + ".se.scale", x, 1)
            s = b.conv(name + ".proj", x, c_out, 1)
            c_in = c_out
    s = b.conv("features", s, channels(1280), 1)
    s = b.pool("avgpool", s, global_pool=True)
    b.fc("fc", s, 1000)
    return b, [3, resolution, resolution], f"3x{resolution}x{resolution} image"


def inception_v3():
    b = Builder([3, 299, 299])

    def conv(name, ref, out, kh, kw, stride, ph, pw):
        return b.conv(name, ref, out, (kh, kw), stride, (ph, pw))

    s = conv("Conv2d_1a_3x3", None, 32, 3, 3, 2, 0, 0)
    s = conv("Conv2d_2a_3x3", s, 32, 3, 3, 1, 0, 0)
    s = conv("Conv2d_2b_3x3", s, 64, 3, 3, 1, 1, 1)
    s = b.pool("maxpool1", s, 3, 2)
    s = conv("Conv2d_3b_1x1", s, 80, 1, 1, 1, 0, 0)
    s = conv("Conv2d_4a_3x3", s, 192, 3, 3, 1, 0, 0)
    s = b.pool("maxpool2", s, 3, 2)

    def inception_a(n, i, pool_features):
        a = conv(n + ".branch1x1", i, 64, 1, 1, 1, 0, 0)
        c = conv(n + ".branch5x5_2", conv(n + ".branch5x5_1", i, 48, 1, 1, 1, 0, 0), 64, 5, 5, 1, 2, 2)
        d = conv(n + ".branch3x3dbl_1", i, 64, 1, 1, 1, 0, 0)
        d = conv(n + ".branch3x3dbl_2", d, 96, 3, 3, 1, 1, 1)
        d = conv(n + ".branch3x3dbl_3", d, 96, 3, 3, 1, 1, 1)
        p = conv(n + ".branch_pool", b.pool(n + ".avgpool", i, 3, 1, 1), pool_features, 1, 1, 1, 0, 0)
        return ",".join([a, c, d, p])

    s = inception_a("Mixed_5b", s, 32)
    s = inception_a("Mixed_5c", s, 64)
    s = inception_a("Mixed_5d", s, 64)
    i = s  # InceptionB
    a = conv("Mixed_6a.branch3x3", i, 384, 3, 3, 2, 0, 0)
    d = conv("Mixed_6a.branch3x3dbl_1", i, 64, 1, 1, 1, 0, 0)
    d = conv("Mixed_6a.branch3x3dbl_2", d, 96, 3, 3, 1, 1, 1)
    d = conv("Mixed_6a.branch3x3dbl_3", d, 96, 3, 3, 2, 0, 0)
    p = b.pool("Mixed_6a.maxpool", i, 3, 2)
    s = ",".join([a, d, p])

    def inception_c(n, i, c7):
        a = conv(n + ".branch1x1", i, 192, 1, 1, 1, 0, 0)
        x = conv(n + ".branch7x7_1", i, c7, 1, 1, 1, 0, 0)
        x = conv(n + ".branch7x7_2", x, c7, 1, 7, 1, 0, 3)
        x = conv(n + ".branch7x7_3", x, 192, 7, 1, 1, 3, 0)
        d = conv(n + ".branch7x7dbl_1", i, c7, 1, 1, 1, 0, 0)
        d = conv(n + ".branch7x7dbl_2", d, c7, 7, 1, 1, 3, 0)
        d = conv(n + ".branch7x7dbl_3", d, c7, 1, 7, 1, 0, 3)
        d = conv(n + ".branch7x7dbl_4", d, c7, 7, 1, 1, 3, 0)
        d = conv(n + ".branch7x7dbl_5", d, 192, 1, 7, 1, 0, 3)
        p = conv(n + ".branch_pool", b.pool(n + ".avgpool", i, 3, 1, 1), 192, 1, 1, 1, 0, 0)
        return ",".join([a, x, d, p])

    s = inception_c("Mixed_6b", s, 128)
    s = inception_c("Mixed_6c", s, 160)
    s = inception_c("Mixed_6d", s, 160)
    s = inception_c("Mixed_6e", s, 192)
    i = s  # InceptionD
    a = conv("Mixed_7a.branch3x3_2", conv("Mixed_7a.branch3x3_1", i, 192, 1, 1, 1, 0, 0), 320, 3, 3, 2, 0, 0)
    x = conv("Mixed_7a.branch7x7x3_1", i, 192, 1, 1, 1, 0, 0)
    x = conv("Mixed_7a.branch7x7x3_2", x, 192, 1, 7, 1, 0, 3)
    x = conv("Mixed_7a.branch7x7x3_3", x, 192, 7, 1, 1, 3, 0)
    x = conv("Mixed_7a.branch7x7x3_4", x, 192, 3, 3, 2, 0, 0)
    p = b.pool("Mixed_7a.maxpool", i, 3, 2)
    s = ",".join([a, x, p])

    def inception_e(n, i):
        a = conv(n + ".branch1x1", i, 320, 1, 1, 1, 0, 0)
        x = conv(n + ".branch3x3_1", i, 384, 1, 1, 1, 0, 0)
        x1 = conv(n + ".branch3x3_2a", x, 384, 1, 3, 1, 0, 1)
        x2 = conv(n + ".branch3x3_2b", x, 384, 3, 1, 1, 1, 0)
        d = conv(n + ".branch3x3dbl_1", i, 448, 1, 1, 1, 0, 0)
        d = conv(n + ".branch3x3dbl_2", d, 384, 3, 3, 1, 1, 1)
        d1 = conv(n + ".branch3x3dbl_3a", d, 384, 1, 3, 1, 0, 1)
        d2 = conv(n + ".branch3x3dbl_3b", d, 384, 3, 1, 1, 1, 0)
        p = conv(n + ".branch_pool", b.pool(n + ".avgpool", i, 3, 1, 1), 192, 1, 1, 1, 0, 0)
        return ",".join([a, x1, x2, d1, d2, p])

    s = inception_e("Mixed_7b", s)
    s = inception_e("Mixed_7c", s)
    s = b.pool("avgpool", s, global_pool=True)
    b.fc("fc", s, 1000)
    return b, [3, 299, 299], "3x299x299 image"


MODELS = {
    "mlp-784-95-10": (mlp, "a 784-95-10 perceptron for 28x28 images (Fashion-MNIST), ReLU hidden layer: "
                      "784 x 95 + 95 + 95 x 10 + 10 = 75,535 parameters"),
    "alexnet": (alexnet, "Krizhevsky et al. 2012 as in torchvision (single-tower, 64-192-384-256-256 filters): "
                "61.1M parameters, 0.71 GMACs (torchvision AlexNet_Weights.IMAGENET1K_V1)"),
    "vgg16": (vgg16, "Simonyan and Zisserman 2015, configuration D: 138.4M parameters, 15.5 GMACs "
              "(torchvision VGG16_Weights.IMAGENET1K_V1: 138,357,544 parameters, 15.47 GFLOPS)"),
    "resnet50": (lambda: resnet([3, 4, 6, 3]),
                 "He et al. 2016 (arXiv:1512.03385), ResNet-50 v1.5 as in torchvision (stride in the 3x3 convolution): "
                 "25,557,032 parameters and 4.09 GMACs (torchvision ResNet50_Weights.IMAGENET1K_V1, "
                 "https://pytorch.org/vision/stable/models/generated/torchvision.models.resnet50.html)"),
    "resnet101": (lambda: resnet([3, 4, 23, 3]),
                  "He et al. 2016 (arXiv:1512.03385), ResNet-101 v1.5 as in torchvision (resnet101 = "
                  "_resnet(Bottleneck, [3, 4, 23, 3])): 44,549,160 parameters and 7.80 GMACs (torchvision "
                  "ResNet101_Weights.IMAGENET1K_V1; the paper's Table 1 gives 7.6e9 for v1)"),
    "resnet152": (lambda: resnet([3, 8, 36, 3]),
                  "He et al. 2016 (arXiv:1512.03385), ResNet-152 v1.5 as in torchvision (resnet152 = "
                  "_resnet(Bottleneck, [3, 8, 36, 3])): 60,192,808 parameters and 11.51 GMACs (torchvision "
                  "ResNet152_Weights.IMAGENET1K_V1; the paper's Table 1 gives 11.3e9 for v1)"),
    "resnext50-32x4d": (lambda: resnext([3, 4, 6, 3]),
                        "Xie et al. 2017 (arXiv:1611.05431), ResNeXt-50 (32x4d) as in torchvision (resnext50_32x4d; "
                        "groups 32, width per group 4): 25,028,904 parameters and 4.23 GMACs (torchvision "
                        "ResNeXt50_32X4D_Weights.IMAGENET1K_V1)"),
    "resnext101-32x4d": (lambda: resnext([3, 4, 23, 3]),
                         "Xie et al. 2017 (arXiv:1611.05431), ResNeXt-101 (32x4d) as NVIDIA DeepLearningExamples "
                         "builds it (PyTorch/Classification/ConvNets image_classification/models/resnet.py: widths "
                         "128-1024, cardinality 32, expansion 2; the same layers as ResNeXt-50 with 23 blocks in "
                         "stage 3): 44,177,704 parameters (timm resnext101_32x4d: 44.2M, 8.0 GMACs; the paper counts "
                         "7.8e9 multiply-adds)"),
    "se-resnext101-32x4d": (lambda: resnext([3, 4, 23, 3], se_hidden=16),
                            "Hu et al. 2018 (arXiv:1709.01507) squeeze-and-excitation on ResNeXt-101 (32x4d) as "
                            "NVIDIA DeepLearningExamples builds it (image_classification/models/resnet.py "
                            "SEBottleneck: se_squeeze=16, which common.py's SqueezeAndExcitation takes as 16 "
                            "channels, fused with the residual add by torch.addcmul)"),
    "efficientnet-b0": (lambda: efficientnet(1.0, 1.0, 224),
                        "Tan and Le 2019 (arXiv:1905.11946), EfficientNet-B0 at 224x224 (NVIDIA "
                        "DeepLearningExamples effnet_b0_layers, default_image_size 224): 5,288,548 parameters and "
                        "0.39 GMACs (torchvision EfficientNet_B0_Weights.IMAGENET1K_V1)"),
    "efficientnet-b4": (lambda: efficientnet(1.4, 1.8, 380),
                        "Tan and Le 2019 (arXiv:1905.11946), EfficientNet-B4 (width 1.4, depth 1.8) at 380x380 "
                        "(NVIDIA DeepLearningExamples effnet_b4_layers, default_image_size 380): 19,341,616 "
                        "parameters and 4.39 GMACs (torchvision EfficientNet_B4_Weights.IMAGENET1K_V1)"),
    "inception-v3": (inception_v3, "Szegedy et al. 2016 as in torchvision, without the auxiliary classifier: "
                     "23.8M parameters (27.2M with it), 5.71 GMACs"),
}


def write(name, fn, source):
    b, shape, description = fn()
    lines = [json.dumps(layer) for layer in b.layers]
    text = ('{\n  "model": {\n    "name": %s,\n    "kind": "layers",\n    "source": %s,\n'
            '    "input": %s,\n    "input_description": %s,\n    "layers": [\n      %s\n    ]\n  }\n}\n') % (
        json.dumps(name), json.dumps(source), json.dumps(shape), json.dumps(description), ",\n      ".join(lines))
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    for name, (fn, source) in MODELS.items():
        write(name, fn, source)
