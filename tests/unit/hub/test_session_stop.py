"""The spawner's stop, with the Slurm boundary replaced (tests/unit/hub/slurm_stand_in.py): what
it cancels (its job, one found by its tag, its session's Dask workers, never a handed-over
job), how it waits for the end, and what it leaves said."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from gpuportal_core.culling import Reason
from gpuportal_core.jobs import JobInfo
from gpuportal_core.lifecycle import Stage
from tests.unit.hub.slurm_stand_in import FakeSlurm, info, no_waiting, spawner

__all__ = ["no_waiting"]  # autouse: the stop's waits are instant


def test_a_handed_over_job_is_left_to_the_resume_by_a_stop() -> None:
    fake = FakeSlurm(info("PENDING"))
    made = spawner(fake, stage="queued")
    asyncio.run(made.poll_session(hub_check=True))
    asyncio.run(made.stop())
    assert fake.cancelled == []
    assert made.stage is Stage.HANDED_OVER


def test_a_stop_cancels_its_job_and_one_found_by_its_tag_and_leaves_no_words() -> None:
    fake = FakeSlurm(info("PENDING"), tagged=[info("PENDING", "8")])
    made = spawner(fake, stage="queued")
    asyncio.run(made.stop())
    assert fake.cancelled == ["7", "8"]
    assert (made.stage, made.note) == (Stage.ENDED, "")


def test_a_stop_cancels_the_dask_workers_of_its_session_only() -> None:
    def worker(job_id: str, server: str) -> JobInfo:
        job = info("RUNNING", job_id)
        return dataclasses.replace(job, comment=f"gpuportal:dask:local:alice:{server}")

    fake = FakeSlurm(info("RUNNING"), tagged=[worker("8", ""), worker("9", "other")])
    made = spawner(fake, stage="ready")
    asyncio.run(made.stop())
    assert fake.cancelled == ["7", "8"]


def test_a_stop_waits_for_its_jobs_end_through_the_shared_poller() -> None:
    """Not a squeue of its own per look: stops under way at once share the poller's."""
    fake = FakeSlurm(info("RUNNING"), tagged=[info("RUNNING", "8")])
    answers = {"7": [info("COMPLETING"), info("CANCELLED")], "8": [None, None]}
    asked: list[tuple[str, float]] = []
    untracked: list[str] = []

    async def job(job_id: str, *, max_age: float) -> JobInfo | None:
        asked.append((job_id, max_age))
        return answers[job_id].pop(0)

    async def jobs(job_ids: set[str]) -> dict[str, JobInfo]:
        raise AssertionError("a squeue of the stop's own")

    fake.job = job  # type: ignore[method-assign]
    fake.jobs = jobs  # type: ignore[method-assign]
    fake.untrack = untracked.append  # type: ignore[method-assign]
    made = spawner(fake, stage="ready")
    asyncio.run(made.stop())
    assert fake.cancelled == ["7", "8"]
    assert sorted(asked) == [("7", 0.0), ("7", 0.5), ("8", 0.0), ("8", 0.5)]
    assert {"7", "8"} <= set(untracked)
    assert made.stage is Stage.ENDED


def test_a_culled_stop_says_which_limit() -> None:
    made = spawner(FakeSlurm(info("RUNNING")), stage="ready")
    made.cull_limits = made.cull_limits.__class__(idle=3600)
    made.cull_mark = (Reason.IDLE, time.time())
    asyncio.run(made.stop())
    assert made.note.startswith("Your session (job 7) was stopped after 1 h without use")


def test_a_cancel_slurm_never_answers_is_said() -> None:
    fake = FakeSlurm(info("RUNNING"))
    fake.cancel_fails = True
    made = spawner(fake, stage="ready")
    asyncio.run(made.stop())
    assert made.note.startswith("Slurm did not answer the cancel of job 7")
