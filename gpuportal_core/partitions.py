"""What a Slurm partition can hold: its time limit and its largest node, from sinfo."""

from __future__ import annotations

from dataclasses import dataclass

from gpuportal_core.gres import ANY, gpu_kinds, of_kind, total_gpus
from gpuportal_core.slurm_time import parse_slurm_time

# One line per group of alike nodes of a partition: name, time limit, gres, CPUs, memory (MB),
# and how many nodes are in the group.
SINFO_FORMAT = "%R|%l|%G|%c|%m|%D"


class SinfoFormatError(ValueError):
    """sinfo printed something this parser does not understand."""


@dataclass(frozen=True)
class NodeShape:
    """What one node of a group of alike nodes offers."""

    gpus: int
    cores: int
    mem_mb: int
    count: int = 1
    kinds: tuple[tuple[str, int], ...] = ()  # GPUs per kind (gpuportal_core.gres)

    def gpus_of(self, kind: str) -> int:
        """The GPUs a request of this kind may take on such a node (all of them for ANY)."""
        return of_kind(dict(self.kinds), kind) if self.kinds else (self.gpus if kind == ANY else 0)


@dataclass(frozen=True)
class Partition:
    """A partition's time limit and the shapes of its nodes."""

    name: str
    max_time: int | None  # seconds; None for UNLIMITED
    shapes: tuple[NodeShape, ...]

    @property
    def max_gpus_per_node(self) -> int:
        return max((shape.gpus for shape in self.shapes), default=0)

    def max_gpus_of(self, kind: str) -> int:
        """The most GPUs of a kind one node of the partition has."""
        return max((shape.gpus_of(kind) for shape in self.shapes), default=0)

    @property
    def gpu_kinds(self) -> list[str]:
        """The kinds its nodes' GPUs are of, by name ("" for untyped GPUs)."""
        return sorted({kind for shape in self.shapes for kind, _ in shape.kinds})

    def per_gpu(self, kind: str) -> tuple[int, int] | None:
        """Cores and GB of memory per GPU that every node carrying the kind gives, for as many
        GPUs as it has (its cores and memory over all its GPUs); None: no node carries it."""
        carrying = [shape for shape in self.shapes if shape.gpus_of(kind)]
        if not carrying:
            return None
        cores = min(shape.cores // shape.gpus for shape in carrying)
        mem_gb = min(shape.mem_mb // 1024 // shape.gpus for shape in carrying)
        return cores, mem_gb

    @property
    def node_count(self) -> int:
        return sum(shape.count for shape in self.shapes)

    def nodes_with(self, *, gpus: int, cores: int, mem_mb: int, kind: str = ANY) -> int:
        """How many nodes of the partition each have all of this at once."""
        return sum(
            shape.count
            for shape in self.shapes
            if shape.gpus_of(kind) >= gpus and shape.cores >= cores and shape.mem_mb >= mem_mb
        )

    def fits_one_node(self, *, gpus: int, cores: int, mem_mb: int) -> bool:
        """Whether some node of the partition has all of this at once."""
        return self.nodes_with(gpus=gpus, cores=cores, mem_mb=mem_mb) > 0

    def fit(
        self,
        *,
        gpus: int,
        cores_per_gpu: int,
        mem_per_gpu_gb: int,
        runtime: int,
        gpu_type: str = ANY,
    ) -> Fit:
        """How a request of `gpus` per node of a kind (cores and memory following them) for
        `runtime` seconds fits this partition: the one rule the profiles and the batch jobs
        both keep."""
        cores, mem_mb = gpus * cores_per_gpu, gpus * mem_per_gpu_gb * 1024
        nodes = self.nodes_with(gpus=gpus, cores=cores, mem_mb=mem_mb, kind=gpu_type)
        short_of = ""
        if not nodes:
            # Which of the two no node has, for the form to say it at that field.
            cores_fit = self.nodes_with(gpus=gpus, cores=cores, mem_mb=0, kind=gpu_type) > 0
            mem_fits = self.nodes_with(gpus=gpus, cores=0, mem_mb=mem_mb, kind=gpu_type) > 0
            short_of = "memory" if cores_fit and not mem_fits else "cores"
            short_of = "both" if not cores_fit and not mem_fits else short_of
        return Fit(
            too_many_gpus=gpus > self.max_gpus_of(gpu_type),
            nodes_that_fit=nodes,
            over_max_time=self.max_time is not None and runtime > self.max_time,
            no_such_kind=gpu_type != ANY and gpu_type not in self.gpu_kinds,
            short_of=short_of,
        )


@dataclass(frozen=True)
class Fit:
    """How a request fits a partition (Partition.fit); callers word it for their fields."""

    too_many_gpus: bool  # more GPUs per node than any node of it has
    nodes_that_fit: int  # nodes that hold the GPUs with their cores and memory at once
    over_max_time: bool  # longer than the partition's MaxTime
    no_such_kind: bool = False  # no node of it has GPUs of the kind asked for
    # What no node has enough of, where none fits: "cores", "memory" or "both" ("" if one fits).
    short_of: str = ""


def gpus_in_gres(gres: str) -> int:
    """GPUs a node offers, from sinfo's gres column ("gpu:4", "gpu:a100:2(S:0-1),gpu:t4:1")."""
    return total_gpus(gres)


def parse_sinfo(text: str) -> dict[str, Partition]:
    """Partitions from `sinfo --noheader --format=SINFO_FORMAT`, with the shapes of their nodes."""
    found: dict[str, Partition] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.strip().split("|")
        if len(fields) != 6:
            raise SinfoFormatError(f"expected 6 fields in sinfo line {line!r}")
        name, limit, gres, cpus, mem, count = fields
        try:
            max_time = parse_slurm_time(limit)
            shape = NodeShape(
                gpus=gpus_in_gres(gres),
                kinds=tuple(sorted(gpu_kinds(gres).items())),
                cores=int(cpus.rstrip("+")),
                mem_mb=int(mem.rstrip("+")),
                count=int(count),
            )
        except ValueError as error:
            raise SinfoFormatError(f"sinfo line {line!r}: {error}") from None
        known = found.get(name)
        shapes = (*known.shapes, shape) if known else (shape,)
        found[name] = Partition(name=name, max_time=max_time, shapes=shapes)
    return found
