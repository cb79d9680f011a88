"""An async Slurm client: argv lists (never a shell), each call with a timeout."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import posixpath
import signal
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpuportal_core.accounting import ASSOC_FORMAT, Associations, parse_associations
from gpuportal_core.capacity import (
    HOLDING,
    JOBS_FORMAT,
    NODES_FORMAT,
    GpuJob,
    NodeGpus,
    parse_jobs,
    parse_nodes,
)
from gpuportal_core.jobs import (
    SACCT_FORMAT,
    SQUEUE_FORMAT,
    JobDetail,
    JobInfo,
    parse_sacct,
    parse_sbatch_parsable,
    parse_scontrol_jobs,
    parse_squeue,
)
from gpuportal_core.partitions import SINFO_FORMAT, Partition, parse_sinfo
from gpuportal_core.tags import parse_tag

log = logging.getLogger(__name__)

# squeue/scancel say this for a job id that has left slurmctld's memory: the job is gone.
_GONE_MARKERS = ("Invalid job id specified", "Invalid job id")
# These mean the controller could not be asked: state unknown, not "job gone".
_UNREACHABLE_MARKERS = (
    "Unable to contact slurm controller",
    "Socket timed out",
    "Connection refused",
    "Zero Bytes were transmitted",
)


# What every command gets as its environment, whoever it runs as: never the service's own,
# which holds its API token and database URL. A process that runs as a user can be read by
# that user (/proc/<pid>/environ), so the rule is "name what passes", never "pass all".
_BASE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "SLURM_CONF", "TZ")
# The default run-as prefix: sudo passes on only the variables named in {keep}.
DEFAULT_RUN_AS = ("sudo", "--preserve-env={keep}", "-u", "{user}")
# What commands create (sbatch's output files, the job's log folder) is private by default.
COMMAND_UMASK = 0o077


def command_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The few variables of this process that commands need, plus `extra`."""
    env = {key: os.environ[key] for key in _BASE_ENV_KEYS if key in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra or {})
    return env


class SlurmError(RuntimeError):
    """A Slurm command failed; `message` is Slurm's own words, fit to show a user."""

    def __init__(self, argv: Sequence[str], returncode: int, message: str) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.message = message
        super().__init__(f"{argv[0]} exited {returncode}: {message}")


class SlurmUnavailable(SlurmError):
    """slurmctld could not be reached (or did not answer in time): try again later."""


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str


# Called after each command with (command name, seconds, outcome: "ok", "error" or "timeout"):
# the hub and the portal count Slurm calls for their metrics (spawner/metrics, portal/metrics).
CommandObserver = Callable[[str, float, str], None]
_observers: list[CommandObserver] = []
SLURM_COMMANDS = frozenset(
    {"sbatch", "squeue", "scancel", "sinfo", "scontrol", "srun", "sacct", "sacctmgr"}
)


def observe_commands(observer: CommandObserver) -> None:
    _observers.append(observer)


def command_name(argv: Sequence[str]) -> str:
    """The Slurm command in argv (after a sudo prefix), else the program's own name."""
    names = [posixpath.basename(part) for part in argv]
    return next((name for name in names if name in SLURM_COMMANDS), names[0] if names else "")


def _observed(argv: Sequence[str], started: float, outcome: str) -> None:
    if not _observers:
        return
    name, seconds = command_name(argv), time.monotonic() - started
    for observer in _observers:
        observer(name, seconds, outcome)


# At most this many commands at once in one process (the hub, the portal). A burst of spawns
# started every command at once (a key written as the user, a submission, a lookup, each
# through sudo): 300 of them starved the machine and a third of the submissions outlived their
# timeout (bench/scale.py). Taking turns, first come first served, each command runs quickly.
MAX_CONCURRENT = 8
_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _turn() -> asyncio.Semaphore:
    """This event loop's turns (a semaphore belongs to one loop)."""
    loop = asyncio.get_running_loop()
    turns = _turns.get(loop)
    if turns is None:
        turns = _turns[loop] = asyncio.Semaphore(MAX_CONCURRENT)
    return turns


