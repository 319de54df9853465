"""The rate at which this process adds float32 arrays (bytes of the summed array per second): what gloo's ring
allreduce spends on each chunk it reduces, measured under the same CPU share as the ranks. Prints bytes/s."""
import time

import torch

torch.set_num_threads(1)
a = torch.ones(1 << 22)  # 16 MiB: beyond the caches, as a bucket of the validation is
b = torch.ones(1 << 22)
for _ in range(20):
    a.add_(b)
rounds = 50
start = time.perf_counter()
for _ in range(rounds):
    a.add_(b)
print(f"{rounds * a.numel() * 4 / (time.perf_counter() - start):.6g}")
