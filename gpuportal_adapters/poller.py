"""One squeue for all notebook jobs, shared by every spawner in the hub.

Stock batchspawner runs one squeue per server per poll (every 0.5 s while starting), so load on
slurmctld grows with the number of users. Here each spawner asks the poller for its job with
the staleness it can accept; the poller answers from one recent query covering every tracked
job, and concurrent askers share a single query in flight.

A stopped server's jobs found by their tag (TaggedJobs: a submission whose answer never came,
the session's Dask workers) are shared the same way, by user.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_core.jobs import JobInfo


class _SharedQuery:
    """One query in flight at a time: an asker it covers waits for it; one it does not cover
    waits for it too, then starts the next (the keys `_next_keys` names), shared the same way."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._covered: frozenset[str] = frozenset()
        self._fetched_at = float("-inf")
        self._inflight: asyncio.Task[None] | None = None
        self._inflight_keys: frozenset[str] = frozenset()
        self.queries = 0

    def _fresh(self, key: str, max_age: float) -> bool:
        return self._clock() - self._fetched_at <= max_age and key in self._covered

    def _next_keys(self) -> frozenset[str]:
        raise NotImplementedError

    async def _fetch(self, keys: frozenset[str]) -> None:
        raise NotImplementedError

    async def _refresh(self, key: str) -> None:
        # Join a query already under way; start one only if none covers this key.
        while self._inflight is not None and not self._inflight.done():
            covering = key in self._inflight_keys
            await asyncio.shield(self._inflight)
            if covering or key in self._covered:
                return
        keys = self._next_keys()
        task = asyncio.ensure_future(self._run(keys))
        self._inflight, self._inflight_keys = task, keys
        # Cleared by the task itself, so a cancelled waiter cannot leave a stale one behind.
        task.add_done_callback(self._clear_inflight)
        await asyncio.shield(task)

    async def _run(self, keys: frozenset[str]) -> None:
        self.queries += 1
        await self._fetch(keys)
        self._covered = keys
        self._fetched_at = self._clock()

    def _clear_inflight(self, task: asyncio.Task[None]) -> None:
        if self._inflight is task:
            self._inflight, self._inflight_keys = None, frozenset()
        if not task.cancelled():
            task.exception()  # mark retrieved: every waiter has already seen it


class JobPoller(_SharedQuery):
    def __init__(self, client: SlurmClient, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock)
        self.tagged = TaggedJobs(client, clock=clock)
        self._client = client
        self._tracked: set[str] = set()
        self._jobs: dict[str, JobInfo] = {}

    def track(self, job_id: str) -> None:
        self._tracked.add(job_id)

    def untrack(self, job_id: str) -> None:
        self._tracked.discard(job_id)

    @property
    def tracked(self) -> frozenset[str]:
        return frozenset(self._tracked)

    async def job(self, job_id: str, *, max_age: float) -> JobInfo | None:
        """The job as of at most max_age seconds ago; None once Slurm no longer lists it.

        Raises SlurmUnavailable when the controller cannot be asked: the caller must not read
        that as "the job has ended".
        """
        if not job_id:
            return None  # no job: never part of the shared query, which it would fail
        self.track(job_id)
        if not self._fresh(job_id, max_age):
            await self._refresh(job_id)
        return self._jobs.get(job_id)

    def _next_keys(self) -> frozenset[str]:
        return frozenset(self._tracked)  # every tracked job, not only those asked for now

    async def _fetch(self, keys: frozenset[str]) -> None:
        self._jobs = await self._client.jobs(keys)


class TaggedJobs(_SharedQuery):
    """The live tagged jobs of the users asked about, in one squeue for every concurrent asker.

    At the end of a course 300 stops at once each ran their own squeue for their server's tag,
    a third of the stop's Slurm commands, each waiting its turn behind the scancels
    (bench/scale.py: a stop waited 40 s for it). Now the users whose look is due when a query
    starts share it; one asked for meanwhile waits for it and then starts the next, with every
    user asked for since.
    """

    def __init__(self, client: SlurmClient, *, clock: Callable[[], float] = time.monotonic):
        super().__init__(clock)
        self._client = client
        self._waiting: set[str] = set()
        self._jobs: list[JobInfo] = []

    async def of(self, user: str, *tags: str, max_age: float) -> list[JobInfo]:
        """The user's live jobs carrying one of `tags`, as Slurm listed them at most max_age
        seconds ago (or in a query already under way for the user when asked). Raises
        SlurmUnavailable when the controller cannot be asked."""
        if not self._fresh(user, max_age):
            self._waiting.add(user)
            await self._refresh(user)
        return [job for job in self._jobs if job.user == user and job.comment in tags]

    def _next_keys(self) -> frozenset[str]:
        users = frozenset(self._waiting)
        self._waiting -= users
        return users

    async def _fetch(self, keys: frozenset[str]) -> None:
        self._jobs = await self._client.tagged(users=keys)
