"""REST API for multi-node jobs: submit (idempotent), list, look at one, cancel.

Routes that ask Slurm are `async`: Slurm's commands are awaited on the loop (subprocesses under
their timeouts, at most 8 at once), and each database step runs in FastAPI's thread pool as a
transaction of its own (`db.step`), so that a burst of submits or cancels holds neither a worker
thread nor a database connection while Slurm answers. Routes that only read the database are
plain functions, which FastAPI runs in that pool. The records' states are the job watcher's
(gpuportal_portal.job_watcher): routes read them, and a route that changed a job waits for the
watcher's next look.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Literal

from fastapi import APIRouter, Header, HTTPException, Path, Query, Response, status
from fastapi.responses import HTMLResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from gpuportal_adapters.slurm import SlurmError, SlurmUnavailable
from gpuportal_core.launchers import LAUNCHERS
from gpuportal_core.states import job_state, states_in
from gpuportal_portal import (
    crud,
    db,
    job_checks,
    job_output,
    job_service,
    notebook_outputs,
    use_collector,
)
from gpuportal_portal.api_errors import declared
from gpuportal_portal.audit_stream import audit
from gpuportal_portal.deps import (
    ApiCaller,
    ApiWriter,
    CatalogDep,
    OutputFoldersDep,
    QueueDep,
    SessionDep,
    SettingsDep,
    SlurmDep,
    WatcherDep,
)
from gpuportal_portal.identity import Caller
from gpuportal_portal.job_environments import site_environments
from gpuportal_portal.job_schemas import (
    JobCreate,
    JobDetailPublic,
    JobOutputPart,
    JobPublic,
    JobUsePublic,
    LauncherPublic,
    ScriptPreview,
)
from gpuportal_portal.job_watcher import JobWatcher
from gpuportal_portal.models import JobRecord
from gpuportal_portal.session_history import SESSION_LAUNCHER, remember_removal

router = APIRouter(prefix="/api", tags=["jobs"], responses=declared(400, 401, 403, 404, 409, 503))

IdempotencyKey = Annotated[
    str | None,
    Header(
        max_length=100,
        description="Any unique string; a retried POST with the same key returns the same job.",
    ),
]


# A record id; beyond a 64-bit integer no record can exist (and SQLite cannot even compare it).
JobId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The portal's job number.")]


def _own(session: SessionDep, caller: Caller, job_id: int) -> JobRecord:
    record = session.get(JobRecord, job_id)
    # Someone else's job is a 404, not a 403: its existence is not the caller's business.
    if record is None or (record.user != caller.name and not caller.is_admin):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No job {job_id} of yours.")
    return record


@router.get("/launchers", response_model=list[LauncherPublic])
async def list_launchers(_caller: ApiCaller) -> list[LauncherPublic]:
    """The launchers a job can name, with what each does with a script and with a command."""
    return [
        LauncherPublic(
            name=launcher.name,
            title=launcher.title,
            about=launcher.about,
            command_help=launcher.command_help,
            one_task_per_node=launcher.one_task_per_node,
        )
        for launcher in LAUNCHERS.values()
    ]


@router.post("/jobs/preview", response_model=ScriptPreview)
async def preview_job(
    data: JobCreate,
    caller: ApiCaller,
    settings: SettingsDep,
    catalog: CatalogDep,
    slurm: SlurmDep,
    session: SessionDep,
) -> ScriptPreview:
    """The sbatch script this request would submit, checked the same way; nothing is submitted."""
    site = site_environments(await db.step(session, crud.list_environments))
    _, script = await job_checks.prepare(
        data, user=caller.name, settings=settings, catalog=catalog, slurm=slurm, site=site
    )
    return ScriptPreview(script=script)


@router.post(
    "/jobs",
    response_model=JobPublic,
    status_code=status.HTTP_201_CREATED,
    responses={
        200: {
            "model": JobPublic,
            "description": "Sent before with this Idempotency-Key: that job, not a new one.",
        }
    },
)
async def submit_job(
    data: JobCreate,
    response: Response,
    session: SessionDep,
    caller: ApiWriter,
    settings: SettingsDep,
    catalog: CatalogDep,
    slurm: SlurmDep,
    folders: OutputFoldersDep,
    idempotency_key: IdempotencyKey = None,
) -> JobPublic:
    """Submit a job as you. With an Idempotency-Key, a retry returns the first job (200)."""
    if caller.kind != "user":
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Jobs are submitted by users.")
    submitted = await job_service.submit(
        session,
        data=data,
        user=caller.name,
        idempotency_key=idempotency_key,
        settings=settings,
        catalog=catalog,
        slurm=slurm,
        folders=folders,
    )
    if not submitted.created:
        response.status_code = status.HTTP_200_OK
    return JobPublic(**job_service.public_fields(submitted.record))


@router.get("/jobs", response_model=list[JobPublic])
async def list_jobs(
    session: SessionDep,
    caller: ApiCaller,
    queue: QueueDep,
    mine: bool = False,
    limit: int = 100,
    phase: Annotated[
        Literal["waiting", "running", "ended"] | None,
        Query(description="Only jobs waiting to start, running (or ending), or ended."),
    ] = None,
    q: Annotated[str, Query(max_length=64, description="Only jobs whose name contains this.")] = "",
    kind: Annotated[
        Literal["job", "session"] | None,
        Query(description="Only batch jobs, or only notebook sessions (launcher jupyterlab)."),
    ] = None,
) -> list[JobPublic]:
    """Your jobs, newest first (kept after Slurm forgets them, until you remove them); admins
    see everyone's unless `mine=true`."""
    query = select(JobRecord).order_by(JobRecord.id.desc()).limit(min(max(limit, 1), 500))
    if mine or not caller.is_admin:
        query = query.where(JobRecord.user == caller.name)
    if phase is not None:
        query = query.where(JobRecord.state.in_(states_in(phase)))
    if q:
        query = query.where(JobRecord.name.contains(q, autoescape=True))
    if kind is not None:
        is_session = JobRecord.launcher == SESSION_LAUNCHER
        query = query.where(is_session if kind == "session" else ~is_session)
    records = await db.step(session, lambda s: list(s.scalars(query)))
    said = await queue.words(records)
    return [JobPublic(**job_service.public_fields(r), queue=said.get(r.id, "")) for r in records]


