"""Multi-node jobs: submit as the user (checked by gpuportal_portal.job_checks), and their
records.

Submission runs `sbatch` as the requesting user (sudo -u USER, argv, no shell), never as the
portal's own account. The record is written before sbatch runs, so a retried request with the
same idempotency key finds it instead of submitting a second job.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from gpuportal_adapters.slurm import SlurmClient, SlurmError, SlurmUnavailable
from gpuportal_core.jobs import describe_reason
from gpuportal_core.slurm_time import slurm_time_with_zone
from gpuportal_core.states import job_state
from gpuportal_core.tags import batch_tag
from gpuportal_portal import crud, db, job_checks
from gpuportal_portal.audit_stream import audit
from gpuportal_portal.cluster import PartitionCatalog
from gpuportal_portal.job_environments import site_environments
from gpuportal_portal.job_output import OutputFolders
from gpuportal_portal.job_schemas import JobCreate
from gpuportal_portal.metrics import JOB_SUBMISSIONS
from gpuportal_portal.models import JobRecord, aware_utc, utcnow
from gpuportal_portal.settings import PortalSettings

log = logging.getLogger(__name__)


def settled(state: str) -> bool:
    """Nothing will change any more (gpuportal_core.states): the record need not be asked again.

    NODE_FAIL and PREEMPTED are not settled: Slurm requeues such jobs by default, so their
    records keep being refreshed and can still be cancelled.
    """
    return job_state(state).final


class JobRejected(Exception):
    """Slurm refused the job; the message is Slurm's own."""


class IdempotencyMismatch(Exception):
    """The key was used before for a different request."""


@dataclass(frozen=True)
class Submitted:
    record: JobRecord
    created: bool


def _existing(session: Session, user: str, key: str) -> JobRecord | None:
    query = select(JobRecord).where(JobRecord.user == user, JobRecord.idempotency_key == key)
    return session.scalar(query)


async def submit(
    session: Session,
    *,
    data: JobCreate,
    user: str,
    idempotency_key: str | None,
    settings: PortalSettings,
    catalog: PartitionCatalog,
    slurm: SlurmClient,
    folders: OutputFolders,
    schedule_id: int | None = None,
) -> Submitted:
    """Check, record and submit the job (a run of the notebook job definition `schedule_id`,
    if given). Called on the portal's loop: Slurm is awaited there,
    the database and the passwd lookup run in the thread pool, one short step each, so that a
    burst of submits holds no worker thread while sbatch runs."""
    request = data.model_dump(mode="json")
    if idempotency_key:
        earlier = await db.step(session, _existing, user, idempotency_key)
        if earlier is not None:
            if earlier.request != request:
                raise IdempotencyMismatch(idempotency_key)
            return Submitted(earlier, created=False)
    home = await run_in_threadpool(job_checks.home_of, user)  # one lookup for the job and sbatch
    site = site_environments(await db.step(session, crud.list_environments))
    job, script = await job_checks.prepare(
        data, user=user, settings=settings, catalog=catalog, slurm=slurm, home=home, site=site
    )
    record = JobRecord(
        user=user,
        name=job.name,
        launcher=job.launcher,
        request=request,
        script=script,
        output=job.output.replace("%x", job.name),
        idempotency_key=idempotency_key or None,
        schedule_id=schedule_id,
    )
    earlier = await db.step(session, _add, record, user, idempotency_key)
    if earlier is not None:
        return Submitted(earlier, created=False)
    tag = record_tag(record, settings)
    try:
        await folders.make(slurm, user, job.output.rsplit("/", 1)[0])
        # Nothing of the portal's environment: sudo gives sbatch the user's HOME, USER and its
        # secure PATH itself (gpuportal_core.sudo_rules).
        job_id = await slurm.submit(script, user=user, env={}, tag=tag)
    except SlurmUnavailable as error:
        # sbatch may have submitted before it was stopped: the tag says (exactly once).
        try:
            found = await slurm.tagged(tag, user=user, alive_only=False)
        except SlurmUnavailable:
            # Maybe submitted, maybe not: keep the record; the watcher settles it by its tag,
            # and a retry with the same key gets this record rather than a second job.
            record.reason = f"sbatch gave no answer ({error.message})"
            await db.step(session, Session.commit)
            JOB_SUBMISSIONS.labels(job.launcher, "uncertain").inc()
            raise SubmissionUncertain(record.id) from None
        if not found:
            await db.step(session, _drop, record)
            JOB_SUBMISSIONS.labels(job.launcher, "slurm_unavailable").inc()
            raise
        job_id = found[0].job_id
    except (SlurmError, OSError) as error:
        await db.step(session, _drop, record)
        JOB_SUBMISSIONS.labels(job.launcher, "refused").inc()
        message = error.message if isinstance(error, SlurmError) else str(error)
        raise JobRejected(message) from None
    mark_submitted(record, job_id)
    await db.step(session, Session.commit)
    JOB_SUBMISSIONS.labels(job.launcher, "submitted").inc()
    log.info("Submitted job %s (%s, %s) for %s", job_id, job.name, job.launcher, user)
    audit(
        "job_submit",
        user=user,
        record=record.id,
        job=job_id,
        name=job.name,
        launcher=job.launcher,
        nodes=job.nodes,
        gpus_per_node=job.gpus_per_node,
        gpu_type=job.gpu_type,
        partition=job.partition,
        array=job.array,
        **({"schedule": schedule_id} if schedule_id else {}),
    )
    return Submitted(record, created=True)


