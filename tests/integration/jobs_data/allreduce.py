"""A gloo all-reduce across every worker of a torchrun job: each adds rank + 1."""

import os
import socket
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([rank + 1.0])
dist.all_reduce(value)
node = os.environ.get("SLURMD_NODENAME", "?")
# One write per line: the workers of a node share one output stream.
# The host name too: each node is a host of its own, so the ranks met over the network.
host = socket.gethostname()
# And the Python it ran on: a job in a container image runs the image's.
sys.stdout.write(
    f"rank {rank} of {world} on {node} ({host}): all_reduce sum = {value.item():.0f}"
    f" in {sys.prefix}\n"
)
sys.stdout.flush()
dist.destroy_process_group()
