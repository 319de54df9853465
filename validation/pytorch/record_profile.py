"""Records a torch.profiler trace of training steps of one model on one process, marked for `dtsim import-profile`.

  /usr/bin/python3 validation/pytorch/record_profile.py MODEL BATCH OUT.json [--steps N] [--threads T]

MODEL is mlp, resnet18 or transformer (validation/pytorch/models.py). The trace holds N profiled steps (default 3)
after two unprofiled warm-up steps, SGD with momentum, torch.set_num_threads(T) (default 1)."""
import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dtsim_profile  # noqa: E402
import models  # noqa: E402


def layers_of(name, model):
    """Block granularity for the CNN and the transformer, every leaf for the MLP."""
    if name == "resnet18":
        names = ["conv1", "bn1", "relu", "maxpool"] + [f"layer{i}.{j}" for i in range(1, 5) for j in range(2)]
        names += ["avgpool", "fc"]
    elif name == "transformer":
        names = ["embed", "position"] + [f"blocks.{i}" for i in range(len(model.blocks))] + ["norm", "head"]
    else:
        return None
    modules = dict(model.named_modules())
    return {n: modules[n] for n in names}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(models.BUILDERS))
    parser.add_argument("batch", type=int)
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model, make_batch, loss_fn = models.BUILDERS[args.model]()
    dtsim_profile.annotate(model, layers_of(args.model, model))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    inputs, targets = make_batch(args.batch)

    def step():
        dtsim_profile.mark_batch(args.batch)
        optimizer.zero_grad()
        loss_fn(model(inputs), targets).backward()
        optimizer.step()

    for _ in range(2):
        step()
    trace = args.out + ".tmp"
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=args.steps),
                 on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
        for _ in range(args.steps + 1):
            step()
            prof.step()
    os.replace(trace, args.out)


if __name__ == "__main__":
    main()
