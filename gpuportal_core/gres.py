"""GPUs by kind, as Slurm's gres strings say them: "gpu:a100:4(S:0-1)", "gpu:1g.10gb:7", "gpu:2".

A kind is the gres type a site's gres.conf gives its GPUs (`Type=a100`), a MIG slice's profile
(`1g.10gb`) among them; GPUs without a type are of kind "". A request of kind "" takes any
GPU (Slurm's `--gres=gpu:N`), whatever the node's kinds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ANY = ""
# gres.conf type names: letters, digits and _ . + - (MIG slices: 1g.10gb, 1g.10gb+me).
GPU_KIND_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,31}")
_GPU = re.compile(r"gpu(?::([^:,()]+))?:(\d+)")


def gpu_kinds(gres: str) -> dict[str, int]:
    """GPUs per kind in a gres string: {"a100": 4} for "gpu:a100:4(S:0-1)", {"": 2} for
    "gpu:2", {} for none. A count given both typed and untyped (squeue's "gres/gpu=2,
    gres/gpu:a100=2" style never reaches here; sinfo lists each type once) is kept by type."""
    kinds: dict[str, int] = {}
    for kind, count in _GPU.findall(gres or ""):
        kinds[kind] = kinds.get(kind, 0) + int(count)
    return kinds


def total_gpus(gres: str) -> int:
    """Every GPU in a gres string, whatever its kind."""
    return sum(gpu_kinds(gres).values())


def of_kind(kinds: Mapping[str, int], kind: str) -> int:
    """How many of these GPUs a request of `kind` may take: all of them for ANY."""
    return sum(kinds.values()) if kind == ANY else kinds.get(kind, 0)


def gres_request(kind: str, gpus: int) -> str:
    """The value of sbatch's --gres for `gpus` GPUs of a kind: gpu:a100:2, or gpu:2 for any."""
    return f"gpu:{kind}:{gpus}" if kind else f"gpu:{gpus}"


def describe_kind(kind: str) -> str:
    """The kind as pages say it: "a100", or "any kind"."""
    return kind or "any kind"