def _add(
    session: Session, record: JobRecord, user: str, idempotency_key: str | None
) -> JobRecord | None:
    """Write the record before sbatch runs; None, or the record of the same key that raced in
    from another request (that one submits, this one reports it)."""
    session.add(record)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        earlier = _existing(session, user, idempotency_key or "")
        if earlier is None:
            raise
        return earlier
    return None


class SubmissionUncertain(Exception):
    """sbatch and squeue both gave no answer: the job may or may not have been submitted."""

    def __init__(self, record_id: int) -> None:
        super().__init__(record_id)
        self.record_id = record_id


def record_tag(record: JobRecord, settings: PortalSettings) -> str:
    # The id alone may repeat (a new database, a test's): with the time, no finished job of an
    # earlier record that Slurm still lists can be taken for this one.
    stamp = round(aware_utc(record.submitted_at).timestamp() * 1e6)  # microseconds
    return str(batch_tag(hub=settings.hub_id, user=record.user, key=f"{record.id}.{stamp}"))


def _drop(session: Session, record: JobRecord) -> None:
    # Nothing was submitted: drop the record so that a retry with the key tries again.
    session.delete(record)
    session.commit()


def mark_submitted(record: JobRecord, job_id: str) -> None:
    record.slurm_job_id = job_id
    record.output = record.output.replace("%j", job_id).replace("%A", job_id)
    record.state = "PENDING"
    record.reason = ""
    record.updated_at = utcnow()


def public_fields(record: JobRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "user": record.user,
        "name": record.name,
        "launcher": record.launcher,
        "slurm_job_id": record.slurm_job_id,
        "state": record.state,
        "final": settled(record.state),
        "reason": record.reason,
        "nodes": record.nodes,
        "exit_code": record.exit_code,
        "submitted_at": record.submitted_at,
        # Slurm's times are the cluster's local time without a zone: given with it here.
        "started_at": slurm_time_with_zone(record.started_at),
        "ended_at": slurm_time_with_zone(record.ended_at),
        "expected_start": slurm_time_with_zone(record.expected_start),
        "waiting_because": describe_reason(record.reason) if record.state == "PENDING" else "",
        "tasks": record.tasks,
        "request": record.request,
        "script": record.script,
        "use_state": use_state(record),
        "schedule_id": record.schedule_id,
        "outputs": record.outputs or None,
    }


def use_state(record: JobRecord) -> str:
    """What is known of what an ended job used: "known", "pending" (not read from Slurm's
    accounting yet), "none" (the accounting has no record of it); "" while it runs. The jobs
    page asks GET .../use only once known (it asked too early and got 404s)."""
    if not settled(record.state):
        return ""
    if record.use is None:
        return "pending"
    return "none" if record.use.get("recorded") is False else "known"
