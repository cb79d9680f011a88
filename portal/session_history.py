"""Users' notebook sessions in their job history, kept after Slurm forgets them.

The hub tags every session's job (gpuportal_core.tags: gpuportal:session:HUB:USER:SERVER), and a
session tags the Dask workers its notebooks start (gpuportal:dask:HUB:USER:SERVER). Each step of
the job watcher's loop (gpuportal_portal.job_watcher) finds such jobs in its squeue and keeps a
record of each, beside the user's batch jobs, which it then follows like any job. Nothing is
asked of the hub, and a job the portal did not see start is still recorded while Slurm lists it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from gpuportal_core.jobs import JobInfo
from gpuportal_core.slurm_time import time_limit_hms, time_or_blank
from gpuportal_core.states import Phase
from gpuportal_core.tags import DaskTag, SessionTag, parse_tag
from gpuportal_portal.models import JobRecord, RemovedSession, utcnow

log = logging.getLogger(__name__)

# The launcher a session's record carries: how the pages and the API tell it from a batch job.
SESSION_LAUNCHER = "jupyterlab"
# A Dask worker job started from a session's notebook (gpuportal_session.dask_setup).
DASK_LAUNCHER = "dask"
SCANNED = (SESSION_LAUNCHER, DASK_LAUNCHER)
KEEP_REMOVED = timedelta(days=7)


def record_sessions(session: Session, jobs: list[JobInfo], *, hub_id: str) -> list[JobRecord]:
    """Add a record for each session (or Dask worker) job of this hub not yet recorded; the
    records added."""
    found: dict[str, tuple[JobInfo, SessionTag | DaskTag]] = {}
    for job in jobs:
        tag = parse_tag(job.comment)
        # The tag's user must be the job's: anyone may write any comment on their own job.
        if isinstance(tag, SessionTag | DaskTag) and tag.hub == hub_id and tag.user == job.user:
            found[job.job_id] = (job, tag)
    if not found:
        return []
    known = set(
        session.scalars(
            select(JobRecord.slurm_job_id).where(
                JobRecord.launcher.in_(SCANNED), JobRecord.slurm_job_id.in_(list(found))
            )
        )
    )
    # Removed by their users while Slurm still lists the ended job: not recorded again.
    known |= set(
        session.scalars(
            select(RemovedSession.slurm_job_id).where(RemovedSession.slurm_job_id.in_(list(found)))
        )
    )
    added = []
    for job_id, (job, tag) in found.items():
        if job_id in known:
            continue
        waiting = job.phase in (Phase.QUEUED, Phase.REQUEUED)
        session_name = tag.server or "default"
        is_worker = isinstance(tag, DaskTag)
        added.append(
            JobRecord(
                user=tag.user,
                name=f"Dask worker of session {session_name}" if is_worker else session_name,
                launcher=DASK_LAUNCHER if is_worker else SESSION_LAUNCHER,
                request={
                    "server": tag.server,
                    "time_limit": time_limit_hms(job.time_limit),
                    "nodes": 1,
                },
                script="",
                output="",
                slurm_job_id=job_id,
                state=job.state,
                reason=job.reason if waiting else "",
                nodes="" if waiting else (job.nodes or job.host),
                started_at="" if waiting else time_or_blank(job.start),
                expected_start=time_or_blank(job.start) if waiting else "",
            )
        )
    session.add_all(added)
    session.commit()
    return added


def remember_removal(session: Session, record: JobRecord) -> None:
    """A session's (or Dask worker's) record is being removed: remember its job so that the
    scan leaves it out."""
    if record.launcher in SCANNED and record.slurm_job_id:
        session.merge(RemovedSession(slurm_job_id=record.slurm_job_id))


def forget_old_removals(session: Session) -> None:
    """Removals older than KEEP_REMOVED: Slurm has long forgotten those jobs."""
    cutoff = utcnow() - KEEP_REMOVED
    session.execute(delete(RemovedSession).where(RemovedSession.removed_at < cutoff))
