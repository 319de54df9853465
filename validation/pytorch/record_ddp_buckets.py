"""Records how PyTorch's DistributedDataParallel buckets the gradients of the validation models (2 gloo processes on
this machine): the parameter sizes in registration order and, once DDP has rebuilt its buckets in gradient-ready order
(after the first iteration; reported by its logging data from iteration 10), each bucket's parameters and bytes.

  /usr/bin/python3 validation/pytorch/record_ddp_buckets.py OUT.json [--bucket-cap-mb M ...]

tests/data/pytorch/ddp-buckets.json is its output with the default cap (25) and 1 MB; dtsim's tests check that its own
bucket assignment reproduces every bucket."""
import argparse
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def worker(rank, caps, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29531"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    records = []
    for name in sorted(models.BUILDERS):
        for cap in caps:
            torch.manual_seed(0)
            model, make_batch, loss_fn = models.BUILDERS[name]()
            ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap)
            inputs, targets = make_batch(2)
            for _ in range(11):
                loss_fn(ddp(inputs), targets).backward()
            data = ddp._get_ddp_logging_data()
            records.append({
                "model": name,
                "bucket_cap_mb": cap,
                "bucket_cap_bytes": data["bucket_cap_bytes"],
                "first_bucket_bytes": dist._DEFAULT_FIRST_BUCKET_BYTES,
                "param_bytes": [p.numel() * p.element_size() for p in model.parameters()],
                "buckets": [[int(i) for i in b.split()] for b in data["rebuilt_per_bucket_param_indices"].split(",")],
                "bucket_bytes": [int(b) for b in data["rebuilt_bucket_sizes"].split(",")],
            })
    if rank == 0:
        with open(out + ".tmp", "w") as f:
            json.dump({"torch": torch.__version__, "records": records}, f, indent=1)
        os.replace(out + ".tmp", out)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--bucket-cap-mb", type=float, nargs="+", default=[25, 1])
    args = parser.parse_args()
    mp.spawn(worker, args=(args.bucket_cap_mb, args.out), nprocs=2)


if __name__ == "__main__":
    main()
