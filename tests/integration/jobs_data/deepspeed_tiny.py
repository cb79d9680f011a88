"""A tiny model trained for a few steps by DeepSpeed on every worker (CPU, gloo)."""

import socket
import sys

import deepspeed
import torch

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
config = {
    "train_micro_batch_size_per_gpu": 4,
    "optimizer": {"type": "SGD", "params": {"lr": 0.05}},
}
engine, _, _, _ = deepspeed.initialize(
    model=model, model_parameters=model.parameters(), config=config
)
inputs, targets = torch.randn(4, 8), torch.randn(4, 1)
for _ in range(5):
    loss = torch.nn.functional.mse_loss(engine(inputs), targets)
    engine.backward(loss)
    engine.step()
rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
# One write per line: the workers of a node share one output stream.
sys.stdout.write(f"rank {rank} of {world} on {socket.gethostname()}: loss {loss.item():.4f}\n")
sys.stdout.flush()
# Leave together: a worker that exits while the other still talks to it makes gloo's
# background thread throw "Connection closed by peer" there, which aborts it (SIGABRT; the
# launcher then exits 250 although training finished).
torch.distributed.barrier()
torch.distributed.destroy_process_group()
