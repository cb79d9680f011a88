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


class JobPoller:
    def __init__(self, client: SlurmClient, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.tagged = TaggedJobs(client, clock=clock)
        self._client = client
        self._clock = clock
        self._tracked: set[str] = set()
        self._jobs: dict[str, JobInfo] = {}
        self._covered: frozenset[str] = frozenset()
        self._fetched_at = float("-inf")
        self._inflight: asyncio.Task[None] | None = None
        self._inflight_ids: frozenset[str] = frozenset()
        self.queries = 0

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
        fresh = self._clock() - self._fetched_at <= max_age
        if not fresh or job_id not in self._covered:
            await self._refresh(job_id)
        return self._jobs.get(job_id)

    async def _refresh(self, job_id: str) -> None:
        # Join a query already under way; start one only if none covers this job.
        while self._inflight is not None and not self._inflight.done():
            covering = job_id in self._inflight_ids
            await asyncio.shield(self._inflight)
            if covering or job_id in self._covered:
                return
        ids = frozenset(self._tracked)
        task = asyncio.ensure_future(self._fetch(ids))
        self._inflight, self._inflight_ids = task, ids
        # Cleared by the task itself, so a cancelled waiter cannot leave a stale one behind.
        task.add_done_callback(self._clear_inflight)
        await asyncio.shield(task)

    def _clear_inflight(self, task: asyncio.Task[None]) -> None:
        if self._inflight is task:
            self._inflight, self._inflight_ids = None, frozenset()
        if not task.cancelled():
            task.exception()  # mark retrieved: every waiter has already seen it

    async def _fetch(self, ids: frozenset[str]) -> None:
        self.queries += 1
        jobs = await self._client.jobs(ids)
        self._jobs = jobs
        self._covered = ids
        self._fetched_at = self._clock()


class TaggedJobs:
    """The live tagged jobs of the users asked about, in one squeue for every concurrent asker.

    At the end of a course 300 stops at once each ran their own squeue for their server's tag,
    a third of the stop's Slurm commands, each waiting its turn behind the scancels
    (bench/scale.py: a stop waited 40 s for it). Now the users whose look is due when a query
    starts share it; one asked for meanwhile waits for it and then starts the next, with every
    user asked for since.
    """

    def __init__(self, client: SlurmClient, *, clock: Callable[[], float] = time.monotonic):
        self._client = client
        self._clock = clock
        self._waiting: set[str] = set()
        self._jobs: list[JobInfo] = []
        self._covered: frozenset[str] = frozenset()
        self._fetched_at = float("-inf")
        self._inflight: asyncio.Task[None] | None = None
        self._inflight_users: frozenset[str] = frozenset()
        self.queries = 0

    async def of(self, user: str, *tags: str, max_age: float) -> list[JobInfo]:
        """The user's live jobs carrying one of `tags`, as Slurm listed them at most max_age
        seconds ago (or in a query already under way for the user when asked). Raises
        SlurmUnavailable when the controller cannot be asked."""
        fresh = self._clock() - self._fetched_at <= max_age
        if not fresh or user not in self._covered:
            await self._refresh(user)
        return [job for job in self._jobs if job.user == user and job.comment in tags]

    async def _refresh(self, user: str) -> None:
        self._waiting.add(user)
        while self._inflight is not None and not self._inflight.done():
            covering = user in self._inflight_users
            await asyncio.shield(self._inflight)
            if covering:
                return
        users = frozenset(self._waiting)
        self._waiting -= users
        task = asyncio.ensure_future(self._fetch(users))
        self._inflight, self._inflight_users = task, users
        task.add_done_callback(self._clear_inflight)
        await asyncio.shield(task)

    def _clear_inflight(self, task: asyncio.Task[None]) -> None:
        if self._inflight is task:
            self._inflight, self._inflight_users = None, frozenset()
        if not task.cancelled():
            task.exception()  # mark retrieved: every waiter has already seen it

    async def _fetch(self, users: frozenset[str]) -> None:
        self.queries += 1
        self._jobs = await self._client.tagged(users=users)
        self._covered = users
        self._fetched_at = self._clock()
