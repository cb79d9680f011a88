"""Users' notebook sessions in their job history, kept after Slurm forgets them, and the jobs
they submit themselves while they have a session (sbatch in its terminal, or elsewhere).

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
from gpuportal_core.states import FINAL_STATES, Phase
from gpuportal_core.tags import DaskTag, SessionTag, parse_tag
from gpuportal_portal.models import JobRecord, RemovedSession, utcnow

log = logging.getLogger(__name__)

# The launcher a session's record carries: how the pages and the API tell it from a batch job.
SESSION_LAUNCHER = "jupyterlab"
# A Dask worker job started from a session's notebook (gpuportal_session.dask_setup).
DASK_LAUNCHER = "dask"
# A job the user submitted themselves (sbatch in a session's terminal or on a login node)
# while they had a session: users expect their Jobs page to list every job of theirs.
OWN_LAUNCHER = "sbatch"
SCANNED = (SESSION_LAUNCHER, DASK_LAUNCHER, OWN_LAUNCHER)
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
        session_name = tag.server or "default"
        is_worker = isinstance(tag, DaskTag)
        added.append(
            _seen(
                job,
                user=tag.user,
                name=f"Dask worker of session {session_name}" if is_worker else session_name,
                launcher=DASK_LAUNCHER if is_worker else SESSION_LAUNCHER,
                request={"server": tag.server, "nodes": 1},
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


def own_job_candidates(session: Session, jobs: list[JobInfo]) -> list[JobInfo]:
    """Jobs without the portal's tag, of users who have a live session, not yet recorded (nor
    removed by their users): each becomes a record once its name is known (record_own_jobs).
    Only users with a session: the portal keeps its users' jobs, not a whole cluster's."""
    untagged = [job for job in jobs if parse_tag(job.comment) is None and job.user]
    if not untagged:
        return []
    with_session = set(
        session.scalars(
            select(JobRecord.user).where(
                JobRecord.launcher == SESSION_LAUNCHER,
                JobRecord.state.notin_(FINAL_STATES),
                JobRecord.user.in_({job.user for job in untagged}),
            )
        )
    )
    ids = [job.job_id for job in untagged if job.user in with_session]
    if not ids:
        return []
    known = set(
        session.scalars(select(JobRecord.slurm_job_id).where(JobRecord.slurm_job_id.in_(ids)))
    )
    known |= set(
        session.scalars(
            select(RemovedSession.slurm_job_id).where(RemovedSession.slurm_job_id.in_(ids))
        )
    )
    return [job for job in untagged if job.job_id in ids and job.job_id not in known]


def record_own_jobs(
    session: Session, jobs: list[JobInfo], names: dict[str, str]
) -> list[JobRecord]:
    """A record for each of own_job_candidates' jobs; the records added."""
    added = [
        _seen(
            job,
            user=job.user,
            name=names.get(job.job_id) or f"job {job.job_id}",
            launcher=OWN_LAUNCHER,
            request={},
        )
        for job in jobs
    ]
    session.add_all(added)
    session.commit()
    return added


def _seen(
    job: JobInfo, *, user: str, name: str, launcher: str, request: dict[str, object]
) -> JobRecord:
    """A record of a job as squeue shows it, first seen by the watcher."""
    waiting = job.phase in (Phase.QUEUED, Phase.REQUEUED)
    return JobRecord(
        user=user,
        name=name,
        launcher=launcher,
        request={**request, "time_limit": time_limit_hms(job.time_limit)},
        script="",
        output="",
        slurm_job_id=job.job_id,
        state=job.state,
        reason=job.reason if waiting else "",
        nodes="" if waiting else (job.nodes or job.host),
        started_at="" if waiting else time_or_blank(job.start),
        expected_start=time_or_blank(job.start) if waiting else "",
    )
