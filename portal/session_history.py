"""Users' notebook sessions in their job history, kept after Slurm forgets them.

The hub tags every session's job (core.tags: gpuportal:session:HUB:USER:SERVER). The portal
looks for such jobs in squeue every `session_scan_seconds` and keeps a record of each, beside
the user's batch jobs: the job watcher then follows it like any job. Nothing is asked of the
hub, and a session the portal did not see start is still recorded while Slurm lists it.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.jobs import JobInfo, time_or_blank
from core.slurm import SlurmClient, SlurmError
from core.states import Phase
from core.tags import SessionTag, parse_tag
from portal.db import Database
from portal.models import JobRecord

log = logging.getLogger(__name__)

# The launcher a session's record carries: how the pages and the API tell it from a batch job.
SESSION_LAUNCHER = "jupyterlab"


def record_sessions(session: Session, jobs: list[JobInfo], *, hub_id: str) -> int:
    """Add a record for each session job of this hub not yet recorded; how many were added."""
    found = {}
    for job in jobs:
        tag = parse_tag(job.comment)
        if isinstance(tag, SessionTag) and tag.hub == hub_id:
            found[job.job_id] = (job, tag)
    if not found:
        return 0
    known = set(
        session.scalars(
            select(JobRecord.slurm_job_id).where(
                JobRecord.launcher == SESSION_LAUNCHER, JobRecord.slurm_job_id.in_(list(found))
            )
        )
    )
    added = 0
    for job_id, (job, tag) in found.items():
        if job_id in known:
            continue
        waiting = job.phase in (Phase.QUEUED, Phase.REQUEUED)
        session.add(
            JobRecord(
                user=tag.user,
                name=tag.server or "default",
                launcher=SESSION_LAUNCHER,
                request={"server": tag.server, "time_limit": job.time_limit, "nodes": 1},
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
        added += 1
    session.commit()
    return added


async def scan_forever(
    database: Database, slurm: SlurmClient, *, hub_id: str, every: float
) -> None:
    """The portal's background look for new sessions (one squeue each time)."""
    while True:
        try:
            jobs = await slurm.tagged(alive_only=False)
            with database.sessions() as session:
                added = record_sessions(session, jobs, hub_id=hub_id)
            if added:
                log.info("Recorded %d new session(s) in the job history", added)
        except (SlurmError, OSError) as error:  # Slurm down, or no squeue on this host
            log.warning("Could not look for sessions in squeue: %s", error)
        await asyncio.sleep(every)
