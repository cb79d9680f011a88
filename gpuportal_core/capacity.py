"""Free GPUs, and when a choice would start: one snapshot of the cluster for every user.

The snapshot is one `sinfo` (each node's GPUs, used and total) and one `squeue` (the jobs
that hold or wait for GPUs). `LineEstimate` places the waiting jobs in priority order, each
at the first time its GPUs are free for its whole time limit (as Slurm's backfill does), then
the new choice after them. It is an estimate from the jobs' time limits, labelled as such:
jobs that end early make it start sooner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import hostlist  # type: ignore[import-untyped]

from gpuportal_core.partitions import gpus_in_gres
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

_GPU = re.compile(r"gpu(?::([^:,()]+))?:(\d+)")
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
    gpu_type: str = ""
    usable: bool = True

    @property
    def free(self) -> int:
        return max(0, self.total - self.used) if self.usable else 0


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
    types = {kind or "" for kind, _ in _GPU.findall(gres or "")}
    kind = types.pop() if len(types) == 1 else ("mixed" if types else "")
    return kind, gpus_in_gres(gres or "")


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
        merged[name] = NodeGpus(name, partitions, total, gpus_in(used)[1], gpu_type, usable)
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
        gpus = gpus_in(gres)[1]
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
            )
        )
    return jobs


def free_gpus(nodes: Iterable[NodeGpus], partition: str) -> dict[str, tuple[int, int]]:
    """Free and total GPUs of the partition's usable nodes, per GPU type ("" if untyped)."""
    counts: dict[str, tuple[int, int]] = {}
    for node in nodes:
        if partition in node.partitions and node.total:
            free, total = counts.get(node.gpu_type, (0, 0))
            counts[node.gpu_type] = (free + node.free, total + (node.total if node.usable else 0))
    return counts


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
    ) -> None:
        self.now = now
        self._cluster = {
            n.name: _Node(n.total)
            for n in nodes
            if partition in n.partitions and n.usable and n.total
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
                    if name in self._cluster:
                        hold = _Hold(now, job.end or FAR_FUTURE, job.gpus_per_node)
                        self._cluster[name].holds.append(hold)
            elif job.partition == partition:
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


def describe_start(start: datetime | None, now: datetime, gpus: int) -> str:
    """What the spawn page says of a choice: "starts now", or when Slurm could start it."""
    if start is None:
        return f"No node of this partition has {count(gpus, 'GPU')} that are up; ask the admins."
    minutes = round((start - now).total_seconds() / 60)
    if minutes <= 0:
        return "Starts now"
    when = start.strftime("%H:%M") if start.date() == now.date() else start.strftime("%a %H:%M")
    wait = f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"
    return (
        f"GPUs busy: expected start about {when} (in {wait}), estimated from running jobs' limits"
    )
