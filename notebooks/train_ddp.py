"""Data-parallel training with DistributedDataParallel, started by torchrun: once per GPU of a
session (the DDP notebook beside this file), or on several nodes as a torchrun job (the Jobs page,
`gpuportal jobs submit --launcher torchrun --script ~/templates/train_ddp.py`). Without GPUs it
trains on the CPU with the gloo backend: the same mechanics.
"""

import argparse
import gc
import os

import torch
import torch.distributed as dist
from sklearn.datasets import load_digits
from torch import nn
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--epochs", type=int, default=int(os.environ.get("EPOCHS", "10")))
EPOCHS = parser.parse_args().epochs


def train(device: torch.device, rank: int, world: int) -> None:
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target)
    data = torch.utils.data.TensorDataset(x, y)
    sampler = torch.utils.data.distributed.DistributedSampler(data, shuffle=True, seed=0)
    loader = torch.utils.data.DataLoader(data, batch_size=64, sampler=sampler)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    model = DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        total = torch.zeros(2, device=device)
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()  # DDP averages the gradients of all processes here
            optimizer.step()
            total += torch.tensor([loss.item() * len(labels), len(labels)], device=device)
        dist.all_reduce(total)  # the loss over the whole data set, from every shard
        if rank == 0:
            loss_all = (total[0] / total[1]).item()
            print(f"epoch {epoch + 1:2d}  loss {loss_all:.4f}  (world size {world})", flush=True)


def main() -> None:
    use_cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if use_cuda else "gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    train(device, dist.get_rank(), dist.get_world_size())
    # Free the DDP model (it sits in reference cycles) while Python is still fully alive.
    # Left to interpreter exit, the process group's threads outlive it and the process
    # aborts with "terminate called without an active exception".
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
