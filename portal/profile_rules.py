"""Rules on a whole profile: across fields, and against the cluster's partitions.

Field-by-field checks happen in gpuportal_portal.schemas as the request comes in; these run on the
profile as it would be saved (stored values merged with the changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuportal_core.partitions import Partition
from gpuportal_core.slurm_time import format_runtime, parse_runtime
from gpuportal_core.words import count


@dataclass(frozen=True)
class Problem:
    """One broken rule, for the field it concerns."""

    field: str
    message: str


def check_profile(values: dict[str, Any], partitions: dict[str, Partition]) -> list[Problem]:
    """Problems of a complete profile (runtimes as HH:MM:SS) on this cluster; empty if none."""
    problems: list[Problem] = []
    default_runtime = parse_runtime(values["default_runtime"])
    max_runtime = parse_runtime(values["max_runtime"])
    if default_runtime > max_runtime:
        problems.append(
            Problem("default_runtime", f"must not be over max_runtime ({values['max_runtime']})")
        )
    name = values["partition"]
    partition = partitions.get(name)
    if partition is None:
        known = ", ".join(sorted(partitions)) or "none"
        problems.append(
            Problem("partition", f"no partition {name!r} on the cluster; known: {known}")
        )
        return problems
    gpus = values["gpus"]
    kind = values.get("gpu_type", "")
    fit = partition.fit(
        gpus=gpus,
        cores_per_gpu=values["cores_per_gpu"],
        mem_per_gpu_gb=values["mem_per_gpu_gb"],
        runtime=max_runtime,
        gpu_type=kind,
    )
    if fit.no_such_kind:
        problems.append(Problem("gpu_type", no_such_kind(partition, kind)))
    elif fit.too_many_gpus and kind:
        most = partition.max_gpus_of(kind)
        problems.append(
            Problem(
                "gpus",
                f"must be at most {most}: the nodes of partition {name} have at most "
                f"{count(most, kind + ' GPU')} each",
            )
        )
    elif fit.too_many_gpus:
        problems.append(
            Problem(
                "gpus",
                f"must be at most {partition.max_gpus_per_node}: the nodes of partition "
                f"{name} have at most {count(partition.max_gpus_per_node, 'GPU')} each",
            )
        )
    elif not fit.nodes_that_fit:
        problems.append(
            Problem(
                # Said at the field that is too large (500 GB per GPU was said at the cores).
                "mem_per_gpu_gb" if fit.short_of == "memory" else "cores_per_gpu",
                f"{count(gpus, 'GPU')} with {values['cores_per_gpu']} cores and "
                f"{values['mem_per_gpu_gb']} GB each do not fit on one node of partition {name}: "
                f"{_largest_nodes(partition)}",
            )
        )
    if fit.over_max_time and partition.max_time is not None:
        problems.append(
            Problem(
                "max_runtime",
                f"is over partition {name}'s MaxTime of {format_runtime(partition.max_time)}",
            )
        )
    return problems


def no_such_kind(partition: Partition, kind: str) -> str:
    """Why a kind is refused on a partition (profiles and jobs): the kinds it has instead."""
    kinds = ", ".join(k for k in partition.gpu_kinds if k) or "untyped GPUs only"
    return (
        f"no node of partition {partition.name} has GPUs of kind {kind!r}; its kinds: {kinds} "
        "(empty = any kind)"
    )


def _largest_nodes(partition: Partition) -> str:
    shapes = ", ".join(
        f"{count(shape.gpus, 'GPU')}, {shape.cores} cores, {shape.mem_mb // 1024} GB"
        for shape in partition.shapes
    )
    return f"its nodes have {shapes}"
