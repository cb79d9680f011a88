"""A waiting job's place in line, in the words of the hub's waiting page: "Job 12 is queued:
your group is at its GPU limit: ... 2nd of 3 waiting for a100 GPUs in partition gpu. Expected
start about 14:35 (in 25 min, Slurm's estimate). Waiting 3 min so far."

The same words as a session's (gpuportal_core.queue_view.queued_words), from one look at the
cluster per TTL for every caller of the jobs API (gpuportal_adapters.cluster_snapshot, as the
hub's spawn page). The place is a one-node job's: a job on several nodes waits for several
nodes at once, which the line does not model, so it gets Slurm's reason and estimate alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gpuportal_adapters.cluster_snapshot import ClusterSnapshot
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_core.queue_view import queue_place, queued_words, span, why_queued
from gpuportal_core.slurm_time import parse_runtime, slurm_datetime
from gpuportal_portal.models import JobRecord, aware_utc, utcnow

# A page or an API call never waits longer than this for Slurm's look: it gets the last one.
LOOK_WAIT_S = 1.0
NOT_IN_LINE = frozenset({"", "BeginTime", "Dependency", "JobHeldUser", "JobHeldAdmin"})


class QueueView:
    """One per portal app (app.state.queue): the cluster as last looked at, and the words."""

    def __init__(self, slurm: SlurmClient, *, default_partition: str, ttl: float = 10.0) -> None:
        self.snapshot = ClusterSnapshot.of(slurm, ttl=ttl)
        self.default_partition = default_partition

    async def words(self, records: Sequence[JobRecord]) -> dict[int, str]:
        """The words of each record that waits in Slurm's queue, by record id."""
        waiting = [r for r in records if r.state == "PENDING" and r.slurm_job_id]
        if not waiting:
            return {}
        taken = await self.snapshot.get_within(LOOK_WAIT_S)
        now = datetime.now().replace(microsecond=0)
        said = {}
        for record in waiting:
            request = record.request
            waited = (utcnow() - aware_utc(record.submitted_at)).total_seconds()
            slurm_start = slurm_datetime(record.expected_start)
            # A job of the portal's form or API on one node (not an array, not a session's or a
            # Dask worker's record, whose requests say no GPUs and runtime).
            placed = (
                request.get("nodes") == 1 and "runtime" in request and "%a" not in record.output
            )
            # One that waits for its own start time, another job or a release has no place in
            # the line yet; nor one Slurm has given no reason for (not looked at yet).
            if taken is None or not placed or record.reason in NOT_IN_LINE:
                said[record.id] = _reason_only(record, slurm_start, waited, now)
                continue
            partition = str(request.get("partition") or self.default_partition)
            gpu_type = str(request.get("gpu_type") or "")
            place = queue_place(
                taken.line(partition, gpu_type),
                job_id=record.slurm_job_id,
                gpus=int(request.get("gpus_per_node") or 1),
                runtime=parse_runtime(str(request.get("runtime") or "01:00:00")),
            )
            said[record.id] = queued_words(
                place,
                job_id=record.slurm_job_id,
                reason=record.reason,
                partition=partition,
                gpu_type=gpu_type,
                slurm_start=slurm_start,
                waited=waited,
                now=now,
            )
        return said


def _reason_only(
    record: JobRecord, slurm_start: datetime | None, waited: float, now: datetime
) -> str:
    # Not looked at by Slurm's scheduler yet: in its words for that, not "Slurm says: ".
    said = why_queued(record.slurm_job_id, record.reason or "None")
    if slurm_start is not None and slurm_start > now:
        said += f" Expected start about {slurm_start.strftime('%a %H:%M')} (Slurm's estimate)."
    return f"{said} Waiting {span(waited)} so far."
