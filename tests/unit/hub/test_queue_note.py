"""The waiting page's note while Slurm is too busy to answer a look at the queue (issue 20)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest

from gpuportal_adapters.cluster_snapshot import ClusterSnapshot
from gpuportal_core import capacity
from gpuportal_core.capacity import GpuJob, NodeGpus
from gpuportal_core.jobs import JobInfo
from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.request import SpawnRequest
from gpuportal_spawner.queue_note import queued_note

JOB = JobInfo("17", "PENDING", "Resources", "", "N/A", "alice")
REQUEST = SpawnRequest(ResourceProfile(slug="gpu-4", title="4 GPUs", gpus=4), 3600)


def test_a_hub_with_no_answer_yet_says_the_place_in_line_is_coming() -> None:
    async def slow() -> tuple[list[NodeGpus], list[GpuJob]]:
        await asyncio.sleep(30)  # slurmctld busy placing the jobs that just filled the nodes
        return [], []

    async def note() -> tuple[str, int]:
        snapshot = ClusterSnapshot(slow)
        try:
            return await queued_note(JOB, REQUEST, snapshot, waited=3, submitted=0.0)
        finally:
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()

    message, percent = asyncio.run(note())
    assert message == (
        "Job 17 is queued: waiting for GPUs to become free. Its place in line and expected "
        "start follow as soon as Slurm answers (waiting 3 s so far)."
    )
    assert percent == 15


def test_first_in_its_partition_is_never_told_others_are_ahead() -> None:
    """Slurm says Priority when higher-ranked jobs wait elsewhere (another partition's nodes);
    first in its own partition's line, the note must not say others are ahead of it."""
    node = NodeGpus("gpu01", partitions=("gpu",), total=4, used=4)
    job = JobInfo("18", "PENDING", "Priority", "", "N/A", "alice")

    async def taken() -> tuple[list[NodeGpus], list[GpuJob]]:
        return [node], []

    message, _ = asyncio.run(
        queued_note(job, REQUEST, ClusterSnapshot(taken), waited=0, submitted=-1.0)
    )
    assert message.startswith("Job 18 is queued: waiting for the scheduler to place it. 1st of")
    assert "higher priority" not in message


def test_the_notes_of_many_queued_sessions_place_the_line_once_per_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """200 queued sessions' notes from one look: the partition's line is placed once (each
    placing it again took a third of the hub's CPU at rest at 300 users), and each session
    still gets its own place and start."""
    placed: list[str] = []
    real = capacity.LineEstimate.__init__

    def counted(self: capacity.LineEstimate, *args: Any, **kwargs: Any) -> None:
        placed.append(kwargs["partition"])
        real(self, *args, **kwargs)

    monkeypatch.setattr(capacity.LineEstimate, "__init__", counted)
    node = NodeGpus("gpu01", partitions=("gpu",), total=4, used=4)
    end = datetime.now() + timedelta(hours=1)
    running = GpuJob("1", True, "gpu", 4, 1, 3600, end, 0, ("gpu01",))
    queued = [GpuJob(str(id), False, "gpu", 4, 1, 3600, None, 1000 - id) for id in range(2, 202)]

    async def taken() -> tuple[list[NodeGpus], list[GpuJob]]:
        return [node], [running, *queued]

    async def notes() -> list[str]:
        snapshot = ClusterSnapshot(taken)
        return [
            (await queued_note(_pending(job.job_id), REQUEST, snapshot, waited=0, submitted=-1))[0]
            for job in queued
        ]

    said = asyncio.run(notes())
    assert placed == ["gpu"]
    assert "1st of 200 waiting" in said[0] and "200th of 200 waiting" in said[-1]


def _pending(job_id: str) -> JobInfo:
    return JobInfo(job_id, "PENDING", "Priority", "", "N/A", "alice")
