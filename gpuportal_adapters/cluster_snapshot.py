"""One view of the cluster's GPUs for every user, taken at most once per TTL.

Whoever asks while a snapshot is being taken waits for that one (single flight), so a hundred
spawn pages cost one sinfo and one squeue per TTL. If Slurm does not answer, the last snapshot
is kept (its `as_of` says how old it is).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.capacity import GpuJob, LineEstimate, NodeGpus
from gpuportal_core.reservations import Reservation


@dataclass(frozen=True)
class Snapshot:
    nodes: list[NodeGpus]
    jobs: list[GpuJob]
    as_of: datetime  # local time, as Slurm prints its times
    reservations: list[Reservation] = field(default_factory=list)
    _lines: dict[tuple[str, str], LineEstimate] = field(
        default_factory=dict, compare=False, repr=False
    )

    def line(self, partition: str, gpu_type: str = "") -> LineEstimate:
        """The line of a partition's GPUs of one kind ("": any) as of this look, placed once for
        every page that reads it."""
        key = (partition, gpu_type)
        if key not in self._lines:
            self._lines[key] = LineEstimate(
                self.nodes,
                self.jobs,
                partition=partition,
                now=self.as_of,
                reservations=self.reservations,
                gpu_type=gpu_type,
            )
        return self._lines[key]


Take = Callable[[], Awaitable[tuple[list[NodeGpus], list[GpuJob]]]]
TakeReservations = Callable[[], Awaitable[list[Reservation]]]


class ClusterSnapshot:
    def __init__(
        self, take: Take, *, ttl: float = 10.0, reservations: TakeReservations | None = None
    ) -> None:
        self._take = take
        self._take_reservations = reservations
        self._ttl = ttl
        self._last: Snapshot | None = None
        # When the last look finished (monotonic), answered or not: callers that come while a
        # look is under way wait for it, rather than take the one before.
        self._done = 0.0
        self._lock = asyncio.Lock()
        self.queries = 0  # how many times Slurm was asked (the bench reads it)

    @classmethod
    def of(cls, slurm: SlurmClient, *, ttl: float = 10.0) -> ClusterSnapshot:
        """The look the hub's spawn page and the portal's jobs API take: the GPU nodes, the
        GPU jobs and the reservations, from this Slurm client."""

        async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
            return await slurm.gpu_nodes(), await slurm.gpu_jobs()

        async def reservations() -> list[Reservation]:
            return await slurm.reservations()

        return cls(take, ttl=ttl, reservations=reservations)

    async def get(self, *, newer_than: float = 0.0) -> Snapshot | None:
        """The current snapshot (None only if Slurm has never answered).

        newer_than: a monotonic time the look must have finished after, e.g. a job's
        submission: a look from before it cannot know that job.
        """
        if self._fresh(newer_than):
            return self._last
        async with self._lock:
            if self._fresh(newer_than):
                return self._last
            self.queries += 1
            try:
                nodes, jobs = await self._take()
                reservations = await self._take_reservations() if self._take_reservations else []
                now = datetime.now().replace(microsecond=0)
                self._last = Snapshot(nodes, jobs, now, reservations)
            except SlurmError:
                pass  # keep the last snapshot; its as_of says how old it is
            finally:
                self._done = time.monotonic()
            return self._last

    async def get_within(
        self, seconds: float, *, newer_than: float = 0.0, first: bool = False
    ) -> Snapshot | None:
        """As get(), but a page never waits longer than `seconds` for a slow Slurm: then it
        gets the last snapshot, and the look goes on in the background for the next caller.

        first: with no last snapshot to fall back on, wait for this look (a spawn that needs the
        nodes: at a hub's start, during a burst of spawns, the first look can take longer than
        `seconds`, and None would fail the spawn as if Slurm did not answer)."""
        look = asyncio.shield(self.get(newer_than=newer_than))
        try:
            return await asyncio.wait_for(look, seconds)
        except TimeoutError:
            if first and self._last is None:
                return await self.get(newer_than=newer_than)
            return self._last

    def _fresh(self, newer_than: float = 0.0) -> bool:
        done = self._done
        return done > newer_than and done > 0 and time.monotonic() - done < self._ttl
