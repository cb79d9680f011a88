"""A TensorBoard shared with a hub group: a named server (tb-NAME) that runs only TensorBoard.

It runs as a job step inside the owner's running session job (srun --jobid=J --overlap), so it
runs as the owner, on the session's node, within the session's allocation, and it ends when the
session ends (Slurm ends a job's steps with it) or when the owner stops it. In the step,
gpuportal_session.board_server serves that one TensorBoard behind the hub's OAuth: the owner and
those the server is shared with (JupyterHub shares, gpuportal_spawner.board_sharing) get in.
"""

from __future__ import annotations

import asyncio
import posixpath
from typing import Any

from jupyterhub.spawner import Spawner
from traitlets import List, Unicode

from gpuportal_adapters.slurm import SlurmError
from gpuportal_adapters.slurm_commands import command_env
from gpuportal_core.sbatch import PATH_RE, TOKEN_VARS
from gpuportal_core.sudo_rules import split_env
from gpuportal_spawner import session_tls
from gpuportal_spawner.errors import spawn_error
from gpuportal_spawner.job_files import JobFiles
from gpuportal_spawner.slurm_spawner import GpuSlurmSpawner

START_TIMEOUT_S = 90


def check_folder(folder: str) -> str:
    """An absolute folder path of safe characters, normalised; ValueError says what is wrong."""
    if not isinstance(folder, str) or not folder.startswith("/") or not PATH_RE.fullmatch(folder):
        raise ValueError("the folder must be an absolute path of letters, digits and _ . / -")
    if ".." in folder.split("/"):
        raise ValueError("the folder must not contain '..'")
    return posixpath.normpath(folder)


def board_options(options: dict[str, Any]) -> dict[str, Any]:
    """A board server's spawn options, checked: {"tensorboard": folder, "groups": [...]}."""
    try:
        folder = check_folder(str(options.get("tensorboard", "")))
    except ValueError as error:
        raise spawn_error(str(error), reason="invalid_options") from None
    groups: Any = options.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise spawn_error("groups must be a list of group names", reason="invalid_options")
    return {"tensorboard": folder, "groups": groups}


def _slurm(bin_dir: str, program: str) -> str:
    return f"{bin_dir.rstrip('/')}/{program}" if bin_dir else program


def step_command(
    lab: Any,
    *,
    board_name: str,
    home: str,
    log_dir: str,
    logdir: str,
    token_file: str,
    groups: list[str],
) -> list[str]:
    """The board's step in the owner's session job: srun as its first word, as the service
    account's sudo rule has it (gpuportal_core.sudo_rules)."""
    python = f"{lab.session_venv}/bin/python" if lab.session_venv else "python3"
    return [
        _slurm(lab.slurm_bin_dir, "srun"),
        f"--jobid={lab.job_id}",
        "--overlap",  # beside JupyterLab, in the session's own allocation
        "--nodes=1",
        "--ntasks=1",
        "--cpus-per-task=1",
        "--mem=2G",
        "--gres=none",
        f"--job-name={board_name}",
        f"--chdir={home}",
        f"--output={log_dir}/{board_name}-%j.%s.log",
        python,
        "-m",
        "gpuportal_session.board_server",
        "--logdir",
        logdir,
        "--token-file",
        token_file,
        *(f"--group={group}" for group in groups),
    ]


def step_lookup(bin_dir: str, session_job: str) -> list[str]:
    """squeue for the steps of the session job, as its owner (sites may hide others' jobs)."""
    return [
        _slurm(bin_dir, "squeue"),
        "--steps",
        f"--jobs={session_job}",
        "--noheader",
        "--format=%i %j",
    ]


NO_SESSION = "A shared TensorBoard runs inside one of your sessions: start a session first."


def hosting_session(user: Any) -> Any:
    """The owner's running session that a board can run in: the default one first."""
    names = sorted(user.spawners, key=lambda name: (name != "", name))
    for name in names:
        wrapper = user.spawners[name]
        session = wrapper.session
        if wrapper.ready and session is not None and session.job_id:
            return wrapper
    return None


