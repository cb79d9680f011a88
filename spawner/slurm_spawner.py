"""The JupyterHub spawner for one JupyterLab in a Slurm job: a thin adapter over spawner.core."""

from __future__ import annotations

import asyncio
import contextlib
import pwd
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar

from batchspawner import SlurmSpawner
from traitlets import Any as AnyTrait
from traitlets import Bool, Float, Integer, List, Unicode

from spawner import port_handler  # noqa: F401  (replaces the stock port callback)
from spawner.core.jobs import JobInfo, Phase, start_progress
from spawner.core.poller import JobPoller
from spawner.core.request import SpawnRequest
from spawner.core.sbatch import (
    TOKEN_VARS,
    SingleUserJob,
    render_singleuser_script,
    singleuser_command,
)
from spawner.core.slurm import SlurmClient, SlurmError, SlurmUnavailable
from spawner.errors import spawn_error

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


class GpuSlurmSpawner(SlurmSpawner):
    """Runs JupyterLab in an sbatch job built from a validated SpawnRequest.

    Compared with stock SlurmSpawner: argv instead of shell strings, one shared squeue for all
    servers, the job id saved the moment sbatch returns, the pending reason shown while queued,
    a job that dies while starting reported within seconds with its log, and a Slurm hiccup
    never read as "the server is gone".
    """

    session_venv = Unicode(
        "",
        config=True,
        help="Python venv the job activates before starting JupyterLab, e.g. /opt/gpuportal/venv.",
    )
    templates_dir = Unicode(
        str(Path(__file__).resolve().parents[1] / "notebooks"),
        config=True,
        help="Notebooks every session finds in ~/templates, e.g. /opt/gpuportal/notebooks.",
    )
    shared_dir = Unicode(
        "",
        config=True,
        help="The cluster's shared data area, linked as ~/shared in every session, e.g. /data.",
    )
    modules_init = Unicode(
        "/etc/profile.d/lmod.sh",
        config=True,
        help="Script a job sources to get `module` when an environment is a list of modules, "
        "e.g. /etc/profile.d/lmod.sh.",
    )
    listen_ip = Unicode(
        "0.0.0.0",
        config=True,
        help="Address JupyterLab listens on in the job, e.g. 0.0.0.0, or 127.0.0.1 when the hub "
        "runs on the same host as the nodes.",
    )
    log_dir = Unicode(
        "{home}/.jupyterhub-logs",
        config=True,
        help="Where each job writes its log (created as the user), e.g. {home}/.jupyterhub-logs.",
    )
    run_as = List(
        ["sudo", "-E", "-u", "{user}"],
        config=True,
        help="Prefix that runs sbatch/scancel as the user, e.g. ['sudo', '-E', '-u', '{user}'].",
    )
    slurm_bin_dir = Unicode("", config=True, help="Directory of the Slurm commands, e.g. /usr/bin.")
    slurm_timeout = Float(20.0, config=True, help="Seconds before a Slurm command is given up.")
    status_interval = Float(
        1.0, config=True, help="Seconds between job checks while a server starts, e.g. 1.0."
    )
    poll_max_age = Float(
        10.0,
        config=True,
        help="How stale (seconds) a shared squeue answer may be for the hub's periodic poll.",
    )
    log_tail_lines = Integer(
        20, config=True, help="Lines of the job log shown when a job dies while starting."
    )

    # Set by the profile chooser before start(): the only source of job parameters.
    spawn_request = AnyTrait(None, allow_none=True)
    # Set by the profile chooser: the job of this server's previous spawn, to re-attach to.
    adopt_job_id = Unicode("")
    # True once start() returned; saved in state so a poll after a hub restart can tell a
    # server that was up from a spawn that was still waiting when the hub stopped.
    reachable = Bool(False)
    # A waiting job this spawner let go (hub restart): stop() must leave it for the resume.
    detached_job_id = Unicode("")
    # Set by the profile chooser: writes the hub's stored state now (called once sbatch returns).
    persist_state: Callable[[], None] | None = None

    _pollers: ClassVar[dict[tuple[Any, ...], JobPoller]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._port_ready = asyncio.Event()
        self._job_info: JobInfo | None = None

    def get_env(self) -> dict[str, str]:
        env: dict[str, str] = super().get_env()
        # Read in the job by gpuportal-singleuser (spawner.singleuser.prepare_home).
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

    async def _home(self) -> str:
        entry = await asyncio.to_thread(pwd.getpwnam, self.user.name)
        return entry.pw_dir

    # -- start ----------------------------------------------------------------------------

    def report_port(self, port: int) -> None:
        """Called by the port callback handler with a checked port."""
        self.port = port
        self._port_ready.set()

    def _log_dir_in(self, home: str) -> str:
        return self.log_dir.format(home=home)

    async def _log_dir(self) -> str:
        return self._log_dir_in(await self._home())

    def _token_file(self, log_dir: str) -> str:
        server = re.sub(r"[^A-Za-z0-9_-]", "_", self.name) or "default"
        return f"{log_dir}/token-{server}"

    async def _hand_over_token(self, log_dir: str) -> str:
        """Write this spawn's hub token where only the user (and so the job) can read it."""
        path = self._token_file(log_dir)
        result = await self.slurm.run_as_user(
            self.user.name,
            ["sh", "-c", 'umask 077 && mkdir -p "$1" && cat > "$2"', "sh", log_dir, path],
            input_text=self.api_token,
        )
        if result.returncode != 0:
            raise spawn_error(
                f"Could not prepare {log_dir} for the job: {result.stderr.strip()}",
                reason="log_dir",
                status_code=500,
            )
        return path

    async def _submit(self, request: SpawnRequest) -> str:
        home = await self._home()
        log_dir = self._log_dir_in(home)  # one passwd lookup for both
        token_file = await self._hand_over_token(log_dir)
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
            token_file=token_file,
            modules_init=self.modules_init,
        )
        script = render_singleuser_script(job)
        try:
            job_id = await self.slurm.submit(script, user=self.user.name, env=env)
        except SlurmUnavailable as error:
            raise spawn_error(
                f"The Slurm controller is not answering ({error.message}); try again in a minute.",
                reason="slurm_unavailable",
                status_code=503,
            ) from None
        except SlurmError as error:
            raise spawn_error(
                f"Slurm refused the job: {error.message}", reason="slurm_rejected"
            ) from None
        self.log.info(
            "Submitted job %s for %s (%s, %s s)",
            job_id,
            self.user.name,
            request.profile.slug,
            request.runtime,
        )
        return job_id

    async def start(self) -> tuple[str, int]:  # type: ignore[override]
        request = self.spawn_request
        if not isinstance(request, SpawnRequest):
            raise spawn_error("No resource profile was chosen.", reason="no_profile")
        self.port = 0
        self._port_ready.clear()
        self._job_info = None
        self.job_id = await self._reattach() or await self._submit(request)
        if self.persist_state is not None:
            # Saved now, not when the server is up: a hub restart while the job waits keeps it.
            self.persist_state()
        host = await self._wait_until_reachable()
        self.reachable = True
        self.log.info("Job %s: JupyterLab at %s:%s", self.job_id, host, self.port)
        return host, self.port

    async def _reattach(self) -> str:
        """The job of an earlier spawn of this server, if it still waits in the queue.

        After a hub restart the resume service starts the server again; rather than submit a
        second job (and lose the place in the queue) the new spawn takes over the queued one,
        handing it this spawn's token. A job that already started without the hub cannot be
        reached with the new token, so it is cancelled and a fresh one submitted.
        """
        job_id, self.adopt_job_id = self.adopt_job_id, ""
        if not job_id:
            return ""
        try:
            info = await self.poller.job(job_id, max_age=0.0)
        except SlurmUnavailable:
            return ""
        if info is None or info.user != self.user.name:
            return ""
        if info.phase is Phase.QUEUED:
            await self._hand_over_token(await self._log_dir())
            self.log.info("Re-attached %s's server to queued job %s", self.user.name, job_id)
            return job_id
        if info.phase in (Phase.RUNNING, Phase.SUSPENDED):
            self.log.warning("Job %s started while the hub was away; replacing it", job_id)
            await self._cancel(job_id)
        return ""

    async def _wait_until_reachable(self) -> str:
        while True:
            # Ask Slurm afresh only when the port has come but the job's host is not yet known.
            known = self._job_info is not None and self._job_info.phase is Phase.RUNNING
            max_age = 0.0 if self._port_ready.is_set() and not known else self.status_interval
            try:
                info = await self.poller.job(self.job_id, max_age=max_age)
            except SlurmUnavailable as error:
                self.log.warning("Job %s: Slurm not answering (%s)", self.job_id, error.message)
                info = self._job_info
            else:
                if info is None or info.phase in (Phase.ENDED, Phase.ENDING):
                    await self._fail_started_job(info)
            self._job_info = info
            if info is not None and info.phase is Phase.RUNNING and self._port_ready.is_set():
                # Return only once JupyterLab accepts connections, so that a job dying here
                # (a broken user config, say) is caught by the loop, not by the hub's long
                # http_timeout.
                if await _accepts_connections(info.host, self.port, self.status_interval):
                    return info.host
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._port_ready.wait(), timeout=self.status_interval)

    async def _fail_started_job(self, info: JobInfo | None) -> None:
        job_id = self.job_id
        state = info.state if info else "gone from the queue"
        tail = await self._log_tail(job_id)
        self.poller.untrack(job_id)
        self.clear_state()
        message = f"The JupyterLab job {job_id} ended while starting ({state})."
        if tail:
            message += f" Last lines of its log:\n{tail}"
        raise spawn_error(message, reason="job_ended", status_code=500)

    async def _log_tail(self, job_id: str) -> str:
        try:
            log_dir = await self._log_dir()
            result = await self.slurm.run_as_user(
                self.user.name,
                ["tail", "-n", str(self.log_tail_lines), f"{log_dir}/jupyter-{job_id}.log"],
            )
        except (OSError, KeyError, SlurmError) as error:
            self.log.warning("Job %s: could not read its log: %s", job_id, error)
            return ""
        return result.stdout.strip() if result.returncode == 0 else ""

    async def progress(self) -> AsyncIterator[dict[str, Any]]:  # type: ignore[override]
        last = ""
        while True:
            message, percent = start_progress(self.job_id, self._job_info)
            if message != last:
                yield {"progress": percent, "message": message}
                last = message
            await asyncio.sleep(0.5)

    # -- poll and stop ---------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = super().get_state()
        if self.reachable:
            state["reachable"] = True
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        self.reachable = bool(state.get("reachable", False))

    def clear_state(self) -> None:
        super().clear_state()
        self.reachable = False

    async def poll(self) -> int | None:  # type: ignore[override]
        if not self.job_id:
            return 0
        try:
            info = await self.poller.job(self.job_id, max_age=self.poll_max_age)
        except SlurmUnavailable as error:
            # Not knowing is not "gone": keep the server, ask again next poll.
            self.log.warning("Job %s: Slurm not answering (%s)", self.job_id, error.message)
            return None
        alive = info is not None and info.phase in (Phase.QUEUED, Phase.RUNNING, Phase.SUSPENDED)
        if alive and not self.reachable:
            # A spawn that was still waiting when the hub stopped. The hub will call it gone
            # and stop it; keep the job for the resume service, which starts the server again
            # and re-attaches to it.
            self.log.info("Job %s was waiting when the hub stopped; keeping it", self.job_id)
            self.detached_job_id = self.job_id
            return 1
        if info is not None and info.phase in (Phase.RUNNING, Phase.SUSPENDED):
            return None
        if info is not None and info.phase is Phase.QUEUED:
            # Requeued after it ran (node failure, preemption): its JupyterLab is gone and a
            # later restart would be unreachable, so end it rather than leave an orphan.
            self.log.warning("Job %s went back to the queue; cancelling it", self.job_id)
            await self._cancel(self.job_id)
        self.poller.untrack(self.job_id)
        return 1

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
        self.log.error("Job %s could not be cancelled; it ends at its time limit", job_id)

    async def stop(self, now: bool = False) -> None:  # type: ignore[override]
        job_id = self.job_id
        if not job_id:
            return
        if job_id == self.detached_job_id:
            return  # kept for the resume service (see poll)
        self.log.info("Stopping job %s of %s", job_id, self.user.name)
        await self._cancel(job_id)
        if not now:
            for _ in range(40):
                try:
                    info = await self.poller.job(job_id, max_age=0.0)
                except SlurmUnavailable:
                    break
                if info is None or info.phase is Phase.ENDED:
                    break
                await asyncio.sleep(0.25)
        self.poller.untrack(job_id)
