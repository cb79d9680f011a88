"""The JupyterHub spawner for one JupyterLab in a Slurm job: a thin adapter over core."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from traitlets import Any as AnyTrait
from traitlets import Unicode

from core.jobs import JobInfo
from core.lifecycle import Do, Event, Seen, Stage, Step, poll_answer, step
from core.poller import JobPoller
from core.request import SpawnRequest
from core.sbatch import (
    TOKEN_VARS,
    SingleUserJob,
    render_singleuser_script,
    singleuser_command,
)
from core.slurm import SlurmClient, SlurmError, SlurmUnavailable
from core.states import Phase
from core.tags import session_tag
from spawner import port_handler  # noqa: F401  (replaces the stock port callback)
from spawner.capacity import Snapshots
from spawner.errors import spawn_error
from spawner.job_files import JobFiles
from spawner.queue_note import queued_note
from spawner.session_settings import SessionJobSettings
from spawner.unused_traits import refuse_unused

# How often to knock on the port while JupyterLab starts: a refused local connect costs well
# under a millisecond, and every tick of waiting is added to the user's spawn time.
CONNECT_RETRY_S = 0.05


async def _accepts_connections(host: str, port: int, timeout: float) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        await asyncio.sleep(min(timeout, CONNECT_RETRY_S))
        return False
    writer.close()
    return True


class GpuSlurmSpawner(SessionJobSettings):
    """Runs JupyterLab in an sbatch job built from a validated SpawnRequest.

    Built on batchspawner's SlurmSpawner for its traits and state (`job_id`, `req_*`), but every
    part that talks to Slurm or decides what a job state means is replaced:

    - start/poll/stop carry out core.lifecycle, the one state machine of a session;
      states mean what core.states says;
    - Slurm is reached through core.slurm (argv lists, timeouts, process groups), with
      one shared squeue for all servers (JobPoller), not batchspawner's shell command strings
      (batch_submit_cmd, batch_query_cmd, batch_cancel_cmd, exec_prefix, req_*, batch_script:
      refused at start-up, see _refuse_unused);
    - each job carries a tag (--comment) naming hub, user and server, and is found by it: a
      spawn adopts a job of its own server that still waits (a hub restart, a retried request,
      an sbatch that timed out after submitting) instead of submitting a second one;
    - the hub's token goes to the job in a 0600 file, never in the job's environment.
    """

    # Set by the profile chooser before start(): the only source of job parameters.
    spawn_request = AnyTrait(None, allow_none=True)
    # Set by the profile chooser for a resume after a hub restart: take over this queued job of
    # the server's (found by its tag), and never submit one.
    resume_job_id = Unicode("")

    _pollers: ClassVar[dict[tuple[Any, ...], JobPoller]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        refuse_unused(self.config)
        self._port_ready = asyncio.Event()
        self._info: JobInfo | None = None
        self._queued_since = time.monotonic()  # for "waiting N min so far"
        self.stage = Stage.SUBMITTING
        # What the user is told of the session now: the spawn-pending page while it starts,
        # the home page once it is suspended, requeued or ended.
        self.note = ""
        self.progress_percent = 0
        # Set when the hub, starting up, lets go of a server that was still starting: its job
        # is kept for the resume, so stop() must leave it alone.
        self.detached = False

    @property
    def tag(self) -> str:
        return str(session_tag(hub=self.hub_id, user=self.user.name, server=self.name))

    def get_env(self) -> dict[str, str]:
        env: dict[str, str] = super().get_env()
        # Read in the job by gpuportal-singleuser (gpuportal_session.singleuser.prepare_home).
        if self.templates_dir:
            env["GPUPORTAL_TEMPLATES_DIR"] = self.templates_dir
        if self.shared_dir:
            env["GPUPORTAL_SHARED_DIR"] = self.shared_dir
        return env

    # -- the Slurm boundary -------------------------------------------------------------

    @property
    def slurm(self) -> SlurmClient:
        return SlurmClient(
            run_as=self.run_as, timeout=self.slurm_timeout, bin_dir=self.slurm_bin_dir
        )

    @property
    def poller(self) -> JobPoller:
        # One poller per Slurm configuration, shared by every spawner in this hub process.
        key = (tuple(self.run_as), self.slurm_timeout, self.slurm_bin_dir)
        if key not in self._pollers:
            self._pollers[key] = JobPoller(self.slurm)
        return self._pollers[key]

    async def _ask(self, max_age: float) -> Seen:
        try:
            info = await self.poller.job(self.job_id, max_age=max_age)
        except SlurmUnavailable as error:
            self.log.warning("Job %s: Slurm not answering (%s)", self.job_id, error.message)
            return Seen(Event.SLURM_SILENT)
        self._info = info
        return Seen(Event.SLURM, info, port_known=self._port_ready.is_set())

    def _advance(self, seen: Seen, *, hub_check: bool = False) -> Step:
        result = step(self.stage, seen, job_id=self.job_id, hub_check=hub_check)
        if result.stage is not self.stage:
            self.log.info(
                "Job %s of %s: %s -> %s", self.job_id, self.user.name, self.stage, result.stage
            )
        self.stage, self.note, self.progress_percent = result.stage, result.message, result.progress
        return result

    async def _own_jobs(self) -> list[JobInfo]:
        """The live jobs carrying this server's tag; a spawn-time error if Slurm is silent."""
        try:
            return await self.slurm.tagged(self.tag, user=self.user.name)
        except SlurmUnavailable as error:
            raise _scheduler_silent(error) from None

    # -- start ----------------------------------------------------------------------------

    def report_port(self, port: int) -> None:
        """Called by the port callback handler with a checked port."""
        self.port = port
        self._port_ready.set()

    async def current_host(self) -> str:
        """Where the job runs now, asked afresh (a requeued job may run on another node)."""
        try:
            info = await self.poller.job(self.job_id, max_age=0.0)
        except SlurmUnavailable:
            return ""
        return info.host if info is not None else ""

    async def start(self) -> tuple[str, int]:  # type: ignore[override]
        request = self.spawn_request
        if not self.resume_job_id and not isinstance(request, SpawnRequest):
            raise spawn_error("No resource profile was chosen.", reason="no_profile")
        self.port = 0
        self._port_ready.clear()
        self._info = None
        self.stage, self.detached = Stage.SUBMITTING, False
        self.job_id = await self._adopt_or_submit(request)
        self.stage = Stage.QUEUED
        self._queued_since = time.monotonic()
        host = await self._wait_until_reachable()
        self.log.info("Job %s: JupyterLab at %s:%s", self.job_id, host, self.port)
        return host, self.port

    async def _adopt_or_submit(self, request: SpawnRequest | None) -> str:
        """A queued job of this server's if there is one, else a new one: never two."""
        home = await self.files.home()  # one passwd lookup for the log folder and the job
        log_dir = self.files.log_dir_in(home)
        adopted = await self._adopt(await self._own_jobs(), log_dir)
        if adopted:
            return adopted
        if self.resume_job_id or request is None:
            raise spawn_error(
                f"Job {self.resume_job_id} no longer waits in the queue; nothing to resume.",
                reason="nothing_to_resume",
            )
        try:
            return await self._submit(request, home, log_dir)
        except SlurmUnavailable as error:
            # sbatch may have submitted before it was stopped: look for the job by its tag
            # before saying anything, and take it over if it is there (exactly once). It holds
            # this spawn's token, so it may already run.
            self.log.warning("sbatch for %s gave no answer (%s)", self.user.name, error.message)
            adopted = await self._adopt(await self._own_jobs(), log_dir, running_too=True)
            if adopted:
                return adopted
            raise _scheduler_silent(error) from None

    async def _adopt(self, jobs: list[JobInfo], log_dir: str, *, running_too: bool = False) -> str:
        """Take over the first job still waiting (handing it this spawn's token); cancel the rest.

        A job that already runs started with a token the hub no longer knows (it was let go at
        a hub restart, or its stop could not reach Slurm): it serves nobody.
        """
        wanted = WAITING | {Phase.RUNNING} if running_too else WAITING
        usable = [job.job_id for job in jobs if job.phase in wanted]
        keep = usable[0] if usable else ""
        for job in jobs:
            if job.job_id != keep:
                self.log.warning("Job %s of %s serves nobody; cancelling it", job.job_id, self.tag)
                await self._cancel(job.job_id)
        if keep:
            await self._hand_over_token(log_dir)
            self.log.info("Took over job %s (%s)", keep, self.tag)
        return keep

    # -- the job's files: its log and the token hand-over ----------------------------------

    @property
    def files(self) -> JobFiles:
        return JobFiles(
            self.slurm,
            user=self.user.name,
            server=self.name,
            log_dir_template=self.log_dir,
            hub=self.hub_id,
        )

    async def _hand_over_token(self, log_dir: str) -> None:
        """Write this spawn's hub token where only the user (and so the job) can read it."""
        try:
            await self.files.write_token(log_dir, self.api_token)
        except OSError as error:
            raise spawn_error(str(error), reason="log_dir", status_code=500) from None

    async def _submit(self, request: SpawnRequest, home: str, log_dir: str) -> str:
        await self._hand_over_token(log_dir)
        self.ip = self.listen_ip  # JUPYTERHUB_SERVICE_URL in get_env() is built from it
        env = {k: v for k, v in self.get_env().items() if k not in TOKEN_VARS}
        job = SingleUserJob.from_request(
            request,
            user=self.user.name,
            output=f"{log_dir}/jupyter-%j.log",
            workdir=home,
            export_vars=list(env),
            command=singleuser_command(
                self.get_args(), environment=request.environment, session_venv=self.session_venv
            ),
            venv=self.session_venv,
            token_file=self.files.token_file(log_dir),
            modules_init=self.modules_init,
            tag=self.tag,
        )
        try:
            job_id = await self.slurm.submit(
                render_singleuser_script(job), user=self.user.name, env=env
            )
        except SlurmUnavailable:
            raise  # the caller looks for the job by its tag
        except SlurmError as error:
            raise spawn_error(
                f"Slurm refused the job: {error.message}", reason="slurm_rejected"
            ) from None
        self.log.info(
            "Submitted job %s (%s, %s, %s s)",
            job_id,
            self.tag,
            request.profile.slug,
            request.runtime,
        )
        return job_id

    # -- waiting for JupyterLab -----------------------------------------------------------

    async def _wait_until_reachable(self) -> str:
        asked_since_port = False
        while True:
            # Ask Slurm afresh once right after the port came (the job's host is needed then);
            # otherwise a shared answer up to status_interval old will do.
            port_known = self._port_ready.is_set()
            result = self._advance(
                await self._ask(
                    0.0 if port_known and not asked_since_port else self.status_interval
                )
            )
            asked_since_port = port_known
            if result.stage is Stage.QUEUED and result.do is Do.WAIT:
                await self._describe_queue()
            if result.do is Do.FAIL:
                await self._fail_start(result.message)
            if result.do is Do.CONNECT and self._info is not None:
                # Return only once JupyterLab accepts connections, so that a job dying here
                # (a broken user config, say) is caught by this loop, not the hub's http_timeout.
                if await _accepts_connections(self._info.host, self.port, self.status_interval):
                    self._advance(Seen(Event.LAB_ANSWERED))
                    return self._info.host
                continue
            if port_known:
                # Suspended or back in the queue after it reported: wait, never spin.
                await asyncio.sleep(self.status_interval)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._port_ready.wait(), timeout=self.status_interval)

    async def _describe_queue(self) -> None:
        """Place in line, expected start and time waited, on top of Slurm's reason."""
        info, request = self._info, self.spawn_request
        if info is None or info.described.phase is not Phase.QUEUED:
            return
        if not isinstance(request, SpawnRequest):
            return  # a resumed job: its profile is not known here; Slurm's words stay
        snapshot = Snapshots.get(
            bin_dir=self.slurm_bin_dir, timeout=self.slurm_timeout, ttl=self.capacity_ttl
        )
        waited = time.monotonic() - self._queued_since
        self.note, self.progress_percent = await queued_note(
            info, request, snapshot, waited=waited, submitted=self._queued_since
        )

    async def _fail_start(self, message: str) -> None:
        job_id = self.job_id
        tail = await self.files.log_tail(job_id, self.log_tail_lines)
        await self._cancel(job_id)  # a job Slurm could requeue must not come back alone
        await self._forget()
        if tail:
            message += f" Last lines of its log:\n{tail}"
        else:
            # No log at all: often Slurm could not open it, which is the whole story.
            log_dir = await self.files.log_dir()
            if not await self.files.writable(log_dir):
                message += (
                    f" Slurm could not write its log: {log_dir} is not a folder you can write "
                    "to. Fix its permissions (or remove it) and start again."
                )
        raise spawn_error(message, reason="job_ended", status_code=500)

    async def progress(self) -> AsyncIterator[dict[str, Any]]:  # type: ignore[override]
        last = ""
        while True:
            message = self.note or "Submitting the job to Slurm..."
            if message != last:
                yield {"progress": self.progress_percent or 10, "message": message}
                last = message
            await asyncio.sleep(0.5)

    # -- state, poll and stop ----------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = super().get_state()
        if self.job_id:
            state["stage"] = self.stage.value
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        # "reachable": the state the previous release saved for a server that was up.
        stage = state.get("stage") or ("ready" if state.get("reachable") else "submitting")
        self.stage = Stage(stage) if stage in {s.value for s in Stage} else Stage.SUBMITTING

    def clear_state(self) -> None:
        super().clear_state()
        self.stage = Stage.SUBMITTING

    async def poll(self) -> int | None:  # type: ignore[override]
        return await self.poll_session()

    async def poll_session(self, *, hub_check: bool = False) -> int | None:
        """The hub's poll, carried out by the lifecycle (hub_check: the hub is starting up)."""
        if self.detached or self.stage is Stage.ENDED:
            return 1  # and the note saying why stays as it is
        if not self.job_id:
            # A spawn stopped before sbatch answered, or a hub that stopped before it saved the
            # job id: the tag finds the job if there is one.
            try:
                jobs = await self.slurm.tagged(self.tag, user=self.user.name)
            except SlurmUnavailable:
                return 1 if hub_check else None
            if not jobs:
                return 0
            self.job_id = jobs[0].job_id
        result = self._advance(await self._ask(self.poll_max_age), hub_check=hub_check)
        answer = poll_answer(result)
        if result.do is Do.DETACH:
            self.log.info(
                "Job %s was starting when the hub stopped; kept for the resume", self.job_id
            )
            self.detached = True
        elif result.do is Do.CANCEL:
            await self._cancel(self.job_id)
        if answer is not None and not self.detached:
            self.log.info("%s: %s", self.tag, result.message)
            await self._forget()
        return answer

    async def _forget(self) -> None:
        self.poller.untrack(self.job_id)
        await self.files.remove_token()

    async def _cancel(self, job_id: str) -> None:
        delay = 0.5
        for attempt in range(5):
            try:
                await self.slurm.cancel(job_id, user=self.user.name)
                return
            except SlurmUnavailable as error:
                self.log.warning("scancel %s failed (try %d): %s", job_id, attempt + 1, error)
                await asyncio.sleep(delay)
                delay *= 2
            except SlurmError as error:
                self.log.warning("scancel %s: %s", job_id, error.message)
                return
        self.log.error("Job %s could not be cancelled; it ends at its time limit", job_id)

    async def stop(self, now: bool = False) -> None:  # type: ignore[override]
        if self.detached:
            return  # kept for the resume (see poll_session)
        job_ids = {self.job_id} if self.job_id else set()
        with contextlib.suppress(SlurmUnavailable):
            # A submission still in flight when the stop came is found by its tag.
            job_ids |= {
                job.job_id for job in await self.slurm.tagged(self.tag, user=self.user.name)
            }
        self._advance(Seen(Event.STOP))
        for job_id in sorted(job_ids):
            self.log.info("Stopping job %s (%s)", job_id, self.tag)
            await self._cancel(job_id)
        if not now:
            await self._wait_gone(job_ids)
        await self._forget()

    async def _wait_gone(self, job_ids: set[str]) -> None:
        for _ in range(40):
            try:
                jobs = await self.slurm.jobs(job_ids)
            except SlurmUnavailable:
                return
            if all(info.phase is Phase.ENDED for info in jobs.values()):
                return
            await asyncio.sleep(0.25)


# The phases in which a job has not started yet, and so can be taken over.
WAITING = frozenset({Phase.QUEUED, Phase.REQUEUED})


def _scheduler_silent(error: SlurmError) -> Exception:
    return spawn_error(
        f"The scheduler is not answering ({error.message}); try again in a minute.",
        reason="slurm_unavailable",
        status_code=503,
    )
