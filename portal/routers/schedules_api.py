"""REST API for job definitions on a schedule (JupyterLab's notebook job definitions use it
through the hub): create, list, pause/resume/edit, delete, run now. Each active one keeps its
next run queued in Slurm (gpuportal_portal.schedule_service)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Response, status
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from gpuportal_portal import db, job_service, schedule_service
from gpuportal_portal.api_errors import declared
from gpuportal_portal.deps import (
    ApiCaller,
    ApiWriter,
    CatalogDep,
    OutputFoldersDep,
    SessionDep,
    SettingsDep,
    SlurmDep,
)
from gpuportal_portal.identity import Caller
from gpuportal_portal.job_schemas import JobCreate, JobPublic
from gpuportal_portal.models import JobRecord, NotebookSchedule
from gpuportal_portal.schemas import UtcDateTime

router = APIRouter(
    prefix="/api", tags=["schedules"], responses=declared(400, 401, 403, 404, 409, 503)
)
ScheduleId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The definition's number.")]
Cron = Annotated[
    str,
    Field(
        max_length=100,
        examples=["0 3 * * *"],
        description="When it runs: a cron schedule, minute hour day month weekday.",
    ),
]
Zone = Annotated[str, Field(max_length=64, examples=["Europe/Paris"])]


class ScheduleCreate(BaseModel):
    """A job to run on a schedule: the job as POST /jobs takes it (its begin is the
    schedule's), the schedule, and the time zone it is read in."""

    model_config = ConfigDict(extra="forbid")

    job: JobCreate
    schedule: Cron
    timezone: Zone = "UTC"


class ScheduleChanges(BaseModel):
    """Pause (active false), resume, or change the schedule or its name: the waiting run is
    queued again for the new time."""

    model_config = ConfigDict(extra="forbid")

    active: bool | None = None
    schedule: Cron | None = None
    timezone: Zone | None = None
    name: str | None = Field(None, max_length=64)


class SchedulePublic(BaseModel):
    id: int
    user: str
    name: str
    job: dict[str, object] = Field(description="The job each run submits.")
    schedule: str
    timezone: str
    active: bool
    next_run: str = Field(description="When the queued run begins (ISO 8601); empty if none.")
    next_job: int | None = Field(description="The queued run's job number (GET /jobs/{id}).")
    problem: str = Field(description="Why the next run could not be queued; empty if it was.")
    created_at: UtcDateTime
    updated_at: UtcDateTime


def public(
    session: Session, definition: NotebookSchedule, queued: JobRecord | None = None
) -> SchedulePublic:
    """The definition as the API shows it; `queued`: its queued run, if already looked up."""
    if queued is None and definition.next_record_id:
        queued = session.get(JobRecord, definition.next_record_id)
    begin = (queued.request or {}).get("begin", "") if queued is not None else ""
    return SchedulePublic(
        id=definition.id,
        user=definition.user,
        name=definition.name,
        job=definition.request,
        schedule=definition.schedule,
        timezone=definition.timezone,
        active=definition.active,
        next_run=str(begin or ""),
        next_job=definition.next_record_id,
        problem=definition.problem,
        created_at=definition.created_at,
        updated_at=definition.updated_at,
    )


def _own(session: Session, caller: Caller, schedule_id: int) -> NotebookSchedule:
    definition = session.get(NotebookSchedule, schedule_id)
    if definition is None or definition.user != caller.name:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No schedule {schedule_id} of yours.")
    return definition


def _deps(
    settings: SettingsDep, catalog: CatalogDep, slurm: SlurmDep, folders: OutputFoldersDep
) -> schedule_service.Deps:
    return schedule_service.Deps(settings, catalog, slurm, folders)


# What submitting a run needs, as one dependency.
RunDeps = Annotated[schedule_service.Deps, Depends(_deps)]


@router.post("/schedules", response_model=SchedulePublic, status_code=status.HTTP_201_CREATED)
async def create_schedule(
    data: ScheduleCreate,
    session: SessionDep,
    caller: ApiWriter,
    deps: RunDeps,
) -> SchedulePublic:
    """Run a job on a schedule, as you: its first run is queued at once for its first time
    (refused as POST /jobs would refuse it, and then nothing is kept)."""
    if caller.kind != "user":
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Schedules are made by users.")
    definition = await schedule_service.create(
        session,
        user=caller.name,
        name=data.job.name,
        request=data.job,
        schedule=data.schedule.strip(),
        timezone=data.timezone.strip(),
        deps=deps,
    )
    return await db.step(session, public, definition)


@router.get("/schedules", response_model=list[SchedulePublic])
def list_schedules(session: SessionDep, caller: ApiCaller) -> list[SchedulePublic]:
    """Your job definitions on a schedule, newest first."""
    query = select(NotebookSchedule).where(NotebookSchedule.user == caller.name)
    definitions = list(session.scalars(query.order_by(NotebookSchedule.id.desc())))
    # Their queued runs in one query, not one each.
    ids = [d.next_record_id for d in definitions if d.next_record_id]
    runs = {r.id: r for r in session.scalars(select(JobRecord).where(JobRecord.id.in_(ids)))}
    return [public(session, d, runs.get(d.next_record_id or 0)) for d in definitions]


@router.get("/schedules/{schedule_id}", response_model=SchedulePublic)
def get_schedule(schedule_id: ScheduleId, session: SessionDep, caller: ApiCaller) -> SchedulePublic:
    return public(session, _own(session, caller, schedule_id))


@router.patch("/schedules/{schedule_id}", response_model=SchedulePublic)
async def change_schedule(
    schedule_id: ScheduleId,
    changes: ScheduleChanges,
    session: SessionDep,
    caller: ApiWriter,
    deps: RunDeps,
) -> SchedulePublic:
    """Pause or resume it, or change its schedule or name."""
    definition = await db.step(session, _own, caller, schedule_id)
    await schedule_service.change(
        session,
        definition,
        deps=deps,
        active=changes.active,
        schedule=changes.schedule.strip() if changes.schedule is not None else None,
        timezone=changes.timezone.strip() if changes.timezone is not None else None,
        name=changes.name,
    )
    return await db.step(session, public, definition)


@router.delete(
    "/schedules/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response
)
async def delete_schedule(
    schedule_id: ScheduleId, session: SessionDep, caller: ApiWriter, slurm: SlurmDep
) -> Response:
    """Delete it: its queued run is cancelled; its past runs stay in your jobs."""
    definition = await db.step(session, _own, caller, schedule_id)
    await schedule_service.remove(session, definition, slurm)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/schedules/{schedule_id}/runs", response_model=JobPublic, status_code=status.HTTP_201_CREATED
)
async def run_schedule_now(
    schedule_id: ScheduleId,
    session: SessionDep,
    caller: ApiWriter,
    deps: RunDeps,
) -> JobPublic:
    """One run now, beside the schedule's."""
    definition = await db.step(session, _own, caller, schedule_id)
    record = await schedule_service.run_now(session, definition, deps)
    return JobPublic(**job_service.public_fields(record))
