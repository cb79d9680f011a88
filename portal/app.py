"""The portal's FastAPI application: create_app(settings) wires store, cluster and identity."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version as package_version
from pathlib import Path

from fastapi import FastAPI, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from gpuportal_adapters.queue_reader import QueueReader
from gpuportal_adapters.slurm import SlurmClient, SlurmUnavailable
from gpuportal_core.resources import TEMPLATES_DIR
from gpuportal_core.slurm_time import cluster_offset_minutes
from gpuportal_portal import (
    audit_stream,
    background,
    crud,
    db,
    notebook_outputs,
    schedule_service,
)
from gpuportal_portal.body_limit import BodyLimit
from gpuportal_portal.cluster import ClusterUnavailable, PartitionCatalog
from gpuportal_portal.crud import SlugTaken, VersionConflict
from gpuportal_portal.deps import LoginRequired, PageForbidden
from gpuportal_portal.headers import add_api_docs, add_security_headers
from gpuportal_portal.identity import STATE_COOKIE_NAME, HubIdentity
from gpuportal_portal.job_output import OutputFolders
from gpuportal_portal.job_queue import QueueView
from gpuportal_portal.job_service import IdempotencyMismatch, JobRejected, SubmissionUncertain
from gpuportal_portal.job_watcher import JobWatcher
from gpuportal_portal.lab_static import add_lab_static
from gpuportal_portal.manual import add_manual, built_docs
from gpuportal_portal.models import Profile
from gpuportal_portal.page_errors import add_page_not_found
from gpuportal_portal.profile_service import RuleViolation
from gpuportal_portal.routers import (
    admin_pages,
    audit_api,
    environment_pages,
    environments_api,
    job_pages,
    jobs_api,
    maintenance_api,
    maintenance_pages,
    metrics_api,
    notices_api,
    oauth,
    profiles_api,
    schedules_api,
    usage_api,
)
from gpuportal_portal.schemas import EnvironmentCreate, ProfileCreate
from gpuportal_portal.settings import PortalSettings
from gpuportal_portal.use_collector import collect_forever

log = logging.getLogger(__name__)


def create_app(
    settings: PortalSettings,
    *,
    identity: HubIdentity | None = None,
    catalog: PartitionCatalog | None = None,
    slurm: SlurmClient | None = None,
) -> FastAPI:
    """The portal app. Tests pass their own identity/catalog/Slurm client; production builds
    them here."""

    def prepare_database(database: db.Database) -> None:
        """The schema brought up to date and the default profiles and environments seeded: in a
        thread, as every query of the portal is (db.Database.on_the_loop)."""
        db.upgrade(settings.database_url)
        with database.sessions() as session:
            extra = [ProfileCreate.model_validate(p) for p in settings.seed_profiles]
            crud.seed_defaults(
                session,
                partition=settings.default_partition,
                extra=[p.model_dump(mode="json", exclude_unset=True) for p in extra],
            )
            seeds = [EnvironmentCreate.model_validate(e) for e in settings.seed_environments]
            crud.seed_environments(session, entries=[e.model_dump() for e in seeds])

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(prepare_database, app.state.database)
        tasks = []
        if settings.job_look_seconds > 0:
            tasks.append(asyncio.create_task(app.state.watcher.run_forever()))
            # Each definition on a schedule keeps its next run queued (at the watcher's pace:
            # it sees a queued run leave the queue).
            deps = schedule_service.Deps(
                settings, app.state.catalog, app.state.slurm, app.state.output_folders
            )
            keeper = background.repeat(
                lambda: schedule_service.keep(app.state.database, deps),
                every=settings.job_look_seconds,
                done="Queued the next run of %d scheduled definition(s)",
                what="queue scheduled runs",
            )
            tasks.append(asyncio.create_task(keeper))
            # An ended notebook job's executed notebook and HTML, found for its row.
            outputs = background.repeat(
                lambda: notebook_outputs.collect(app.state.database, app.state.slurm),
                every=settings.job_look_seconds,
                done="Found the outputs of %d ended notebook job(s)",
                what="find notebook jobs' outputs",
            )
            tasks.append(asyncio.create_task(outputs))
        if settings.use_look_seconds > 0:
            database, slurm = app.state.database, app.state.slurm
            every = settings.use_look_seconds
            tasks.append(asyncio.create_task(collect_forever(database, slurm, every=every)))
        yield
        for task in tasks:
            task.cancel()
        app.state.database.engine.dispose()

    prefix = settings.prefix
    app = FastAPI(
        title="GPU portal",
        summary="Multi-node jobs, resource profiles and software environments of the cluster's "
        "JupyterHub, and its audit.",
        description=API_DESCRIPTION,
        version=package_version("slurm-gpu-portal"),
        docs_url=None,  # served by add_api_docs, from local files
        openapi_url=f"{prefix}/openapi.json",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    audit_stream.configure(settings.audit_dir)
    app.state.database = db.Database(settings.database_url)
    app.state.identity = identity or HubIdentity(settings)
    app.state.slurm = slurm or SlurmClient(
        bin_dir=settings.slurm_bin_dir, timeout=settings.slurm_timeout
    )
    app.state.catalog = catalog or PartitionCatalog(
        app.state.slurm.partitions, max_age=settings.cluster_cache_seconds
    )
    # GET /api/usage's answer per user, for USAGE_TTL_S (gpuportal_portal.routers.usage_api).
    app.state.recent_usage = {}
    app.state.output_folders = OutputFolders()
    app.state.queue = QueueView(app.state.slurm, default_partition=settings.default_partition)
    # The job states the hub reads too: one squeue of every job, shared through queue_file.
    queue = QueueReader(
        app.state.slurm, shared=Path(settings.queue_file) if settings.queue_file else None
    )
    app.state.watcher = JobWatcher(
        app.state.database,
        app.state.slurm,
        settings=settings,
        every=settings.job_look_seconds,
        queue=queue,
    )
    # The portal's pages, then what they share with the hub's (the navigation).
    app.state.templates = Jinja2Templates(
        directory=[str(TEMPLATES_DIR / "portal"), str(TEMPLATES_DIR / "shared")]
    )
    app.state.templates.env.globals.update(
        prefix=prefix,
        hub_prefix=settings.hub_prefix,
        # Every page's times (templates/shared/times.html): asked at each page, so DST follows.
        cluster_offset_now=cluster_offset_minutes,
    )
    for router in (
        profiles_api.router,
        environments_api.router,
        notices_api.router,
        maintenance_api.router,
        usage_api.router,
        jobs_api.router,
        schedules_api.router,
        admin_pages.router,
        environment_pages.router,
        maintenance_pages.router,
        job_pages.router,
        audit_api.router,
        metrics_api.router,
        oauth.router,
    ):
        app.include_router(router, prefix=prefix)
    _add_error_handlers(app)
    add_page_not_found(app)
    app.add_middleware(BodyLimit)  # inside the security headers: a refusal carries them too
    add_security_headers(app)
    add_api_docs(app, prefix)
    add_manual(app, prefix, built_docs(settings.docs_dir))
    add_lab_static(app, prefix, settings.lab_static_dirs)
    return app


# The hub's own endpoints of this product, beside JupyterHub's REST API, are not in this schema
# (the hub serves them): said here so that a client finds them.
API_DESCRIPTION = """Authenticate with a hub API token: `Authorization: token <token>` (the hub's
Token page). Times are ISO 8601 with their zone.

