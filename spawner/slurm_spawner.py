"""The JupyterHub spawner for one JupyterLab in a Slurm job: a thin adapter over core."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from traitlets import Instance, Unicode

from gpuportal_adapters.slurm import SlurmError, SlurmUnavailable
from gpuportal_core.culling import Reason
from gpuportal_core.jobs import JobInfo
from gpuportal_core.lifecycle import ADOPTABLE, LIVE, Do, Event, Seen, Stage
from gpuportal_core.request import SpawnRequest
from gpuportal_core.sbatch import (
    TOKEN_VARS,
    SingleUserJob,
    render_singleuser_script,
    singleuser_command,
)
from gpuportal_core.slurm_time import format_runtime
from gpuportal_core.states import Phase
from gpuportal_core.sudo_rules import split_env
from gpuportal_spawner import (
    capacity,
    session_tls,  # internal TLS for the job
)
from gpuportal_spawner.audit import audit, started_by
from gpuportal_spawner.errors import spawn_error
from gpuportal_spawner.hub_state import hub_state
from gpuportal_spawner.metrics import QUEUE_WAIT
from gpuportal_spawner.queue_note import queued_note
from gpuportal_spawner.session_job import (
    SessionJob,
    lab_answers,
    scheduler_silent,
    scheduler_silent_for,
)

# How long a spawn waits for the controller to answer a ping before it is told the scheduler
# is not answering: sbatch's own wait (slurm_timeout) and the look for its job after it would
# keep the user waiting close to a minute over a broken network.
SCHEDULER_PING_S = 5.0
# How often to knock on the port while JupyterLab starts: a refused local connect costs well
# under a millisecond, and every tick of waiting is added to the user's spawn time.
CONNECT_RETRY_S = 0.05


async def _accepts_connections(host: str, port: int, timeout: float) -> bool:
    if await lab_answers(host, port, timeout):
        return True
    await asyncio.sleep(min(timeout, CONNECT_RETRY_S))
    return False


# What a session in a container image adds to "JupyterLab is starting".
IMAGE_NOTE = (
    " In a container image: a node that has not run it yet loads the image first, a minute or so."
)


class GpuSlurmSpawner(SessionJob):
    """Runs JupyterLab in an sbatch job built from a validated SpawnRequest.

    Built on batchspawner's SlurmSpawner for its traits and state (`job_id`, `req_*`), but every
    part that talks to Slurm or decides what a job state means is replaced:

    - start/poll/stop carry out gpuportal_core.lifecycle, the one state machine of a session;
      states mean what gpuportal_core.states says;
    - Slurm is reached through gpuportal_adapters.slurm (argv lists, timeouts, process groups), with
      one shared squeue for all servers (JobPoller), not batchspawner's shell command strings
      (batch_submit_cmd, batch_query_cmd, batch_cancel_cmd, exec_prefix, req_*, batch_script:
      refused at start-up, see gpuportal_spawner.unused_traits.refuse_unused);
    - each job carries a tag (--comment) naming hub, user and server, and is found by it: a
      spawn adopts a job of its own server that still waits (a hub restart, a retried request,
      an sbatch that timed out after submitting) instead of submitting a second one;
    - the hub's token goes to the job in a 0600 file, never in the job's environment.

    What follows the start (poll, stop, state, the Slurm boundary) is gpuportal_spawner.session_job.
    """

    # Set by the profile chooser before start(): the only source of job parameters.
    spawn_request = Instance(SpawnRequest, allow_none=True)
    # Set by the profile chooser for a resume after a hub restart: take over this queued job of
    # the server's (found by its tag), and never submit one.
    resume_job_id = Unicode("")

    def user_env(self, env: dict[str, str]) -> dict[str, str]:
        """batchspawner looks the user up in passwd here (twice, on the hub's loop: sssd or
        LDAP on a site) for USER, HOME and SHELL, which sudo sets for the job itself
        (gpuportal_core.sudo_rules.SET_BY_SUDO): nothing to look up."""
        return env

    def get_env(self) -> dict[str, str]:
        env: dict[str, str] = super().get_env()
        # Read in the job by gpuportal-singleuser (gpuportal_session.singleuser.prepare_home).
        if self.templates_dir:
            env["GPUPORTAL_TEMPLATES_DIR"] = self.templates_dir
        if self.shared_dir:
            env["GPUPORTAL_SHARED_DIR"] = self.shared_dir
        # Dask workers started from the session carry this tag (gpuportal_session.dask_setup):
        # the session's stop cancels them, and the jobs page lists them.
        env["GPUPORTAL_DASK_TAG"] = self.dask_tag
        if self.spawn_request is not None:
            # Their time limit: the session's own (they are cancelled when it stops anyway).
            env["GPUPORTAL_SESSION_RUNTIME"] = format_runtime(self.spawn_request.runtime)
        return env

    # -- internal TLS (gpuportal_spawner.session_tls)
    # -------------------------------------------------

    async def create_certs(self) -> dict[str, str]:
        return await session_tls.sign(self, await self._nodes_it_may_run_on())

    async def move_certs(self, pair: dict[str, str]) -> dict[str, str]:
        # Written with the token, in start(): JupyterHub calls this just before it.
        paths, self.tls_texts = await session_tls.hand_over(self.files, pair)
        return paths

    async def _nodes_it_may_run_on(self) -> list[str]:
        """The partition's nodes with GPUs enough for the profile (a resumed job's profile is
        not known here: every GPU node)."""
        snapshot = await capacity.snapshot(
            hub_state(self.user),
            bin_dir=self.slurm_bin_dir,
            timeout=self.slurm_timeout,
            ttl=self.capacity_ttl,
        ).get_within(2.0, first=True)  # a slow Slurm: the last look (nodes change seldom)
        if snapshot is None:
            raise scheduler_silent_for("its nodes could not be read")
        request = self.spawn_request
        if request is None:
            return [node.name for node in snapshot.nodes]
        profile = request.profile
        return [
            node.name
            for node in snapshot.nodes
            if profile.partition in node.partitions
            and node.total_of(profile.gpu_type) >= profile.gpus
        ]

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

    async def start(self) -> tuple[str, int]:
        request = self.spawn_request
        if not self.resume_job_id and request is None:
            raise spawn_error("No resource profile was chosen.", reason="no_profile")
        self.port = 0
        self._port_ready.clear()
        self._info = None
        self._advance(Seen(Event.SPAWN))  # its culling limits came with the request
        self.job_id = await self._adopt_or_submit(request)
        self._advance(Seen(Event.SUBMITTED))
        self._queued_since = time.monotonic()
        host = await self._wait_until_reachable()
        if request is not None:
            QUEUE_WAIT.labels(request.profile.slug).observe(time.monotonic() - self._queued_since)
        self.log.info("Job %s: JupyterLab at %s:%s", self.job_id, host, self.port)
        return host, self.port

    async def _adopt_or_submit(self, request: SpawnRequest | None) -> str:
        """A queued job of this server's if there is one, else a new one: never two."""
        self.may_have_a_job = bool(self.job_id)
        try:
            await self.slurm.ping(timeout=SCHEDULER_PING_S)
        except SlurmUnavailable as error:
            raise scheduler_silent(error) from None
        self.may_have_a_job = True  # from here on a job may exist (a queued one, or sbatch's)
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
            raise scheduler_silent(error) from None

    async def _adopt(self, jobs: list[JobInfo], log_dir: str, *, running_too: bool = False) -> str:
        """Take over the first job still waiting (handing it this spawn's token); cancel the rest.

        A job that already runs started with a token the hub no longer knows (it was let go at
        a hub restart, or its stop could not reach Slurm): it serves nobody.
        """
        wanted = LIVE if running_too else ADOPTABLE
        usable = [job.job_id for job in jobs if job.phase in wanted]
        keep = usable[0] if usable else ""
        for job in jobs:
            if job.job_id != keep:
                said = (job.job_id, self.tag, job.state, job.reason)  # what the takeover read
                self.log.warning("Job %s of %s serves nobody (%s, %s); cancelling it", *said)
                await self._cancel(job.job_id)
        if keep:
            await self._hand_over_token(log_dir)
            self.log.info("Took over job %s (%s)", keep, self.tag)
        return keep

    async def _submit(self, request: SpawnRequest, home: str, log_dir: str) -> str:
        await self._hand_over_token(log_dir)
        self.ip = self.listen_ip  # JUPYTERHUB_SERVICE_URL in get_env() is built from it
        # Only the names the service account's sudo rule passes on (gpuportal_core.sudo_rules).
        env, left_out = split_env({k: v for k, v in self.get_env().items() if k not in TOKEN_VARS})
        if left_out:
            self.log.warning(
                "Not passed to %s's job (not in the sudo rule's env_keep): %s",
                self.user.name,
                left_out,
            )
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
            container_mounts=self.container_mounts,
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
        profile = request.profile
        audit(
            "spawn",
            user=self.user.name,
            server=self.name,
            **started_by(getattr(self, "handler", None), self.user.name),
            profile=profile.slug,
            gpus=profile.gpus,
            cores=profile.gpus * profile.cores_per_gpu,
            mem_gb=profile.gpus * profile.mem_per_gpu_gb,
            runtime=format_runtime(request.runtime),
            environment=request.environment.slug if request.environment else "",
            partition=profile.partition,
            job=job_id,
        )
        return job_id

    # -- waiting for JupyterLab -----------------------------------------------------------

    def _check_every(self, stage: Stage) -> float:
        """Seconds between job checks: every status_interval while the job is new or starts;
        once it has waited in the queue a while, less often. The hub's one squeue serves every
        starting server, at the shortest interval any asks for; 200 queued sessions asked it
        57 times a minute at 1 s (bench/scale.py), which slurmctld serves to nobody's benefit:
        a queued job's start is told at once by its JupyterLab's port call."""
        waited = time.monotonic() - self._queued_since
        if stage is Stage.QUEUED and waited >= self.queued_checks_after:
            return max(self.status_interval, self.queued_status_interval)
        return self.status_interval

    async def _wait_until_reachable(self) -> str:
        asked_since_port = False
        every = self.status_interval
        while True:
            # Ask Slurm afresh once right after the port came (the job's host is needed then);
            # otherwise a shared answer up to `every` s old will do.
            port_known = self._port_ready.is_set()
            result = self._advance(
                await self._ask(0.0 if port_known and not asked_since_port else every)
            )
            every = self._check_every(result.stage)
            asked_since_port = port_known
            if result.stage is Stage.QUEUED and result.do is Do.WAIT:
                await self._cull_if_queued_too_long()
                await self._describe_queue()
            if result.do is Do.GONE:
                # Stopped meanwhile (the hub cancels a pending spawn's task; this is in case a
                # start goes on regardless): end here rather than watch a job nobody waits for.
                raise spawn_error(
                    self.note or "The session was stopped before JupyterLab started.",
                    reason="stopped",
                    status_code=500,
                )
            if result.do is Do.FAIL:
                await self._fail_start(result.message or "")
            if result.do is Do.CONNECT and self._info is not None:
                # Return only once JupyterLab accepts connections, so that a job dying here
                # (a broken user config, say) is caught by this loop, not the hub's http_timeout.
                if await _accepts_connections(self._info.host, self.port, self.status_interval):
                    self._advance(Seen(Event.LAB_ANSWERED))
                    return self._info.host
                continue
            if port_known:
                # Suspended or back in the queue after it reported: wait, never spin.
                await asyncio.sleep(every)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._port_ready.wait(), timeout=every)

    async def _cull_if_queued_too_long(self) -> None:
        """The profile's queue limit: jupyterhub-idle-culler never looks at a server that is
        still starting, so the wait loop applies it. The job is cancelled, never left to
        start hours later for nobody, and the stop that follows says why (session_job)."""
        limit = self.cull_limits.queued
        if not limit or time.monotonic() - self._queued_since < limit:
            return
        self.log.info(
            "Job %s waited %d s in the queue, over its limit: cancelled", self.job_id, limit
        )
        self.cull_mark = (Reason.QUEUED, time.time())
        result = self._advance(Seen(Event.QUEUE_LIMIT, limit=int(limit)))
        await self._cancel(self.job_id)
        raise spawn_error(result.message or "", reason="queued_too_long", status_code=500)

    async def _describe_queue(self) -> None:
        """Place in line, expected start and time waited, on top of Slurm's reason."""
        info, request = self._info, self.spawn_request
        if info is None or info.described.phase is not Phase.QUEUED:
            return
        if request is None:
            return  # a resumed job: its profile is not known here; Slurm's words stay
        snapshot = capacity.snapshot(
            hub_state(self.user),
            bin_dir=self.slurm_bin_dir,
            timeout=self.slurm_timeout,
            ttl=self.capacity_ttl,
        )
        waited = time.monotonic() - self._queued_since
        words, progress = await queued_note(
            info, request, snapshot, waited=waited, submitted=self._queued_since
        )
        self._advance(Seen(Event.QUEUE_DESCRIBED, words=words, progress=progress))

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

    def _in_image(self) -> bool:
        request = self.spawn_request
        return (
            request is not None
            and request.environment is not None
            and request.environment.kind == "container"
        )

    async def progress(self) -> AsyncIterator[dict[str, Any]]:
        last = ""
        while True:
            message = self.note or "Submitting the job to Slurm..."
            if self.stage is Stage.STARTING and self._in_image():
                # Its image is loaded first where the node has not run it (46 s here for the
                # demo's 586 MB): the page said only "starting" all that while.
                message += IMAGE_NOTE
            if message != last:
                yield {"progress": self.progress_percent or 10, "message": message}
                last = message
            await asyncio.sleep(0.5)