class SharedBoardSpawner(Spawner):
    """Starts, polls and stops one shared TensorBoard step."""

    logdir = Unicode("", help="The folder the board shows (set from the server's options).")
    groups = List(Unicode(), help="The hub groups it is shared with (from the server's options).")
    session_job = Unicode("", help="The owner's session job the step runs in.")
    session_server = Unicode("", help="Which of the owner's servers that session is.")
    # The named server's name (tb-runs): the child of the profile chooser has no server of
    # its own, so its `name` is "".
    board_name = Unicode("", help="The named server this board is, e.g. tb-runs.")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._port_ready = asyncio.Event()
        self._process: asyncio.subprocess.Process | None = None
        # Under internal TLS: the board's key, certificate and CAs (move_certs), written with
        # its token in start().
        self.tls_texts: dict[str, str] = {}

    def set_up(self, options: dict[str, Any], *, board_name: str, oauth_access_scopes: Any) -> None:
        """What the profile chooser hands its board child before a start: the checked options
        (board_options), and the server's name and scopes. wrapspawner builds the child without
        the server (its name is ""): the scopes that let someone in
        (JUPYTERHUB_OAUTH_ACCESS_SCOPES) must name this server, tb-NAME, which its shares
        grant, not the owner's default server."""
        self.logdir = str(options.get("tensorboard", ""))
        self.groups = list(options.get("groups", []))
        self.board_name = board_name
        self.oauth_access_scopes = oauth_access_scopes

    def report_port(self, port: int) -> None:
        self.port = port
        self._port_ready.set()

    def _lab(self) -> GpuSlurmSpawner | None:
        wrapper = self.user.spawners.get(self.session_server)
        session = wrapper.session if wrapper is not None else None
        return session if session is not None and session.job_id else None

    # Internal TLS (gpuportal_spawner.session_tls): the board listens on its session's node, so its
    # certificate names that node alone.
    async def create_certs(self) -> dict[str, str]:
        wrapper = hosting_session(self.user)
        node = wrapper.server.ip if wrapper is not None and wrapper.server is not None else ""
        return await session_tls.sign(self, [node] if node else [])

    async def move_certs(self, pair: dict[str, str]) -> dict[str, str]:
        wrapper = hosting_session(self.user)
        if wrapper is None:
            raise spawn_error(NO_SESSION, reason="no_session")
        # Written with the token, in start(): JupyterHub calls this just before it.
        paths, self.tls_texts = await session_tls.hand_over(self._files(wrapper.session), pair)
        return paths

    def _files(self, lab: GpuSlurmSpawner) -> JobFiles:
        return JobFiles(
            lab.slurm,
            user=self.user.name,
            server=self.board_name,
            log_dir_template=lab.log_dir,
            hub=lab.hub_id,
        )

    async def start(self) -> tuple[str, int]:
        wrapper = hosting_session(self.user)
        if wrapper is None:
            raise spawn_error(NO_SESSION, reason="no_session")
        lab: GpuSlurmSpawner = wrapper.session
        self.session_job, self.session_server = lab.job_id, wrapper.name
        self.port = 0
        self._port_ready.clear()
        files = self._files(lab)
        home = await files.home()  # one passwd lookup for the log folder and the step's folder
        log_dir = files.log_dir_in(home)
        token_file = await files.write_token(log_dir, self.api_token, beside=self.tls_texts)
        self.tls_texts = {}
        env = {k: v for k, v in self.get_env().items() if k not in TOKEN_VARS}
        env["GPUPORTAL_BOARD_IP"] = lab.listen_ip  # as JupyterLab: empty is the node's address
        step = step_command(
            lab,
            board_name=self.board_name,
            home=home,
            log_dir=log_dir,
            logdir=self.logdir,
            token_file=token_file,
            groups=self.groups,
        )
        # The step's environment passes through sudo by name (its rule keeps only
        # gpuportal_core.sudo_rules.SESSION_ENV), as the session job's does; no `env` command.
        env, left_out = split_env(env)
        if left_out:
            self.log.warning("Not passed to %s's TensorBoard: %s", self.user.name, left_out)
        argv = lab.slurm.user_command(self.user.name, *step, keep=env)
        # Its own session: the step outlives a hub restart, and ends with the session job.
        self._process = await asyncio.create_subprocess_exec(
            *argv,
            env=command_env(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        await self._wait_for_port()
        host = wrapper.server.ip if wrapper.server is not None else "127.0.0.1"
        self.log.info(
            "Shared TensorBoard %s on %s: step of job %s at %s:%s",
            self._log_name,
            self.logdir,
            lab.job_id,
            host,
            self.port,
        )
        return host, self.port

    async def _wait_for_port(self) -> None:
        process = self._process
        assert process is not None
        ended = asyncio.ensure_future(process.wait())
        ported = asyncio.ensure_future(self._port_ready.wait())
        done, _ = await asyncio.wait(
            {ended, ported}, timeout=START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
        )
        if ported in done:
            ended.cancel()
            return
        ported.cancel()
        if ended not in done:
            ended.cancel()
            await self.stop()
            raise spawn_error(
                f"TensorBoard did not start within {START_TIMEOUT_S} s.", reason="board_timeout"
            )
        said = (await process.stderr.read()).decode(errors="replace") if process.stderr else ""
        last = said.strip().splitlines()[-1] if said.strip() else f"exit {process.returncode}"
        raise spawn_error(f"TensorBoard did not start: {last}", reason="board_failed")

    async def poll(self) -> int | None:
        if self._process is not None:
            return self._process.returncode
        # After a hub restart: the step lives as long as the session job it runs in.
        lab = self._lab()
        if lab is None or lab.job_id != self.session_job:
            return 0
        return None if await self._step_id(lab) else 0

    async def _step_id(self, lab: GpuSlurmSpawner) -> str:
        """The step's id (123.4) from Slurm, found by its name; "" if it is not there."""
        try:
            result = await lab.slurm.run_as_user(
                self.user.name, step_lookup(lab.slurm_bin_dir, self.session_job)
            )
        except SlurmError:
            return "unknown"  # Slurm trouble is never "gone"
        for line in result.stdout.splitlines():
            step, _, name = line.strip().partition(" ")
            if name == self.board_name:
                return step
        return ""

    async def stop(self, now: bool = False) -> None:
        process, self._process = self._process, None
        lab = self._lab()
        if process is not None and process.returncode is None:
            process.terminate()  # srun passes it on and ends the step
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
        else:
            step = await self._step_id(lab) if lab is not None else ""
            if lab is not None and step and step != "unknown":
                await lab.slurm.cancel(step, user=self.user.name)
        if lab is not None:
            await self._files(lab).remove_token()

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = super().get_state()
        state.update(session_job=self.session_job, session_server=self.session_server)
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        self.session_job = str(state.get("session_job", ""))
        self.session_server = str(state.get("session_server", ""))

    def clear_state(self) -> None:
        super().clear_state()
        self.session_job = self.session_server = ""
