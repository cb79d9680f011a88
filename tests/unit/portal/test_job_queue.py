"""A waiting job's words in the jobs API (gpuportal_portal.job_queue): the hub's waiting page's
words for a session (why, place in line, expected start), for a one-node job; Slurm's reason
alone for a job on several nodes, or before Slurm has answered a look."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from gpuportal_adapters.slurm import SlurmError
from gpuportal_core.capacity import GpuJob, NodeGpus
from gpuportal_portal.job_queue import QueueView
from gpuportal_portal.models import JobRecord, utcnow

GROUP = "your group is at its GPU limit: it starts as your group's other jobs end"
SOON = datetime.now().replace(microsecond=0) + timedelta(minutes=30)


class Cluster:
    """Slurm's look: one node of 4 GPUs, all held by a job that ends in 30 minutes, and two
    jobs waiting for it: 51 (ahead) and 52."""

    def __init__(self, answers: bool = True) -> None:
        self.answers = answers

    async def gpu_nodes(self) -> list[NodeGpus]:
        if not self.answers:
            raise SlurmError(["sinfo"], 1, "slurm_load_partitions: Unable to contact")
        return [NodeGpus("gpu01", ("gpu",), 4, 4)]

    async def gpu_jobs(self) -> list[GpuJob]:
        return [
            GpuJob("50", True, "gpu", 4, 1, 3600, SOON, 0, ("gpu01",)),
            GpuJob("51", False, "gpu", 4, 1, 3600, None, 900),
            GpuJob("52", False, "gpu", 2, 1, 3600, None, 500),
        ]

    async def reservations(self) -> list[Any]:
        return []


def _waiting(job_id: str, reason: str, nodes: int = 1) -> JobRecord:
    return JobRecord(
        id=int(job_id), user="alice", name="nb", launcher="notebook", output="/o/nb-1.out",
        request={"nodes": nodes, "gpus_per_node": 2, "runtime": "01:00:00", "partition": "gpu"},
        script="", slurm_job_id=job_id, state="PENDING", reason=reason, expected_start="",
        submitted_at=utcnow() - timedelta(minutes=3),
    )  # fmt: skip


def test_a_one_node_job_gets_its_place_in_line_in_the_waiting_pages_words() -> None:
    queue = QueueView(Cluster(), default_partition="gpu")  # type: ignore[arg-type]
    said = asyncio.run(queue.words([_waiting("52", "AssocGrpGRES")]))
    assert said[52].startswith(
        f"Job 52 is queued: {GROUP}. 2nd of 2 waiting for partition gpu. Expected start about "
    )
    assert said[52].endswith("Waiting 3 min so far.")


def test_several_nodes_or_no_look_get_slurms_reason_alone() -> None:
    queue = QueueView(Cluster(), default_partition="gpu")  # type: ignore[arg-type]
    said = asyncio.run(queue.words([_waiting("52", "AssocGrpGRES", nodes=2)]))
    assert said[52] == f"Job 52 is queued: {GROUP}. Waiting 3 min so far."
    silent = QueueView(Cluster(answers=False), default_partition="gpu")  # type: ignore[arg-type]
    assert asyncio.run(silent.words([_waiting("52", "Resources")])) == {
        52: "Job 52 is queued: waiting for GPUs to become free. Waiting 3 min so far."
    }
    # Nothing for a job that does not wait.
    running = _waiting("53", "None")
    running.state = "RUNNING"
    assert asyncio.run(queue.words([running])) == {}


def test_a_run_waiting_for_its_time_or_not_looked_at_yet_has_no_place() -> None:
    queue = QueueView(Cluster(), default_partition="gpu")  # type: ignore[arg-type]
    begins = _waiting("52", "BeginTime")
    begins.expected_start = (SOON + timedelta(hours=1)).isoformat()
    said = asyncio.run(queue.words([begins, _waiting("51", "")]))
    when = (SOON + timedelta(hours=1)).strftime("%a %H:%M")
    assert said[52] == (
        "Job 52 is queued: waiting for its requested start time. Expected start about "
        f"{when} (Slurm's estimate). Waiting 3 min so far."
    )
    assert said[51] == (
        "Job 51 is queued: waiting for the scheduler to place it. Waiting 3 min so far."
    )
