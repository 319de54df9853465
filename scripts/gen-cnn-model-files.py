#!/usr/bin/env python3
"""Writes the CNN and MLP model files of scenarios/models/ (kind "layers") from their architectures as published.

The layer lists are long (Inception-v3 has 109 layers), so they are generated here from each architecture's
stage table rather than typed; the files are the data dtsim reads (`python3 scripts/gen-cnn-model-files.py` rewrites
them). Conventions, as models/layer_list.cpp computes them: a convolution followed by a batch norm has no bias; a
branch or shortcut reads an earlier layer by "from"; residual additions and ReLUs are not layers.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "models")


class Builder:
    def __init__(self):
        self.layers = []

    def _from(self, entry, ref):
        last = self.layers[-1]["name"] if self.layers else None
        if ref is not None and ref != last:
            entry["from"] = ref
        return entry

    def conv(self, name, ref, out, k, stride=1, pad=0, bn=True):
        kh, kw = (k, k) if isinstance(k, int) else k
        ph, pw = (pad, pad) if isinstance(pad, int) else pad
        e = {"kind": "conv", "name": name}
        self._from(e, ref)
        e["out"] = out
        e["kernel"] = [kh] if kh == kw else [kh, kw]
        if stride != 1:
            e["stride"] = stride
        if ph or pw:
            e["padding"] = [ph] if ph == pw else [ph, pw]
        if bn:
            e["batch_norm"] = True
        self.layers.append(e)
        return name

    def pool(self, name, ref, k=None, stride=None, pad=0, global_pool=False):
        e = {"kind": "pool", "name": name}
        self._from(e, ref)
        if global_pool:
            e["global"] = True
        else:
            e["kernel"] = [k]
            if stride != 1:
                e["stride"] = stride
            if pad:
                e["padding"] = [pad]
        self.layers.append(e)
        return name

    def fc(self, name, ref, out):
        e = {"kind": "linear", "name": name}
        self._from(e, ref)
        e["out"] = out
        self.layers.append(e)
        return name


def mlp():
    b = Builder()
    x = b.fc("fc1", None, 95)
    b.fc("fc2", x, 10)
    return b, [784], "784 pixels"


def alexnet():
    b = Builder()
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
    b = Builder()
    s = None
    for i, (width, n) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)]):
        for j in range(n):
            s = b.conv(f"conv{i + 1}_{j + 1}", s, width, 3, 1, 1, bn=False)
        s = b.pool(f"pool{i + 1}", s, 2, 2)
    s = b.fc("fc6", s, 4096)
    s = b.fc("fc7", s, 4096)
    b.fc("fc8", s, 1000)
    return b, [3, 224, 224], "3x224x224 image"


def resnet(depth):
    b = Builder()
    s = b.conv("conv1", None, 64, 7, 2, 3)
    s = b.pool("maxpool", s, 3, 2, 1)
    for stage, (width, blocks) in enumerate(zip([64, 128, 256, 512], depth)):
        for block in range(blocks):
            name = f"layer{stage + 1}.{block}"
            stride = 2 if block == 0 and stage > 0 else 1  # v1.5: the stride in the 3x3 convolution
            block_in = s
            x = b.conv(name + ".conv1", block_in, width, 1)
            x = b.conv(name + ".conv2", x, width, 3, stride, 1)
            x = b.conv(name + ".conv3", x, 4 * width, 1)
            if block == 0:
                b.conv(name + ".downsample", block_in, 4 * width, 1, stride)
            s = x  # the residual sum has conv3's shape
    s = b.pool("avgpool", s, global_pool=True)
    b.fc("fc", s, 1000)
    return b, [3, 224, 224], "3x224x224 image"


def inception_v3():
    b = Builder()

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
