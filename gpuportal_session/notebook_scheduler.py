"""Jupyter Scheduler on Slurm: JupyterLab's "Create a notebook job" runs the notebook as a Slurm
batch job of the user, through the portal (its `notebook` launcher), not in this session's
process.

Jupyter Scheduler's own scheduler keeps its jobs in a SQLite file and runs each notebook in a
child of the JupyterLab server, so a job dies with its session and its list with the file. Here
every call goes to the portal's jobs API (through the hub: gpuportal_session.notebook_jobs_hub),
so a job keeps running when the session ends, and the list is the portal's records of Slurm's
states, right in any later session. The dialog's environments are the software environments
this user is offered, and its compute types their resource profiles, each with what it gives.

Set in the session's Jupyter config (jupyter_config/jupyter_server_config.d):
SchedulerApp.scheduler_class and SchedulerApp.environment_manager_class.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from jupyter_scheduler.environments import EnvironmentManager
from jupyter_scheduler.exceptions import SchedulerError
from jupyter_scheduler.executors import ExecutionManager
from jupyter_scheduler.models import (
    CountJobsQuery,
    CreateJob,
    CreateJobDefinition,
    CreateJobFromDefinition,
    DescribeJob,
    DescribeJobDefinition,
    JobFeature,
    ListJobDefinitionsQuery,
    ListJobDefinitionsResponse,
    ListJobsQuery,
    ListJobsResponse,
    RuntimeEnvironment,
    Status,
    UpdateJob,
    UpdateJobDefinition,
)
from jupyter_scheduler.scheduler import BaseScheduler

from gpuportal_core.states import job_state
from gpuportal_session.notebook_job_views import (
    FORMATS,
    compute_type,
    definition_id,
    describe,
    described_definition,
    job_id,
    profile_slug,
    record_id,
    status_of,
)
from gpuportal_session.notebook_jobs_hub import HubRefused, NotebookJobsHub

# The environment a job gets when the user chooses none: the session venv's, as sessions.
SESSION_DEFAULT = "session-default"
# How often a removal waits a second for a cancelled job to end.
REMOVE_TRIES = 15


class SlurmExecution(ExecutionManager):
    """Only what the dialog asks of an execution manager: what it offers. The notebook runs in
    the Slurm job (gpuportal_session.notebook_run), never here."""

    def execute(self) -> None:  # pragma: no cover - the job runs it, not this process
        raise SchedulerError("notebook jobs run in Slurm, not in the session")

    # Jupyter Scheduler calls it as cls.supported_features(cls): a plain function, not a
    # classmethod (which would take the class twice).
    def supported_features(cls) -> dict[JobFeature, bool]:
        return {
            JobFeature.job_name: True,
            JobFeature.parameters: True,
            JobFeature.output_formats: False,  # always the notebook and its HTML
            JobFeature.job_definition: True,
            JobFeature.idempotency_token: True,
            JobFeature.tags: False,
            JobFeature.email_notifications: False,
            JobFeature.timeout_seconds: False,
            JobFeature.retry_on_timeout: False,
            JobFeature.max_retries: False,
            JobFeature.min_retry_interval_millis: False,
            JobFeature.output_filename_template: False,
            JobFeature.stop_job: True,
            JobFeature.delete_job: True,
        }


class PortalEnvironments(EnvironmentManager):
    """The session environments this user is offered, each with the profiles it goes with as
    its compute types (from the hub: the spawn page's offer)."""

    def __init__(self, hub: NotebookJobsHub | None = None) -> None:
        self.hub = hub or NotebookJobsHub()
        # The last listing's names and the slugs they stand for (the dialog sends a name).
        self.slugs: dict[str, str] = {}

    async def slug_of(self, name: str) -> str:
        """The environment a name of the dialog's list stands for ("" for the session venv)."""
        if name not in self.slugs:
            await self.list_environments()
        if name not in self.slugs:
            raise SchedulerError(f"{name} is not an environment you are offered: choose another.")
        return self.slugs[name]

    async def list_environments(self) -> list[RuntimeEnvironment]:
        try:
            offer = await self.hub.call("GET", "/choices")
        except HubRefused as refused:
            raise SchedulerError(f"the hub did not list your profiles: {refused}") from None
        profiles = offer["profiles"]
        listed = offer["environments"]
        # A job without an environment runs in the session venv: offered by that name unless
        # an environment of the site's is that venv already (the demo's "Session default").
        if not any(env.get("session_venv") for env in listed):
            listed = [
                {"slug": SESSION_DEFAULT, "title": "Session default", "profiles": []},
                *listed,
            ]
        environments = []
        self.slugs = {}
        titles = [env["title"] for env in listed]
        for env in listed:
            # Jupyter Scheduler's list shows an environment's name and sends its label: both
            # the title, made unique by the slug where two share one.
            name = (
                env["title"]
                if titles.count(env["title"]) == 1
                else f"{env['title']} ({env['slug']})"
            )
            self.slugs[name] = "" if env["slug"] == SESSION_DEFAULT else env["slug"]
            types = [
                compute_type(p)
                for p in profiles
                if not env["profiles"] or p["slug"] in env["profiles"]
            ]
            environments.append(
                RuntimeEnvironment(
                    name=name,
                    label=name,
                    description=f"{env['title']}: runs as a Slurm job on one node",
                    file_extensions=["ipynb"],
                    output_formats=list(FORMATS),
                    metadata={},
                    compute_types=types,
                    default_compute_type=types[0] if types else None,
                    utc_only=False,
                )
            )
        return environments

    def manage_environments_command(self) -> str:
        return ""

    def output_formats_mapping(self) -> dict[str, str]:
        return dict(FORMATS)


class SlurmNotebookScheduler(BaseScheduler):
    """Jupyter Scheduler's jobs as the portal's notebook jobs (see the module's docstring)."""

    execution_manager_class = SlurmExecution
    # Schedules run from Slurm's queue (the portal keeps each definition's next run queued
    # there: gpuportal_portal.schedule_service), not from a loop in this process.
    task_runner = None

    def __init__(self, *args: Any, db_url: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hub = NotebookJobsHub()

    async def _call(self, method: str, path: str = "", body: Any = None) -> Any:
        try:
            return await self.hub.call(method, path, body)
        except HubRefused as refused:
            raise SchedulerError(str(refused)) from None

    async def _environment(self, name: str) -> str:
        environments = self.environments_manager
        if isinstance(environments, PortalEnvironments):
            return await environments.slug_of(name)
        return name

    async def _described(self, records: list[dict[str, Any]]) -> list[DescribeJob]:
        """Each record with its output files, looked for in a thread (the home may be NFS)."""
        return await asyncio.to_thread(lambda: [describe(r, self.root_dir) for r in records])

    async def create_job(self, model: CreateJob) -> str:
        body = {**await self._job_body(model), "idempotency_key": model.idempotency_token or ""}
        record = await self._call("POST", "", body)
        return job_id(int(record["id"]))

    async def list_jobs(self, query: ListJobsQuery) -> ListJobsResponse:
        jobs = await self._described(await self._call("GET"))
        if query.status:
            jobs = [j for j in jobs if j.status == query.status]
        if query.name:
            jobs = [j for j in jobs if j.name.startswith(query.name)]
        if query.start_time:
            jobs = [j for j in jobs if (j.start_time or 0) >= query.start_time]
        if query.job_definition_id:
            jobs = [j for j in jobs if j.job_definition_id == query.job_definition_id]
        for field in reversed(query.sort_by):
            jobs.sort(
                key=lambda j: (
                    getattr(j, field.name, None) is None,
                    getattr(j, field.name, None) or 0,
                ),
                reverse=field.direction.value == "desc",
            )
        start = int(query.next_token or 0)
        end = start + int(query.max_items or len(jobs))
        return ListJobsResponse(
            jobs=jobs[start:end],
            total_count=len(jobs),
            next_token=str(end) if end < len(jobs) else None,
        )

    async def count_jobs(self, query: CountJobsQuery) -> int:
        return sum(1 for r in await self._call("GET") if status_of(r["state"]) == query.status)

    async def get_job(self, job_id: str, job_files: bool | None = True) -> DescribeJob:
        (job,) = await self._described([await self._call("GET", f"/{record_id(job_id)}")])
        return job

    async def update_job(self, job_id: str, model: UpdateJob) -> None:
        if model.status == Status.STOPPED:
            await self.stop_job(job_id)
            return
        raise SchedulerError("A notebook job's name and profile are set when it is submitted.")

    async def stop_job(self, job_id: str) -> None:
        await self._call("DELETE", f"/{record_id(job_id)}")

    async def delete_job(self, job_id: str) -> None:
        """Cancel it if it still runs, then remove it from the list (its files stay)."""
        number = record_id(job_id)
        record = await self._call("GET", f"/{number}")
        if job_state(str(record.get("state") or "")).alive:
            await self._call("DELETE", f"/{number}")
        # A job just cancelled is ending for a moment: the portal keeps it until it has ended.
        for _ in range(REMOVE_TRIES - 1):
            try:
                await self.hub.call("DELETE", f"/{number}/record")
                return
            except HubRefused as refused:
                if refused.status != 409:
                    raise SchedulerError(str(refused)) from None
            await asyncio.sleep(1)
        await self._call("DELETE", f"/{number}/record")

    async def _definitions_call(self, method: str, path: str = "", body: Any = None) -> Any:
        return await self._call(method, f"/definitions{path}", body)

    async def _job_body(self, model: CreateJob | CreateJobDefinition) -> dict[str, Any]:
        """What the hub takes for a job or a definition: the notebook, profile, environment,
        parameters."""
        if not model.input_uri:
            raise SchedulerError(
                "The form has no input file: open it from a notebook's toolbar (Create a notebook"
                " job) or from a notebook's menu in the file browser."
            )
        notebook = os.path.join(self.root_dir, model.input_uri)
        # The home may be NFS: file system calls off the server's loop.
        if not await asyncio.to_thread(os.path.isfile, notebook):
            raise SchedulerError(f"There is no notebook {model.input_uri}: save it first.")
        return {
            "name": model.name,
            "notebook": notebook,
            "profile": profile_slug(model.compute_type),
            "environment": await self._environment(model.runtime_environment_name),
            "parameters": [f"{k}={v}" for k, v in (model.parameters or {}).items()],
        }

    async def create_job_definition(self, model: CreateJobDefinition) -> str:
        if not model.schedule:
            raise SchedulerError("Give the definition a schedule: when should it run?")
        body = {**await self._job_body(model), "schedule": model.schedule}
        body["timezone"] = model.timezone or "UTC"
        made = await self._definitions_call("POST", "", body)
        return definition_id(int(made["id"]))

    async def list_job_definitions(
        self, query: ListJobDefinitionsQuery
    ) -> ListJobDefinitionsResponse:
        found = [described_definition(d) for d in await self._definitions_call("GET")]
        if query.name:
            found = [d for d in found if d.name.startswith(query.name)]
        start = int(query.next_token or 0)
        end = start + int(query.max_items or len(found))
        return ListJobDefinitionsResponse(
            job_definitions=found[start:end],
            total_count=len(found),
            next_token=str(end) if end < len(found) else None,
        )

    async def get_job_definition(self, job_definition_id: str) -> DescribeJobDefinition:
        number = record_id(job_definition_id)
        return described_definition(await self._definitions_call("GET", f"/{number}"))

    async def update_job_definition(
        self, job_definition_id: str, model: UpdateJobDefinition
    ) -> None:
        """Pause, resume, a new schedule or name; the job itself is set when it is made."""
        changes = model.dict(exclude_unset=True)
        number = record_id(job_definition_id)
        if changes.get("input_uri"):
            # The edit form sends the notebook back as it showed it (its name): unchanged.
            shown = described_definition(await self._definitions_call("GET", f"/{number}"))
            if changes["input_uri"] == shown.input_filename:
                del changes["input_uri"]
        fixed = {k for k, v in changes.items() if v is not None} - {
            "active",
            "schedule",
            "timezone",
            "name",
            "url",
            "output_filename_template",  # sent with every update, never changed
        }
        if fixed:
            raise SchedulerError(
                f"A definition's {', '.join(sorted(fixed))} are set when it is made: delete it "
                "and make another."
            )
        body = {k: changes[k] for k in ("active", "schedule", "timezone", "name") if k in changes}
        await self._definitions_call("PATCH", f"/{number}", body)

    async def delete_job_definition(self, job_definition_id: str) -> None:
        await self._definitions_call("DELETE", f"/{record_id(job_definition_id)}")

    async def create_job_from_definition(
        self, job_definition_id: str, model: CreateJobFromDefinition
    ) -> str:
        if model.parameters:
            raise SchedulerError("A run of a definition takes the definition's parameters.")
        record = await self._definitions_call("POST", f"/{record_id(job_definition_id)}/runs")
        return job_id(int(record["id"]))

    def pause_jobs(self, job_definition_id: str) -> None:
        """Nothing here: pausing cancels the queued run at the portal."""

    def resume_jobs(self, job_definition_id: str) -> None:
        """Nothing here: resuming queues the next run at the portal."""

    def get_staging_paths(self, model: Any) -> dict[str, str]:
        return {}