@router.get("/jobs/{job_id}", response_model=JobDetailPublic)
async def get_job(
    job_id: JobId, session: SessionDep, caller: ApiCaller, slurm: SlurmDep, queue: QueueDep
) -> JobDetailPublic:
    """State, nodes, why it waits, start and end, exit code, and the last lines of its output."""
    record = await db.step(session, _own, caller, job_id)
    fields = job_service.public_fields(record)
    if record.outputs is None and record.started_at:
        # A notebook job that runs: its executed notebook so far (kept once it has ended).
        with contextlib.suppress(notebook_outputs.NotLookedAt):
            fields["outputs"] = await notebook_outputs.find(slurm, record)
    said = await queue.words([record])
    return JobDetailPublic(
        **fields,
        queue=said.get(record.id, ""),
        output_tail=await job_output.output_tail(slurm, record),
    )


@router.get(
    "/jobs/{job_id}/report",
    # Its errors are JSON as every route's: the HTML is documented beside, not as the class.
    responses={
        200: {
            "content": {"text/html": {"schema": {"type": "string"}}},
            "description": "The executed notebook, as HTML.",
        }
    },
)
async def job_report(
    job_id: JobId, session: SessionDep, caller: ApiCaller, slurm: SlurmDep
) -> HTMLResponse:
    """A notebook job's executed notebook as HTML, read as its user, shown under a policy that
    runs none of its scripts and loads nothing (it is the user's own content, on the portal's
    origin). A 404 until the run has written it (at its end)."""
    record = await db.step(session, _own, caller, job_id)
    html = (record.outputs or {}).get("html", "")
    if not html:
        what = "is not a notebook job" if record.launcher != "notebook" else "has no HTML yet"
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Job {job_id} {what}: a notebook job's HTML is written when its run ends.",
        )
    try:
        text = await notebook_outputs.read_report(slurm, record.user, html)
    except notebook_outputs.ReportUnreadable as error:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(error)) from None
    return HTMLResponse(text, headers=notebook_outputs.REPORT_HEADERS)