async def run_command(
    argv: Sequence[str],
    *,
    input_text: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float,
) -> CommandResult:
    """Run argv, feed it input_text, and kill it (its whole process group) if it outlives timeout.

    The group matters: under `sudo -u USER sbatch`, killing sudo alone can leave sbatch running,
    and a submission that goes through after we gave up is a duplicate job. Killing the group
    makes that unlikely; looking the job up by its tag afterwards (gpuportal_core.tags) makes it
    exact.

    env: the command's whole environment (default: command_env()); this process's own
    environment never passes through.
    """
    async with _turn():  # waiting for a turn is not part of the timeout
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if input_text is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else command_env(),
            start_new_session=True,
            umask=COMMAND_UMASK,
        )
        data = input_text.encode() if input_text is not None else None
        try:
            out, err = await asyncio.wait_for(proc.communicate(data), timeout)
        except TimeoutError:
            await _kill_group(proc)
            _observed(argv, started, "timeout")
            raise SlurmUnavailable(argv, -9, f"no answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            await _kill_group(proc)
            raise
        returncode = proc.returncode if proc.returncode is not None else -1
        _observed(argv, started, "ok" if returncode == 0 else "error")
        return CommandResult(returncode, out.decode(errors="replace"), err.decode(errors="replace"))


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    # TERM first, which sudo relays to the command it runs; then KILL whatever is left.
    for sig, grace in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
            return


def _last_line(text: str) -> str:
    """The last non-empty line: Slurm's commands print their warnings first and the error (or
    the answer) last."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _raise_for(argv: Sequence[str], result: CommandResult) -> None:
    message = _last_line(result.stderr) or _last_line(result.stdout) or "no output"
    # sbatch prefixes its errors with "sbatch: error: "; the rest is what a user needs to read.
    for prefix in ("sbatch: error: ", "squeue: error: ", "scancel: error: ", "sinfo: error: "):
        message = message.removeprefix(prefix)
    if any(marker in result.stderr for marker in _UNREACHABLE_MARKERS):
        raise SlurmUnavailable(argv, result.returncode, message)
    raise SlurmError(argv, result.returncode, message)


class SlurmClient:
    """Submits, queries and cancels jobs; submission and cancel run as the job's user."""

    def __init__(
        self,
        *,
        run_as: Sequence[str] = DEFAULT_RUN_AS,
        timeout: float = 20.0,
        bin_dir: str = "",
    ) -> None:
        self._run_as = list(run_as)
        self._timeout = timeout
        self._bin = bin_dir.rstrip("/") + "/" if bin_dir else ""

    def _as_user(self, user: str, *argv: str, keep: Iterable[str] = ()) -> list[str]:
        """run_as filled in; a part naming {keep} is left out when no variable is kept."""
        kept = ",".join(sorted(keep))
        prefix = [
            part.replace("{user}", user).replace("{keep}", kept)
            for part in self._run_as
            if kept or "{keep}" not in part
        ]
        return [*prefix, *argv]

    def user_command(self, user: str, *argv: str) -> list[str]:
        """argv as the user (the run-as prefix), for a process the caller runs itself."""
        return self._as_user(user, *argv)

    async def submit(
        self,
        script: str,
        *,
        user: str,
        env: Mapping[str, str],
        test_only: bool = False,
        tag: str = "",
    ) -> str:
        """Submit script as user; return the job id (or sbatch's verdict with test_only).

        tag: the job's comment (gpuportal_core.tags), by which it is found again if sbatch times
        out after submitting.
        """
        options = [f"--comment={tag}"] if tag else []
        argv = self._as_user(
            user,
            self._bin + "sbatch",
            "--test-only" if test_only else "--parsable",
            *options,
            keep=env,
        )
        result = await run_command(
            argv, input_text=script, env=command_env(env), timeout=self._timeout
        )
        if result.returncode != 0:
            _raise_for(argv, result)
        if test_only:
            # --test-only answers on stderr: "sbatch: Job 12 to start at ... on nodes gpu01".
            return _last_line(result.stderr)
        return parse_sbatch_parsable(result.stdout)

    async def jobs(self, job_ids: Iterable[str]) -> dict[str, JobInfo]:
        """One squeue for all the given jobs; jobs missing from the answer have ended."""
        ids = sorted(set(job_ids), key=int)
        if not ids:
            return {}
        argv = [
            self._bin + "squeue",
            "--noheader",
            "--states=all",
            f"--jobs={','.join(ids)}",
            f"--format={SQUEUE_FORMAT}",
        ]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            if any(marker in result.stderr for marker in _GONE_MARKERS):
                # A lone purged id makes squeue fail; any others then are gone too or
                # get asked again next time, so treat the whole answer as empty.
                return {}
            _raise_for(argv, result)
        return parse_squeue(result.stdout)

    async def tagged(
        self, tag: str | None = None, *, user: str = "", alive_only: bool = True
    ) -> list[JobInfo]:
        """Jobs whose comment is `tag` (with no tag: any of the portal's tags), in one squeue.

        This is how a job is found again after a hub restart or a submission that timed out.
        alive_only=False also returns jobs that have ended but that Slurm still lists (a short
        job may be done before the answer is read).
        """
        argv = [self._bin + "squeue", "--noheader", "--states=all", f"--format={SQUEUE_FORMAT}"]
        if user:
            argv.append(f"--user={user}")
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        jobs = [job for job in parse_squeue(result.stdout).values() if job.comment]
        if alive_only:
            jobs = [job for job in jobs if job.described.alive]
        if tag is None:
            return [job for job in jobs if parse_tag(job.comment) is not None]
        return [job for job in jobs if job.comment == tag]

    async def job_detail(self, job_id: str) -> JobDetail | None:
        """What scontrol knows of one job (until Slurm forgets it, MinJobAge after it ends)."""
        details = await self.job_details(job_id)
        return details[0] if details else None

    async def job_details(self, job_id: str) -> list[JobDetail]:
        """Every record scontrol has for a job id: the job, or each task of an array."""
        argv = [self._bin + "scontrol", "show", "job", "--oneliner", job_id]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            if any(marker in result.stderr for marker in _GONE_MARKERS):
                return []
            _raise_for(argv, result)
        return parse_scontrol_jobs(result.stdout)

    async def accounting(self, job_id: str) -> list[JobDetail]:
        """What Slurm's accounting (sacct, slurmdbd) keeps of a job after the controller forgot
        it: the job, or each task of an array. SlurmError where there is no accounting."""
        argv = [self._bin + "sacct", "-X", "-n", "-P", f"--format={SACCT_FORMAT}", f"-j{job_id}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_sacct(result.stdout)

    async def associations(self) -> Associations:
        """Accounts' GPU limits and users' accounts (sacctmgr); SlurmError without accounting."""
        argv = [self._bin + "sacctmgr", "-n", "-P", "show", "assoc", f"format={ASSOC_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_associations(result.stdout)

    async def gpu_nodes(self) -> list[NodeGpus]:
        """Every node's GPUs, used and total (one sinfo)."""
        argv = [self._bin + "sinfo", "--Node", "--noheader", f"--Format={NODES_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_nodes(result.stdout)

    async def gpu_jobs(self) -> list[GpuJob]:
        """Every job that holds or waits for GPUs, of all users (one squeue)."""
        argv = [
            self._bin + "squeue",
            "--noheader",
            f"--states={','.join((*HOLDING, 'PENDING'))}",
            f"--format={JOBS_FORMAT}",
        ]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_jobs(result.stdout)

    async def partitions(self) -> dict[str, Partition]:
        """Every partition's time limit and node shapes (one sinfo)."""
        argv = [self._bin + "sinfo", "--noheader", f"--format={SINFO_FORMAT}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)
        return parse_sinfo(result.stdout)

    async def ping(self, *, timeout: float) -> None:
        """SlurmUnavailable unless the controller answers within `timeout` (scontrol ping: one
        RPC, milliseconds when it is up; over a broken network it would hang)."""
        argv = [self._bin + "scontrol", "ping"]
        result = await run_command(argv, timeout=min(timeout, self._timeout))
        if result.returncode != 0 or " is UP" not in result.stdout:
            # "Slurmctld(primary) at slurmctld is DOWN", then a banner of asterisks.
            said = next((line for line in result.stdout.splitlines() if " is " in line), "")
            said = said.strip() or _last_line(result.stderr) or "the controller is down"
            raise SlurmUnavailable(argv, result.returncode, said)

    async def cancel(self, job_id: str, *, user: str) -> None:
        argv = self._as_user(user, self._bin + "scancel", job_id)
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0 and not any(m in result.stderr for m in _GONE_MARKERS):
            _raise_for(argv, result)

    async def set_time_limit(self, job_id: str, seconds: int) -> None:
        """Give a job a new time limit (whole minutes), as this process's own Slurm user.

        Slurm lets only operators and admins raise a limit, so this is not run as the job's
        user: the caller has checked that the job is theirs and the limit within bounds.
        """
        argv = [self._bin + "scontrol", "update", f"JobId={job_id}", f"TimeLimit={seconds // 60}"]
        result = await run_command(argv, timeout=self._timeout)
        if result.returncode != 0:
            _raise_for(argv, result)

    async def run_as_user(
        self, user: str, argv: Sequence[str], *, input_text: str | None = None
    ) -> CommandResult:
        """A small helper command as the user (mkdir, tail): home dirs may be root-squashed."""
        return await run_command(
            self._as_user(user, *argv), input_text=input_text, timeout=self._timeout
        )
