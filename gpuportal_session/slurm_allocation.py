"""What Slurm gave the job this session runs in, read from the job's environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Allocation:
    """Memory (bytes) and cores of the job on its node; 0 for what the job does not say."""

    memory_bytes: int
    cores: int


def job_allocation(env: Mapping[str, str]) -> Allocation:
    """SLURM_MEM_PER_NODE (MB) for --mem, or SLURM_MEM_PER_CPU times the cores for
    --mem-per-cpu; SLURM_CPUS_ON_NODE for the cores."""
    cores = _number(env.get("SLURM_CPUS_ON_NODE"))
    memory_mb = _number(env.get("SLURM_MEM_PER_NODE"))
    if not memory_mb:
        memory_mb = _number(env.get("SLURM_MEM_PER_CPU")) * cores
    return Allocation(memory_bytes=memory_mb * 1024 * 1024, cores=cores)


def _number(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0
