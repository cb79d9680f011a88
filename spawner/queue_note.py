"""The waiting page's note for a queued session: why it waits (Slurm's reason), its place in
line, the expected start and the time waited, with a bar that follows the wait."""

from __future__ import annotations

from datetime import datetime

from gpuportal_adapters.cluster_snapshot import ClusterSnapshot
from gpuportal_core.jobs import JobInfo
from gpuportal_core.queue_view import (
    queue_place,
    queue_progress,
    queued_words,
    span,
    why_queued,
)
from gpuportal_core.request import SpawnRequest
from gpuportal_core.slurm_time import slurm_datetime


async def queued_note(
    info: JobInfo,
    request: SpawnRequest,
    snapshot: ClusterSnapshot,
    *,
    waited: float,
    submitted: float,
) -> tuple[str, int]:
    """The note and the bar's percent. Never waits more than a second for the snapshot.

    submitted: when the job was submitted (monotonic): the look used is one taken after it.
    """
    taken = await snapshot.get_within(1.0, newer_than=submitted)
    now = datetime.now().replace(microsecond=0)
    if taken is None:
        # No look at the cluster has answered since the hub started (Slurm busy placing the
        # jobs that just filled it): say that the rest is coming, rather than stop at the reason.
        return (
            f"{why_queued(info.job_id, info.reason)} Its place in line and expected start "
            f"follow as soon as Slurm answers (waiting {span(waited)} so far).",
            15,
        )
    profile = request.profile
    place = queue_place(
        taken.line(profile.partition, profile.gpu_type),
        job_id=info.job_id,
        gpus=profile.gpus,
        runtime=request.runtime,
    )
    slurm_start = slurm_datetime(info.start)  # "N/A" until Slurm's backfill looked at it
    words = queued_words(
        place,
        job_id=info.job_id,
        reason=info.reason,
        partition=profile.partition,
        gpu_type=profile.gpu_type,
        slurm_start=slurm_start,
        waited=waited,
        now=now,
    )
    return words, queue_progress(waited, slurm_start or place.start, now)