@router.get("/jobs/{job_id}/output", response_model=JobOutputPart)
async def get_job_output(
    job_id: JobId,
    session: SessionDep,
    caller: ApiCaller,
    slurm: SlurmDep,
    offset: Annotated[int, Query(ge=0, le=2**62, description="The byte to start from.")] = 0,
    task: Annotated[
        str | None, Query(pattern=r"^[0-9]+$", description="An array job's task.")
    ] = None,
) -> JobOutputPart:
    """The job's output from byte `offset` on, at most 64 KiB at a time: nothing is missed
    however fast the job writes (the job's page shows its last lines instead)."""
    record = await db.step(session, _own, caller, job_id)
    try:
        part = await job_output.output_from(slurm, record, offset, task)
    except job_output.TaskNeeded as error:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(error)) from None
    except job_output.NoSuchOutput as error:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(error)) from None
    return JobOutputPart(text=part.text, next_offset=part.next_offset, more=part.more)


@router.get("/jobs/{job_id}/use", response_model=JobUsePublic)
async def job_use(
    job_id: JobId, session: SessionDep, caller: ApiCaller, slurm: SlurmDep
) -> JobUsePublic:
    """What an ended job (or session) used of the cores, memory, GPUs and time it asked for,
    from Slurm's accounting and a session's own GPU readings: a 409 while it runs. Read once
    and kept (gpuportal_portal.use_collector); asked here first, it is read now."""
    record = await db.step(session, _own, caller, job_id)
    if not record.slurm_job_id or not job_service.settled(record.state):
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"Job {job_id} has not ended: what it used is known once it has.",
        )
    use = record.use
    if use is None:
        use = await use_collector.read_use(slurm, record)
        if use is not None and use_collector.worth_keeping(use, record):
            record.use = use
            await db.step(session, Session.commit)
    if use is None or use.get("recorded") is False:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Slurm's accounting has no record of job {record.slurm_job_id} (yet).",
        )
    return JobUsePublic(**use)


@router.delete(
    "/jobs/{job_id}/record",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
)
async def remove_job_record(
    job_id: JobId, session: SessionDep, caller: ApiWriter, watcher: WatcherDep
) -> Response:
    """Remove an ended job from your history (its output file stays). A job still waiting or
    running is a 409: cancel it first."""
    record = await db.step(session, Session.get, JobRecord, job_id)
    if record is None or record.user != caller.name:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No job {job_id} of yours.")
    if not job_service.settled(record.state):
        # The record may be behind Slurm (a session stopped a moment ago): a fresh look first.
        await look_now(watcher, session, record)
    if not job_service.settled(record.state):
        meaning = job_state(record.state)
        what = "cancel it first" if record.launcher != SESSION_LAUNCHER else "stop it first"
        if not meaning.alive:  # ending: Slurm is cleaning up after it
            what = "try again in a few seconds"
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"Job {job_id} {meaning.meaning}: {what}, then remove it.",
        )
    await db.step(session, _remove, record)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _remove(session: Session, record: JobRecord) -> None:
    remember_removal(session, record)
    session.delete(record)
    session.commit()


@router.delete("/jobs/{job_id}", response_model=JobPublic, status_code=status.HTTP_202_ACCEPTED)
async def cancel_job(
    job_id: JobId, session: SessionDep, caller: ApiWriter, slurm: SlurmDep, watcher: WatcherDep
) -> JobPublic:
    """Cancel the job (scancel, as its owner). A notebook session is stopped on the hub."""
    record = await db.step(session, _own, caller, job_id)
    if record.launcher == SESSION_LAUNCHER:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            "This is a notebook session: stop it on the hub's Sessions page, which ends its job.",
        )
    if record.slurm_job_id and not job_service.settled(record.state):
        try:
            await slurm.cancel(record.slurm_job_id, user=record.user)
        except SlurmUnavailable:
            raise
        except SlurmError as error:
            raise HTTPException(
                status.HTTP_409_CONFLICT, f"Slurm did not cancel the job: {error.message}"
            ) from None
        # What Slurm says now (cancelled, or ending): never a state of the portal's own. If
        # Slurm cannot say just now, the watcher's next look will.
        await look_now(watcher, session, record)
        audit("job_cancel", user=caller.name, record=record.id, job=record.slurm_job_id)
    return JobPublic(**job_service.public_fields(record))


async def look_now(watcher: JobWatcher, session: Session, record: JobRecord) -> None:
    """The watcher's next look, waited for, and the record as it left it."""
    await watcher.look_now()
    await db.step(session, Session.refresh, record)
