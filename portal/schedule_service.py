"""Notebook job definitions on a schedule: each one keeps its next run queued in Slurm.

An active definition always has one job waiting in Slurm's queue with `--begin` at its next
time (gpuportal_core.schedules), submitted as its user through the jobs API's own checks and
record (gpuportal_portal.job_service). When that run leaves the queue (it started, or someone
cancelled it), the keeper queues the one after it. So runs start from Slurm itself, with no
session and no portal process at their time; the portal only needs to look once between runs.
Pausing cancels the queued run; resuming, editing or running now queue again.
"""

from __future__ import annotations

import asyncio
import logging
import pwd
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.schedules import ScheduleError, check_often, check_schedule, next_time
from gpuportal_portal import db, job_service
from gpuportal_portal.audit_stream import audit
from gpuportal_portal.cluster import PartitionCatalog
from gpuportal_portal.job_output import OutputFolders
from gpuportal_portal.job_schemas import JobCreate
from gpuportal_portal.models import JobRecord, NotebookSchedule, aware_utc, utcnow
from gpuportal_portal.profile_rules import Problem
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.settings import PortalSettings

log = logging.getLogger(__name__)
# A definition whose run could not be queued (a profile taken away, Slurm refusing) is tried
# again after this long, not at every look.
RETRY_AFTER = timedelta(minutes=5)
WAITING = ("SUBMITTING", "PENDING")


@dataclass(frozen=True)
class Deps:
    """What submitting a run needs, as the jobs API has it."""

    settings: PortalSettings
    catalog: PartitionCatalog
    slurm: SlurmClient
    folders: OutputFolders


def checked(schedule: str, timezone: str, settings: PortalSettings) -> None:
    """A schedule that can be read, in a zone that exists, whose runs come no closer than the
    site allows (PORTAL_SCHEDULE_MIN_MINUTES)."""
    try:
        check_schedule(schedule, timezone)
        shortest = timedelta(minutes=settings.schedule_min_minutes)
        check_often(schedule, timezone, utcnow(), shortest=shortest)
    except ScheduleError as error:
        raise RuleViolation([Problem(error.field, error.message)]) from None


def _count_of(session: Session, user: str) -> int:
    mine = select(func.count()).select_from(NotebookSchedule).where(NotebookSchedule.user == user)
    return int(session.scalar(mine) or 0)


async def queue_next(
    session: Session, definition: NotebookSchedule, deps: Deps, *, after: datetime
) -> JobRecord:
    """Submit the definition's next run, to begin at its first time after `after`. Raises
    what the jobs API raises (RuleViolation, JobRejected, SlurmUnavailable); the definition
    keeps the words."""
    try:
        begin = next_time(definition.schedule, definition.timezone, after)
        data = JobCreate.model_validate({**definition.request, "begin": begin.isoformat()})
        record = await _submit(session, definition, deps, data)
    except ScheduleError as error:
        await db.step(session, _note_problem, definition, error.message, deps.settings)
        raise RuleViolation([Problem(error.field, error.message)]) from None
    except (RuleViolation, job_service.JobRejected, SlurmError) as error:
        await db.step(session, _note_problem, definition, str(error), deps.settings)
        raise
    definition.next_record_id = record.id
    definition.problem = ""
    definition.failures = 0
    definition.updated_at = utcnow()
    await db.step(session, Session.commit)
    return record


async def _submit(
    session: Session, definition: NotebookSchedule, deps: Deps, data: JobCreate
) -> JobRecord:
    """A run of the definition, submitted as its user as the jobs API submits."""
    submitted = await job_service.submit(
        session,
        data=data,
        user=definition.user,
        idempotency_key=None,
        settings=deps.settings,
        catalog=deps.catalog,
        slurm=deps.slurm,
        folders=deps.folders,
        schedule_id=definition.id,
    )
    return submitted.record


def _note_problem(
    session: Session, definition: NotebookSchedule, problem: str, settings: PortalSettings
) -> None:
    """Why the next run could not be queued; at the site's count in a row, paused with it."""
    definition.next_record_id = None
    definition.failures = (definition.failures or 0) + 1
    if definition.failures >= settings.schedule_pause_after and definition.active:
        _pause(session, definition, f"Paused after {definition.failures} tries in a row: {problem}")
        return
    definition.problem = problem[:300]
    definition.updated_at = utcnow()
    session.commit()


async def unqueue(session: Session, definition: NotebookSchedule, slurm: SlurmClient) -> None:
    """Cancel the run waiting for its time, and drop its record: it never ran."""
    record_id = definition.next_record_id
    definition.next_record_id = None
    record = await db.step(session, Session.get, JobRecord, record_id) if record_id else None
    if record is not None and record.state in WAITING:
        if record.slurm_job_id:
            await slurm.cancel(record.slurm_job_id, user=record.user)
        await db.step(session, Session.delete, record)
    definition.updated_at = utcnow()
    await db.step(session, Session.commit)