Sessions are the hub's, under `/hub/`, with the same token:

- `GET /hub/gpuportal/sessions`: your sessions as the home page's cards (state, node, job, time
  left, what Extend may add).
- `POST /hub/gpuportal/extend` `{"server": "", "add": "01:00:00"}`: a longer time limit for a
  running session, within its profile's maximum.
- `GET /hub/gpuportal/tensorboards`, `POST` `{"folder": "/home/you/runs", "group": "ds"}`: your
  shared TensorBoards, and the ones shared with you; share a folder with one of your groups.
- `GET /hub/gpuportal/capacity`: free GPUs and when each profile would start.
- Start and stop: JupyterHub's `POST`/`DELETE /hub/api/users/{name}/server` (or
  `/servers/{server}`), with `{"user_options": {"profile": "gpu-1", "runtime": "08:00:00"}}`.
"""


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, error: RequestValidationError) -> Response:
        # FastAPI's own answer, with pydantic's "Value error, " taken off each message: the
        # page shows the message at its field ("must be HH:MM:SS"), and so does a client.
        detail = jsonable_encoder(error.errors())
        for item in detail:
            for prefix in ("Value error, ", "Assertion failed, "):
                item["msg"] = str(item.get("msg", "")).removeprefix(prefix)
        return JSONResponse({"detail": detail}, status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.exception_handler(RuleViolation)
    async def _rules(_request: Request, error: RuleViolation) -> Response:
        detail = [
            {"loc": ["body", p.field], "msg": p.message, "type": "rule"} for p in error.problems
        ]
        return JSONResponse({"detail": detail}, status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.exception_handler(VersionConflict)
    async def _conflict(_request: Request, error: VersionConflict) -> Response:
        row = error.current
        current = (
            crud.to_public(row) if isinstance(row, Profile) else crud.to_environment_public(row)
        )
        return JSONResponse(
            {
                "detail": f"{current.slug} was changed by {current.updated_by} "
                f"(now version {current.version}); nothing was saved. Re-apply your change to "
                "the current values.",
                "current": current.model_dump(mode="json"),
            },
            status.HTTP_409_CONFLICT,
        )

    @app.exception_handler(SlugTaken)
    async def _taken(_request: Request, error: SlugTaken) -> Response:
        return JSONResponse(
            {"detail": f"The slug {error.slug} is taken by another {error.kind}; choose another."},
            status.HTTP_409_CONFLICT,
        )

    @app.exception_handler(ClusterUnavailable)
    async def _cluster(_request: Request, error: ClusterUnavailable) -> Response:
        return JSONResponse(
            {"detail": f"Cannot check the profile against the cluster now ({error}); try again."},
            status.HTTP_503_SERVICE_UNAVAILABLE,
        )

    @app.exception_handler(JobRejected)
    async def _rejected(_request: Request, error: JobRejected) -> Response:
        return JSONResponse(
            {"detail": f"Slurm refused the job: {error}"}, status.HTTP_400_BAD_REQUEST
        )

    @app.exception_handler(IdempotencyMismatch)
    async def _key_reused(_request: Request, error: IdempotencyMismatch) -> Response:
        return JSONResponse(
            {"detail": f"Idempotency-Key {error} was used for a different request; use a new key."},
            status.HTTP_409_CONFLICT,
        )

    @app.exception_handler(SlurmUnavailable)
    async def _slurm_down(_request: Request, error: SlurmUnavailable) -> Response:
        return JSONResponse(
            {"detail": f"Slurm is not answering ({error.message}); nothing was done. Retry."},
            status.HTTP_503_SERVICE_UNAVAILABLE,
        )

    @app.exception_handler(SubmissionUncertain)
    async def _uncertain(_request: Request, error: SubmissionUncertain) -> Response:
        return JSONResponse(
            {
                "detail": f"Slurm did not answer in time, so job {error.record_id} may or may "
                "not have been submitted. It shows as SUBMITTING in your job list until Slurm "
                "answers again; retry with the same Idempotency-Key, never a new one.",
                "job": error.record_id,
            },
            status.HTTP_503_SERVICE_UNAVAILABLE,
        )

    @app.exception_handler(LoginRequired)
    async def _login(request: Request, error: LoginRequired) -> Response:
        identity: HubIdentity = request.app.state.identity
        url, state = identity.login_url(error.next_url)
        response = RedirectResponse(url, status.HTTP_302_FOUND)
        response.set_cookie(
            STATE_COOKIE_NAME,
            state,
            path=app.state.settings.prefix + "/",
            httponly=True,
            samesite="lax",
            max_age=600,
            secure=oauth.is_https(request),
        )
        return response

    @app.exception_handler(PageForbidden)
    async def _forbidden(request: Request, error: PageForbidden) -> Response:
        templates: Jinja2Templates = request.app.state.templates
        return templates.TemplateResponse(
            request,
            "forbidden.html",
            {"caller": error.caller},
            status_code=status.HTTP_403_FORBIDDEN,
        )
