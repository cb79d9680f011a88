"""A gloo all-reduce across every worker of a torchrun job: each adds rank + 1."""

import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([rank + 1.0])
dist.all_reduce(value)
node = os.environ.get("SLURMD_NODENAME", "?")
print(f"rank {rank} of {world} on {node}: all_reduce sum = {value.item():.0f}", flush=True)
dist.destroy_process_group()
