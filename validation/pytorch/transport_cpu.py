"""What gloo's transport costs a rank's processor, and what the rank's computing costs the transport, under the rank's
CPU share. Every rank, at once:
  1. allreduces a 16 MiB float32 tensor (gloo's ring, a bucket's size) ROUNDS times after warm-up, alone: rank 0's
     process time (user and system, all its threads: what the cgroup's quota is charged) and wall time;
  2. the same allreduces, each started asynchronously while the main thread multiplies 256 x 256 matrices until it
     completes (a backward pass computing while DDP's buckets are on the wire): the wall time, and how many products
     the main thread finished;
  3. the products alone, for as long as step 2 took: the compute rate without the transport.
Rank 0 prints "CPU_S WALL_S BYTES_MOVED BYTES_REDUCED WALL_COMPUTING_S COMPUTE_FRACTION": steps 1's times, the bytes
it sent and received in step 1 (2 (n-1)/n of the tensor each way, each allreduce) and reduced ((n-1)/n of it), step
2's wall time and the compute rate of step 2 over step 3's. dtsim takes the reductions out of the process time (at the
measured reduce rate) and keeps the rest as the transport's processor time per byte; step 1's wall time over step 2's
is the rate the transport keeps while the rank computes.

  RANK=r WORLD_SIZE=n MASTER_ADDR=a MASTER_PORT=p /usr/bin/python3 validation/pytorch/transport_cpu.py [ROUNDS]"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    torch.set_num_threads(1)
    world = int(os.environ["WORLD_SIZE"])
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
    tensor = torch.ones(1 << 22)  # 16 MiB
    a = torch.rand(256, 256)
    b = torch.rand(256, 256)
    for _ in range(2):
        dist.all_reduce(tensor)
        torch.mm(a, b)
    dist.barrier()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        dist.all_reduce(tensor)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    dist.barrier()
    products = 0
    wall0 = time.perf_counter()
    for _ in range(rounds):
        work = dist.all_reduce(tensor, async_op=True)
        while not work.is_completed():
            torch.mm(a, b)
            products += 1
        work.wait()
    wall_computing = time.perf_counter() - wall0
    dist.barrier()
    alone = 0
    wall0 = time.perf_counter()
    while time.perf_counter() - wall0 < wall_computing:
        torch.mm(a, b)
        alone += 1
    alone_rate = alone / (time.perf_counter() - wall0)
    dist.barrier()
    dist.destroy_process_group()
    size = tensor.numel() * 4
    moved = rounds * 2 * 2 * (world - 1) / world * size  # sent and received
    reduced = rounds * (world - 1) / world * size
    if rank == 0:
        fraction = products / wall_computing / alone_rate
        print(f"{cpu:.6f} {wall:.6f} {moved:.0f} {reduced:.0f} {wall_computing:.6f} {fraction:.4f}")


if __name__ == "__main__":
    main()
