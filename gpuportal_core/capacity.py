"""Free GPUs, and when a choice would start: one snapshot of the cluster for every user.

The snapshot is one `sinfo` (each node's GPUs, used and total) and one `squeue` (the jobs
that hold or wait for GPUs). `LineEstimate` places the waiting jobs in priority order, each
at the first time its GPUs are free for its whole time limit (as Slurm's backfill does), then
the new choice after them. It is an estimate from the jobs' time limits, labelled as such:
jobs that end early make it start sooner.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import hostlist  # type: ignore[import-untyped]

from gpuportal_core.gres import ANY, gpu_kinds, of_kind, total_gpus
from gpuportal_core.reservations import Reservation
from gpuportal_core.slurm_time import limit_seconds, slurm_datetime
from gpuportal_core.words import count

# sinfo -N: node, partitions, GRES, GRES used, state.
NODES_FORMAT = "NodeList:|,Partition:|,Gres:|,GresUsed:|,StateLong:"
# squeue: id, state, partition, GRES per node, node count, time limit, end time, priority, nodes.
# The last two (account, user) count a group's GPUs in use against its limit
# (gpuportal_core.accounting).
JOBS_FORMAT = "%i|%T|%P|%b|%D|%l|%e|%Q|%N|%a|%u"
# Job states whose GPUs are taken. A job Slurm has just placed is CONFIGURING for a moment (its
# prolog, its nodes booting): left out, a queue that had just filled looked free (issue 20).
HOLDING = ("RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED")

# Node states whose GPUs can be given out (now, or when their jobs end).
_USABLE = ("idle", "mixed", "allocated", "completing")
# sinfo's flag for a node slurmctld cannot reach: Slurm places nothing on it. sinfo also prints
# a DOWN node that still holds a job's CPUs as "mixed*" (it rewrites any partly used node to
# MIXED, whatever its base state; seen in CI after a node was cut off), so the flag, not the word,
# tells such a node apart.
_NOT_RESPONDING = "*"
FAR_FUTURE = datetime.max


@dataclass(frozen=True)
class NodeGpus:
    name: str
    partitions: tuple[str, ...]
    total: int
    used: int
    gpu_type: str = ""  # the node's one kind; "mixed" where it has several (see `kinds`)
    usable: bool = True
    # Per kind (gpuportal_core.gres): its GPUs, and those in use. Empty: `total` and `used`
    # are all of one kind, `gpu_type`.
    kinds: tuple[tuple[str, int, int], ...] = ()

    @property
    def free(self) -> int:
        return max(0, self.total - self.used) if self.usable else 0

    def by_kind(self) -> dict[str, tuple[int, int]]:
        """Total and used GPUs per kind."""
        if self.kinds:
            return {kind: (total, used) for kind, total, used in self.kinds}
        return {self.gpu_type: (self.total, self.used)} if self.total else {}

    def total_of(self, kind: str) -> int:
        """The GPUs a request of this kind may take here (every GPU for ANY)."""
        return of_kind({k: total for k, (total, _) in self.by_kind().items()}, kind)

    def free_of(self, kind: str) -> int:
        if not self.usable:
            return 0
        if kind == ANY:
            return self.free
        total, used = self.by_kind().get(kind, (0, 0))
        return max(0, total - used)


@dataclass(frozen=True)
class GpuJob:
    """A job that holds GPUs (running: one of HOLDING) or waits for them (PENDING)."""

    job_id: str
    running: bool
    partition: str
    gpus_per_node: int
    node_count: int
    time_limit: int | None  # seconds; None: no limit
    end: datetime | None  # when a running job's time limit ends it
    priority: int
    nodes: tuple[str, ...] = ()
    account: str = ""
    user: str = ""
    gpu_type: str = ANY  # the kind it asked for

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.node_count


@dataclass
class _Hold:
    start: datetime
    end: datetime
    gpus: int


@dataclass
class _Node:
    total: int
    holds: list[_Hold] = field(default_factory=list)

    def used(self, moment: datetime) -> int:
        return sum(h.gpus for h in self.holds if h.start <= moment < h.end)

    def fits(self, gpus: int, start: datetime, end: datetime) -> bool:
        # Usage only rises where a hold starts: check the window's start and those points.
        points = [start] + [h.start for h in self.holds if start < h.start < end]
        return all(self.used(p) + gpus <= self.total for p in points)

    def runs_until(self, gpus: int, now: datetime) -> datetime | None:
        """How long a job of `gpus` started now could run here: until the first hold that
        leaves too few GPUs (FAR_FUTURE: no such hold); None if it cannot start now."""
        if self.used(now) + gpus > self.total:
            return None
        blocking = [
            h.start for h in self.holds if h.start > now and self.used(h.start) + gpus > self.total
        ]
        return min(blocking, default=FAR_FUTURE)

    def earliest(
        self, gpus: int, limit: int | None, now: datetime, before: datetime = FAR_FUTURE
    ) -> datetime | None:
        """The first time from `now` (and before `before`) these GPUs are free for `limit` s.

        Usage falls only where one of this node's own holds ends, so those are the only
        starts to try: a node that does not fit at one start does not fit until its next end.
        """
        for start in [now, *sorted({h.end for h in self.holds if h.end > now})]:
            if start >= before:
                return None
            end = start + timedelta(seconds=limit) if limit is not None else FAR_FUTURE
            if self.fits(gpus, start, end):
                return start
        return None


def gpus_in(gres: str) -> tuple[str, int]:
    """The GPU type and count: ("a100", 4) for "gpu:a100:4(S:0-1)"; ("", 0) without GPUs.

    A node with GPUs of several types counts them all, under the type "mixed".
    """
    kinds = gpu_kinds(gres)
    kind = next(iter(kinds)) if len(kinds) == 1 else ("mixed" if kinds else "")
    return kind, total_gpus(gres)


def parse_nodes(text: str) -> list[NodeGpus]:
    """Lines of sinfo -N -O NODES_FORMAT; a node listed once per partition is merged."""
    merged: dict[str, NodeGpus] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 5 or not parts[0]:
            continue
        name, partition, gres, used, state = parts[:5]
        gpu_type, total = gpus_in(gres)
        usable = state.rstrip("*~#!%$@^-+").lower() in _USABLE and _NOT_RESPONDING not in state
        before = merged.get(name)
        partitions = (
            (*before.partitions, partition.rstrip("*")) if before else (partition.rstrip("*"),)
        )
        in_use = gpu_kinds(used)
        kinds = tuple((kind, count, in_use.get(kind, 0)) for kind, count in gpu_kinds(gres).items())
        merged[name] = NodeGpus(
            name, partitions, total, total_gpus(used), gpu_type, usable, kinds if kinds else ()
        )
    return list(merged.values())


def expand_hostlist(text: str) -> tuple[str, ...]:
    """gpu[01-02,05],login1 -> (gpu01, gpu02, gpu05, login1); a[1-2]b[3-4] too.

    python-hostlist (NSC's, as pyslurm and ClusterShell users use) reads every form Slurm
    prints; one it cannot read is kept as one name rather than dropped.
    """
    try:
        return tuple(hostlist.expand_hostlist(text or ""))
    except hostlist.BadHostlist:
        return (text,)


def parse_jobs(text: str) -> list[GpuJob]:
    """Lines of squeue -o JOBS_FORMAT; jobs without GPUs are left out."""
    jobs = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 9:
            continue
        job_id, state, partition, gres, count, limit, end, priority, nodes = parts[:9]
        account, user = (parts[9], parts[10]) if len(parts) >= 11 else ("", "")
        kind, gpus = gpus_in(gres)
        if not gpus or state not in (*HOLDING, "PENDING"):
            continue
        jobs.append(
            GpuJob(
                job_id=job_id,
                running=state in HOLDING,
                partition=partition,
                gpus_per_node=gpus,
                node_count=int(count) if count.isdigit() else 1,
                time_limit=limit_seconds(limit),
                end=slurm_datetime(end),
                priority=int(priority) if priority.isdigit() else 0,
                nodes=expand_hostlist(nodes),
                account=account,
                user=user,
                gpu_type="" if kind == "mixed" else kind,
            )
        )
    return jobs


def free_gpus(nodes: Iterable[NodeGpus], partition: str) -> dict[str, tuple[int, int]]:
    """Free and total GPUs of the partition's usable nodes, per kind ("" if untyped)."""
    counts: dict[str, tuple[int, int]] = {}
    for node in nodes:
        if partition not in node.partitions or not node.total:
            continue
        for kind, (total, _) in node.by_kind().items():
            free, seen = counts.get(kind, (0, 0))
            counts[kind] = (free + node.free_of(kind), seen + (total if node.usable else 0))
    return counts


def _takes(job: GpuJob, line_kind: str, node: NodeGpus | None) -> bool:
    """Whether a job's GPUs count in the line of `line_kind`: every job's in the line of any
    kind; a job of that kind; and a job of any kind on a node (if known) of that one kind only.
    A job of any kind waiting in the queue may take this kind: it is counted, erring late."""
    if line_kind == ANY or job.gpu_type == line_kind:
        return True
    if job.gpu_type != ANY:
        return False
    return node is None or set(node.by_kind()) == {line_kind}


class LineEstimate:
    """A partition's waiting jobs placed once, highest priority first, each at the first time
    its GPUs are free for its whole time limit (as Slurm's backfill does): every waiting job's
    expected start, and when a new job would start behind them all.

    One per look at the cluster (ClusterSnapshot.line): the waiting page of every queued
    session and the spawn page of every user read it. Placing the line again for each of 200
    queued sessions took a third of the hub's CPU at rest (bench/scale.py, py-spy).
    """

    def __init__(
        self,
        nodes: Iterable[NodeGpus],
        jobs: Iterable[GpuJob],
        *,
        partition: str,
        now: datetime,
        reservations: Iterable[Reservation] = (),
        gpu_type: str = ANY,
    ) -> None:
        self.now = now
        known = {n.name: n for n in nodes}
        self._cluster = {
            n.name: _Node(n.total_of(gpu_type))
            for n in known.values()
            if partition in n.partitions and n.usable and n.total_of(gpu_type)
        }
        # A maintenance window holds all of its nodes' GPUs: no job may run into it.
        for reservation in reservations:
            if not reservation.maintenance or reservation.end <= now:
                continue
            for name in reservation.nodes:
                if name in self._cluster:
                    node = self._cluster[name]
                    node.holds.append(_Hold(reservation.start, reservation.end, node.total))
        waiting = []
        for job in jobs:
            if job.running:
                for name in job.nodes:
                    if name in self._cluster and _takes(job, gpu_type, known.get(name)):
                        hold = _Hold(now, job.end or FAR_FUTURE, job.gpus_per_node)
                        self._cluster[name].holds.append(hold)
            elif job.partition == partition and _takes(job, gpu_type, None):
                waiting.append(job)
        line = sorted(
            waiting, key=lambda j: (-j.priority, int(j.job_id) if j.job_id.isdigit() else 0)
        )
        self.order = [job.job_id for job in line]
        # In line order: each placed job holds its GPUs for the ones after it.
        self.starts: dict[str, datetime | None] = {
            job.job_id: _place(
                self._cluster, job.gpus_per_node, job.node_count, job.time_limit, now
            )
            for job in line
        }
        self._new: dict[tuple[int, int], datetime | None] = {}

    def longest_now(self, gpus: int) -> int | None:
        """The longest time limit (seconds) with which a new job of `gpus` GPUs on one node
        starts now, ahead of a maintenance window or a waiting job's planned start; 0 if it
        cannot start now at all, None if nothing limits it."""
        ends = [self._cluster[name].runs_until(gpus, self.now) for name in self._cluster]
        possible = [end for end in ends if end is not None]
        if not possible:
            return 0
        if FAR_FUTURE in possible:
            return None
        return int((max(possible) - self.now).total_seconds())

    def new_job_start(self, gpus: int, runtime: int) -> datetime | None:
        """When a new job of `gpus` GPUs on one node for `runtime` s could start (None: never),
        behind every waiting job."""
        key = (gpus, runtime)
        if key not in self._new:
            self._new[key] = _place(self._cluster, gpus, 1, runtime, self.now, hold=False)
        return self._new[key]


def _place(
    cluster: dict[str, _Node],
    gpus: int,
    count: int,
    limit: int | None,
    now: datetime,
    *,
    hold: bool = True,
) -> datetime | None:
    if count == 1:
        return _place_one(cluster, gpus, limit, now, hold=hold)
    ends = sorted({h.end for node in cluster.values() for h in node.holds if h.end > now})
    for start in [now, *ends]:
        if start == FAR_FUTURE:
            break
        end = start + timedelta(seconds=limit) if limit is not None else FAR_FUTURE
        fitting = [name for name, node in cluster.items() if node.fits(gpus, start, end)]
        if len(fitting) >= count:
            if hold:
                for name in fitting[:count]:
                    cluster[name].holds.append(_Hold(start, end, gpus))
            return start
    return None


def _place_one(
    cluster: dict[str, _Node], gpus: int, limit: int | None, now: datetime, *, hold: bool
) -> datetime | None:
    """_place for a one-node job (every session): the same start and node as trying every
    node at every end of any hold, found node by node at that node's own ends instead (a line
    of 200 queued sessions on 16 nodes took about a second of the hub's CPU to place)."""
    best: tuple[datetime, str] | None = None
    for name, node in cluster.items():
        # Ties go to the node first in order, as the full search's `fitting[:1]` does.
        start = node.earliest(gpus, limit, now, before=best[0] if best else FAR_FUTURE)
        if start is not None:
            best = (start, name)
    if best is None:
        return None
    start, name = best
    if hold:
        end = start + timedelta(seconds=limit) if limit is not None else FAR_FUTURE
        cluster[name].holds.append(_Hold(start, end, gpus))
    return start


def describe_start(start: datetime | None, now: datetime, gpus: int, gpu_type: str = ANY) -> str:
    """What the spawn page says of a choice: "starts now", or when Slurm could start it."""
    if start is None:
        what = count(gpus, f"{gpu_type} GPU" if gpu_type else "GPU")
        return f"No node of this partition has {what} that are up; ask the admins."
    minutes = round((start - now).total_seconds() / 60)
    if minutes <= 0:
        return "Starts now"
    when = start.strftime("%H:%M") if start.date() == now.date() else start.strftime("%a %H:%M")
    wait = f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"
    return (
        f"GPUs busy: expected start about {when} (in {wait}), estimated from running jobs' limits"
    )
