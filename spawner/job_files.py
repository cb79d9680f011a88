"""A session job's files in the user's home: its log, and the hub token handed to it.

Everything here runs as the user (home directories may be root-squashed NFS), through the Slurm
client's run-as prefix and timeout.
"""

from __future__ import annotations

import asyncio
import logging
import pwd
import re

from gpuportal_adapters.slurm import SlurmClient, SlurmError

log = logging.getLogger(__name__)
# The end of a session's log read for its last lines (the waiting page's, a failed start's).
LOG_TAIL_BYTES = 32768


class JobFiles:
    def __init__(
        self, slurm: SlurmClient, *, user: str, server: str, log_dir_template: str, hub: str
    ):
        self._slurm = slurm
        self._user = user
        self._server = server
        self._template = log_dir_template
        self._hub = hub

    async def home(self) -> str:
        entry = await asyncio.to_thread(pwd.getpwnam, self._user)
        return entry.pw_dir

    async def log_dir(self) -> str:
        return self.log_dir_in(await self.home())

    def log_dir_in(self, home: str) -> str:
        return self._template.format(home=home)

    def token_file(self, log_dir: str) -> str:
        """One file per hub and server: two hubs sharing a home never overwrite each other's.

        Not one per spawn: a spawn that takes over a queued job renews that job's file.
        """
        hub, server = (re.sub(r"[^A-Za-z0-9_-]", "_", part) for part in (self._hub, self._server))
        return f"{log_dir}/token-{hub}-{server or 'default'}"

    def tls_files(self, log_dir: str) -> tuple[str, str]:
        """The session's TLS key with its certificate, and the CAs it trusts (internal TLS):
        beside the token, one pair per hub and server."""
        stem = self.token_file(log_dir).replace("/token-", "/tls-")
        return f"{stem}.pem", f"{stem}-ca.pem"

    async def write_token(
        self, log_dir: str, token: str, *, beside: dict[str, str] | None = None
    ) -> str:
        """The token in a 0600 file that only the user (and so the job) can read; with it, in
        the same go, the other private files the job reads (`beside`: path to text, the
        session's TLS files)."""
        path = self.token_file(log_dir)
        await self.write_private(log_dir, {path: token, **(beside or {})})
        return path

    async def write_private(self, log_dir: str, texts: dict[str, str]) -> None:
        """Each text in a 0600 file of the user's, in the log folder (made 0700 if missing).

        Commands of the service account's sudo rule (gpuportal_core.sudo_rules), not a shell:
        tee creates a file under the command umask (077, and sudo's), so 0600. One `install -d`
        for them all: each command is a fork and exec of the hub's process, which in a burst
        of spawns holds up its event loop (py-spy: a tenth of it went to starting commands).
        """
        commands: list[tuple[list[str], str | None]] = [
            (["install", "-d", "-m", "0700", log_dir], None)
        ]
        commands += [(["tee", path], text) for path, text in texts.items()]
        for argv, text_in in commands:
            result = await self._slurm.run_as_user(self._user, argv, input_text=text_in)
            if result.returncode != 0:
                raise OSError(f"Could not prepare {log_dir} for the job: {result.stderr.strip()}")

    async def remove_token(self) -> None:
        """Once the job has ended (the job itself keeps them: a requeued job reads them again),
        the token and the session's TLS files."""
        try:
            log_dir = await self.log_dir()
            paths = [self.token_file(log_dir), *self.tls_files(log_dir)]
            await self._slurm.run_as_user(self._user, ["rm", "-f", *paths])
        except (OSError, KeyError, SlurmError) as error:
            log.warning("Could not remove the token file of %s: %s", self._user, error)

    async def writable(self, path: str) -> bool:
        """Whether the user can write into the folder (False when it cannot be checked)."""
        try:
            result = await self._slurm.run_as_user(
                self._user, ["test", "-d", path, "-a", "-w", path]
            )
        except (OSError, SlurmError):
            return False
        return result.returncode == 0

    async def readable_folder(self, path: str) -> bool:
        """Whether the user can list and read the folder (False when it cannot be checked)."""
        try:
            result = await self._slurm.run_as_user(
                self._user, ["test", "-d", path, "-a", "-r", path, "-a", "-x", path]
            )
        except (OSError, SlurmError):
            return False
        return result.returncode == 0

    async def log_tail(self, job_id: str, lines: int) -> str:
        try:
            log_dir = await self.log_dir()
            path = f"{log_dir}/jupyter-{job_id}.log"
            # Its last bytes, then their last lines: a log of no newline is not read whole.
            result = await self._slurm.tail_as_user(self._user, [path], count=LOG_TAIL_BYTES)
        except (OSError, KeyError, SlurmError) as error:
            log.warning("Job %s: could not read its log: %s", job_id, error)
            return ""
        if result.returncode != 0:
            return ""
        return "\n".join(result.stdout.strip().splitlines()[-lines:]) if lines else ""
