"""The hub's view of its servers' jobs, read from the one shared queue read.

Stock batchspawner runs one squeue per server per poll (every 0.5 s while starting), so load on
slurmctld grows with the number of users. Here each spawner asks for its job with the staleness
it can accept, and the answer comes from the hub's and the portal's one reader of every job
(gpuportal_adapters.queue_reader): concurrent askers share one squeue, and a read the portal
took recently enough serves the hub too.

A stopped server's jobs found by their tag (TaggedJobs: a submission whose answer never came,
the session's Dask workers) come from the same read.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gpuportal_adapters.queue_reader import QueueReader
from gpuportal_core.jobs import JobInfo


class JobPoller:
    def __init__(self, reader: QueueReader, *, clock: Callable[[], float] = time.time) -> None:
        self.reader = reader
        self.tagged = TaggedJobs(reader)
        self._clock = clock
        # Each job asked about, with when it was first: a read from before then may predate the
        # job's submission, so it does not say the job has ended.
        self._since: dict[str, float] = {}

    def track(self, job_id: str) -> None:
        self._since.setdefault(job_id, self._clock())

    def untrack(self, job_id: str) -> None:
        self._since.pop(job_id, None)

    @property
    def tracked(self) -> frozenset[str]:
        return frozenset(self._since)

    @property
    def queries(self) -> int:
        return self.reader.queries

    async def job(self, job_id: str, *, max_age: float) -> JobInfo | None:
        """The job as of at most max_age seconds ago; None once Slurm no longer lists it.

        Raises SlurmUnavailable when the controller cannot be asked: the caller must not read
        that as "the job has ended".
        """
        if not job_id:
            return None
        self.track(job_id)
        read = await self.reader.read(max_age=max_age, newer_than=self._since[job_id])
        return read.jobs.get(job_id)


class TaggedJobs:
    """The live jobs of a user that carry one of the given tags, from the shared read.

    The stops under way at once (300 at the end of a course) share one squeue: one each, every
    one waiting its turn behind the scancels, held a stop 40 s (bench/scale.py).
    """

    def __init__(self, reader: QueueReader) -> None:
        self._reader = reader

    async def of(
        self, user: str, *tags: str, max_age: float, newer_than: float = 0.0
    ) -> list[JobInfo]:
        """The user's live jobs carrying one of `tags`, as Slurm listed them at most max_age
        seconds ago (or in a read under way), and not before `newer_than` (wall-clock). Raises
        SlurmUnavailable when the controller cannot be asked."""
        read = await self._reader.read(max_age=max_age, newer_than=newer_than)
        return [
            job
            for job in read.jobs.values()
            if job.user == user and job.comment in tags and job.described.alive
        ]
