"""The waiting page's note while Slurm is too busy to answer a look at the queue (issue 20)."""

from __future__ import annotations

import asyncio

from gpuportal_core.capacity import GpuJob, NodeGpus
from gpuportal_core.cluster_snapshot import ClusterSnapshot
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
