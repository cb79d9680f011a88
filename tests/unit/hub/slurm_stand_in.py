"""Slurm as the session spawner sees it (squeue by id through the hub's poller, by tag, scancel),
and a GpuSlurmSpawner over it: for the unit tests of the spawner's lifecycle
(test_session_job.py: poll, start; test_session_stop.py: stop). A test module imports
`no_waiting` to make the spawner's waits instant."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from traitlets.config import Config

from gpuportal_adapters.slurm import SlurmUnavailable
from gpuportal_core.jobs import JobInfo
from gpuportal_spawner import session_job
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner

TAG = "gpuportal:session:local:alice:"


def info(state: str, job_id: str = "7") -> JobInfo:
    return JobInfo(job_id, state, "None", "gpu01", "N/A", "alice", "8:00:00", "gpu01", TAG)


class FakeSlurm:
    """Slurm as the spawner sees it: squeue by id (the poller), by tag, and scancel."""

    def __init__(self, answer: JobInfo | Exception | None, tagged: list[JobInfo] | None = None):
        self.answer = answer
        self.tagged_jobs = tagged or []
        self.asked = 0
        self.cancelled: list[str] = []
        self.cancel_fails = False

    async def job(self, job_id: str, *, max_age: float) -> JobInfo | None:
        self.asked += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def untrack(self, job_id: str) -> None:
        pass

    async def tagged(self, *tags: str, user: str = "") -> list[JobInfo]:
        return [job for job in self.tagged_jobs if job.comment in tags]

    async def cancel(self, job_id: str, *, user: str) -> None:
        if self.cancel_fails:
            raise SlurmUnavailable(["scancel"], 1, "timed out")
        self.cancelled.append(job_id)

    async def jobs(self, job_ids: set[str]) -> dict[str, JobInfo]:
        return {job_id: info("CANCELLED", job_id) for job_id in job_ids}

    async def remove_token(self) -> None:
        pass


class FakePoller:
    """The hub's shared poller over the fake: by id, and tagged jobs (shared by the stops)."""

    def __init__(self, fake: FakeSlurm) -> None:
        self.fake = fake
        self.tagged = self  # poller.tagged.of(...)
        self.job = fake.job
        self.untrack = fake.untrack

    async def of(
        self, user: str, *tags: str, max_age: float, newer_than: float = 0.0
    ) -> list[JobInfo]:
        return await self.fake.tagged(*tags, user=user)


class Spawner(GpuSlurmSpawner):
    fake: FakeSlurm

    @property
    def slurm(self) -> Any:
        return self.fake

    @property
    def poller(self) -> Any:
        return FakePoller(self.fake)

    @property
    def files(self) -> Any:
        return self.fake


def spawner(fake: FakeSlurm, *, stage: str, job_id: str = "7") -> Spawner:
    made = Spawner(user=SimpleNamespace(name="alice"), config=Config())
    made.fake = fake
    made.load_state({"job_id": job_id, "stage": stage} if job_id else {"stage": stage})
    return made


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    async def instant(_: float) -> None:
        return None

    monkeypatch.setattr(session_job.asyncio, "sleep", instant)
