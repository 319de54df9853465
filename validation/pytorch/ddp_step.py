"""One rank of the real-training validation: PyTorch DistributedDataParallel over gloo, or, with WORLD_SIZE 1, the same
step without DDP (compute alone). Prints the median step time in seconds (rank 0) after warm-up.

  RANK=r WORLD_SIZE=n MASTER_ADDR=a MASTER_PORT=p /usr/bin/python3 validation/pytorch/ddp_step.py MODEL BATCH
      [--bucket-cap-mb M] [--warmup W] [--steps S] [--compute-blocks B]

A step is zero_grad, forward, loss, backward (DDP allreduces its buckets as their gradients become ready, and waits for
the last at the end of backward), and the optimizer (SGD with momentum), timed on rank 0 with time.perf_counter.

With --compute-blocks B (DDP only) the timed steps run in B blocks, each of steps/B steps as above followed by as many
under DDP's no_sync (no allreduce: every rank computing at once, communication off, in the same processes at the same
moment), and rank 0 prints both medians: STEP_SECONDS COMPUTE_SECONDS. The compute is then measured next to the step it
explains: on a shared machine whose speed drifts by tens of percent over minutes (docs/validation.md, session 28), a
compute measured in other processes minutes earlier does not describe the step. After the two medians rank 0 prints
its no_sync step times, and every other rank prints its own: how far the ranks' computes spread, since every
synchronous step waits for its slowest rank."""
import argparse
import datetime
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(models.BUILDERS))
    parser.add_argument("batch", type=int)
    parser.add_argument("--bucket-cap-mb", type=float, default=25)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--compute-blocks", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(0)
    model, make_batch, loss_fn = models.BUILDERS[args.model]()
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
        model = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_cap_mb)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    inputs, targets = make_batch(args.batch)
    blocks = args.compute_blocks if world > 1 else 0
    if blocks < 0 or (blocks > 0 and args.steps % blocks != 0):
        parser.error("--compute-blocks: a positive divisor of --steps")

    def step(sync):
        start = time.perf_counter()
        optimizer.zero_grad()
        if sync:
            loss_fn(model(inputs), targets).backward()
        else:
            with model.no_sync():
                loss_fn(model(inputs), targets).backward()
        optimizer.step()
        return time.perf_counter() - start

    for _ in range(args.warmup):
        step(True)
    times, compute_times = [], []
    if blocks == 0:
        times = [step(True) for _ in range(args.steps)]
    else:
        for _ in range(blocks):
            times += [step(True) for _ in range(args.steps // blocks)]
            compute_times += [step(False) for _ in range(args.steps // blocks)]
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    # (each rank prints its own no_sync steps: gathering them over gloo, into tensors that gloo's worker threads then
    # free, deadlocked torch 1.13's ProcessGroupGloo destructor against the interpreter's lock once in a few runs)
    samples = " ".join(f"{t:.6f}" for t in compute_times)
    if rank == 0:
        if compute_times:
            print(f"{statistics.median(times):.9f} {statistics.median(compute_times):.9f} {samples}")
        else:
            print(f"{statistics.median(times):.9f}")
    elif compute_times:
        print(samples)


if __name__ == "__main__":
    main()
