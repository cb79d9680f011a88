"""The waiting page's note for a queued session: why it waits (Slurm's reason), its place in
line, the expected start and the time waited, with a bar that follows the wait."""

from __future__ import annotations

from datetime import datetime

from gpuportal_core.cluster_snapshot import ClusterSnapshot
from gpuportal_core.jobs import JobInfo, describe_reason
from gpuportal_core.queue_view import describe_queue, queue_place, queue_progress, span
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
    why = f"Job {info.job_id} is queued: {describe_reason(info.reason)}."
    taken = await snapshot.get_within(1.0, newer_than=submitted)
    now = datetime.now().replace(microsecond=0)
    if taken is None:
        # No look at the cluster has answered since the hub started (Slurm busy placing the
        # jobs that just filled it): say that the rest is coming, rather than stop at the reason.
        return (
            f"{why} Its place in line and expected start follow as soon as Slurm answers "
            f"(waiting {span(waited)} so far).",
            15,
        )
    profile = request.profile
    place = queue_place(
        taken.nodes,
        taken.jobs,
        job_id=info.job_id,
        partition=profile.partition,
        gpus=profile.gpus,
        runtime=request.runtime,
        now=now,
    )
    if info.reason == "Priority" and place.position == 1:
        # First in its partition's line: the jobs Slurm ranks higher wait for other nodes
        # (another partition's), so "others are ahead" would contradict "1st of N".
        why = f"Job {info.job_id} is queued: {describe_reason('None')}."
    slurm_start = slurm_datetime(info.start)  # "N/A" until Slurm's backfill looked at it
    words = describe_queue(
        place, partition=profile.partition, slurm_start=slurm_start, waited=waited, now=now
    )
    return f"{why} {words}", queue_progress(waited, slurm_start or place.start, now)
