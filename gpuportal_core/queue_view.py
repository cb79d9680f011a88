"""What the waiting page says of a queued session: its place in line, when it may start, how
long it has waited, and a progress bar that follows the expected wait (issue 11, 2).

From the shared cluster snapshot (gpuportal_adapters.cluster_snapshot), so it costs Slurm
nothing per page. A job the snapshot does not show yet (submitted within its TTL) counts as last
in line.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpuportal_core.capacity import LineEstimate
from gpuportal_core.jobs import describe_reason


@dataclass(frozen=True)
class QueuePlace:
    position: int  # 1: next to start among the jobs waiting for the partition
    waiting: int  # jobs waiting for the partition, this one included
    start: datetime | None  # the estimate from the snapshot; None: it cannot start


def queue_place(line: LineEstimate, *, job_id: str, gpus: int, runtime: int) -> QueuePlace:
    """The job's place in its partition's line (LineEstimate: the line placed once per look);
    a job the look does not show yet comes last, as a new job of `gpus` for `runtime` s."""
    if job_id in line.starts:
        position = line.order.index(job_id) + 1
        return QueuePlace(position, len(line.order), line.starts[job_id])
    waiting = len(line.order) + 1
    return QueuePlace(waiting, waiting, line.new_job_start(gpus, runtime))


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def span(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def describe_queue(
    place: QueuePlace,
    *,
    partition: str,
    slurm_start: datetime | None,
    waited: float,
    now: datetime,
    gpu_type: str = "",
) -> str:
    """ "2nd of 3 waiting for partition gpu. Expected start about 14:35 (in 25 min, Slurm's
    estimate). Waiting 1 min so far." Slurm's own estimate wins when it has one. A job of one
    kind waits in that kind's line: "1st of 2 waiting for h100 GPUs in partition gpu." """
    what = f"{gpu_type} GPUs in partition" if gpu_type else "partition"
    line = f"{_ordinal(place.position)} of {place.waiting} waiting for {what} {partition}."
    start, source = (slurm_start, "Slurm's estimate") if slurm_start else (
        place.start, "estimated from the running jobs' time limits"
    )  # fmt: skip
    if start is not None and start <= now:
        line += " It should start any moment."
    elif start is not None:
        when = start.strftime("%H:%M") if start.date() == now.date() else start.strftime("%a %H:%M")
        line += (
            f" Expected start about {when} (in {span((start - now).total_seconds())}, {source})."
        )
    return f"{line} Waiting {span(waited)} so far."


def why_queued(job_id: str, reason: str) -> str:
    """ "Job 12 is queued: your group is at its GPU limit: ..." (Slurm's reason in words)."""
    return f"Job {job_id} is queued: {describe_reason(reason)}."


def queued_words(
    place: QueuePlace,
    *,
    job_id: str,
    reason: str,
    partition: str,
    gpu_type: str,
    slurm_start: datetime | None,
    waited: float,
    now: datetime,
) -> str:
    """What a queued job waits for, in the waiting page's words: Slurm's reason, its place in
    line, the expected start, the time waited. The same for a session and a notebook job."""
    # First in its partition's line: the jobs Slurm ranks higher wait for other nodes (another
    # partition's), so "others are ahead" (Priority) would contradict "1st of N".
    if reason == "Priority" and place.position == 1:
        reason = "None"
    words = describe_queue(
        place,
        partition=partition,
        gpu_type=gpu_type,
        slurm_start=slurm_start,
        waited=waited,
        now=now,
    )
    return f"{why_queued(job_id, reason)} {words}"


def queue_progress(waited: float, start: datetime | None, now: datetime) -> int:
    """The bar while queued, 15 to 60: the share of the expected wait that has passed."""
    if start is None:
        return 15
    remaining = max(0.0, (start - now).total_seconds())
    share = waited / (waited + remaining) if waited + remaining > 0 else 1.0
    return 15 + round(45 * share)