async def create(
    session: Session,
    *,
    user: str,
    name: str,
    request: JobCreate,
    schedule: str,
    timezone: str,
    deps: Deps,
) -> NotebookSchedule:
    """Record the definition and queue its first run; nothing is kept if that is refused."""
    checked(schedule, timezone, deps.settings)
    most = deps.settings.schedules_per_user
    if await db.step(session, _count_of, user) >= most:
        raise RuleViolation(
            [Problem("schedule", f"you keep {most} definitions on a schedule, this cluster's "
                     "most: delete one you no longer need first")]
        )  # fmt: skip
    definition = NotebookSchedule(
        user=user,
        name=name,
        request=request.model_dump(mode="json", exclude={"begin"}),
        schedule=schedule,
        timezone=timezone or "UTC",
    )
    await db.step(session, _add, definition)
    try:
        await queue_next(session, definition, deps, after=utcnow())
    except Exception:
        await db.step(session, _delete, definition)
        raise
    audit("schedule_create", user=user, schedule=definition.id, name=name, cron=schedule)
    return definition


def _add(session: Session, definition: NotebookSchedule) -> None:
    session.add(definition)
    session.commit()


def _delete(session: Session, definition: NotebookSchedule) -> None:
    session.delete(definition)
    session.commit()


async def change(
    session: Session,
    definition: NotebookSchedule,
    *,
    deps: Deps,
    active: bool | None = None,
    schedule: str | None = None,
    timezone: str | None = None,
    name: str | None = None,
) -> NotebookSchedule:
    """Pause, resume or edit: the queued run is cancelled and, if active, queued anew."""
    new_schedule = definition.schedule if schedule is None else schedule
    new_zone = definition.timezone if timezone is None else timezone
    checked(new_schedule, new_zone, deps.settings)
    await unqueue(session, definition, deps.slurm)
    definition.schedule, definition.timezone = new_schedule, new_zone or "UTC"
    if name:
        definition.name = name
        definition.request = {**definition.request, "name": name}
    if active is not None:
        definition.active = active
    await db.step(session, Session.commit)
    if definition.active:
        await queue_next(session, definition, deps, after=utcnow())
    audit(
        "schedule_change",
        user=definition.user,
        schedule=definition.id,
        active=definition.active,
        cron=definition.schedule,
    )
    return definition


async def remove(session: Session, definition: NotebookSchedule, slurm: SlurmClient) -> None:
    """Cancel its queued run and forget it; its past runs stay in the history, as jobs of
    their own (a later definition may get its number: SQLite reuses a deleted row's id)."""
    await unqueue(session, definition, slurm)
    audit("schedule_delete", user=definition.user, schedule=definition.id)
    await db.step(session, _forget, definition)


def _forget(session: Session, definition: NotebookSchedule) -> None:
    runs = update(JobRecord).where(JobRecord.schedule_id == definition.id)
    session.execute(runs.values(schedule_id=None))
    session.delete(definition)
    session.commit()


async def run_now(session: Session, definition: NotebookSchedule, deps: Deps) -> JobRecord:
    """One run at once, beside the schedule's."""
    return await _submit(session, definition, deps, JobCreate.model_validate(definition.request))


def _due(session: Session) -> list[tuple[NotebookSchedule, JobRecord | None]]:
    """Active definitions whose queued run has left the queue; and those whose run could not
    be queued, once RETRY_AFTER has passed."""
    due: list[tuple[NotebookSchedule, JobRecord | None]] = []
    active = select(NotebookSchedule).where(NotebookSchedule.active.is_(True))
    for definition in session.scalars(active):
        if definition.next_record_id is None:
            if utcnow() - aware_utc(definition.updated_at) >= RETRY_AFTER:
                due.append((definition, None))
            continue
        queued = session.get(JobRecord, definition.next_record_id)
        if queued is None or queued.state not in WAITING:
            due.append((definition, queued))
    return due


async def keep(database: db.Database, deps: Deps) -> int:
    """Queue the next run of each definition whose run has left the queue; the count queued."""
    queued = 0
    with database.sessions() as session:
        for definition, last in await db.step(session, _due):
            if not await _still_a_user(definition.user):
                gone = f"Paused: {definition.user} is no longer a user of this cluster"
                await db.step(session, _pause, definition, gone)
                continue
            # After the run that left (its time, not now): a run cancelled early does not make
            # the next one skip a time.
            after = max(utcnow(), _begin_of(last)) if last is not None else utcnow()
            try:
                await queue_next(session, definition, deps, after=after)
            except (RuleViolation, job_service.JobRejected, SlurmError) as error:
                log.warning(
                    "Could not queue the next run of definition %s: %s", definition.id, error
                )
                continue
            queued += 1
    return queued


async def _still_a_user(user: str) -> bool:
    """Whether the cluster's directory still knows the user (a thread: sssd or LDAP)."""
    try:
        await asyncio.to_thread(pwd.getpwnam, user)
    except KeyError:
        return False
    return True


def _pause(session: Session, definition: NotebookSchedule, why: str) -> None:
    definition.active = False
    definition.next_record_id = None
    definition.problem = why[:300]
    definition.updated_at = utcnow()
    session.commit()
    audit("schedule_paused", user=definition.user, schedule=definition.id, why=why)


def _begin_of(record: JobRecord) -> datetime:
    begin = (record.request or {}).get("begin")
    return datetime.fromisoformat(begin) if begin else utcnow()
