"""The three models of the real-training validation (docs/validation.md, "PyTorch"): an MLP, ResNet-18 at 32 px and a
small GPT-style transformer. Each builder returns (model, make_batch(batch) -> (inputs, targets), loss(out, targets))."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp():
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    return model, lambda b: (torch.randn(b, 1, 28, 28), torch.randint(0, 10, (b,))), F.cross_entropy


def resnet18():
    import torchvision
    model = torchvision.models.resnet18(num_classes=10)
    for m in model.modules():  # output hooks need outputs that are not modified in place
        if isinstance(m, nn.ReLU):
            m.inplace = False
    return model, lambda b: (torch.randn(b, 3, 32, 32), torch.randint(0, 10, (b,))), F.cross_entropy


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(h // self.heads)
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        out = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, s, h))


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyGPT(nn.Module):
    def __init__(self, vocab=1024, hidden=128, heads=4, layers=2, sequence=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(sequence, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def transformer(vocab=1024, sequence=32):
    model = TinyGPT(vocab=vocab, sequence=sequence)

    def make(b):
        tokens = torch.randint(0, vocab, (b, sequence + 1))
        return tokens[:, :-1], tokens[:, 1:]

    return model, make, lambda out, y: F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


BUILDERS = {"mlp": mlp, "resnet18": resnet18, "transformer": transformer}
