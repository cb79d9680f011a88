"""Running one Slurm command: its environment, its turn, its timeout, its process group; and
the two errors every caller tells apart (Slurm said no; Slurm could not be asked)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import signal
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

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
    # stdout as the command wrote it, for a reader that counts bytes (a job's output by offset).
    raw_stdout: bytes = b""
    # The command printed more than the caller keeps: stdout is its first max_output bytes, and
    # the command was killed there (only a caller that passed keep_truncated gets this).
    truncated: bool = False


# What a command may print before it is killed: squeue of 50,000 jobs prints about 10 MB. A
# command that prints more is a failure (SlurmUnavailable), never half an answer read as whole
# (half the queue would be jobs gone). Readers of a user's files keep less (run_as_user).
MAX_STDOUT = 64 * 1024 * 1024
# Slurm's own words, shown to a user or logged: the first 64 KiB, the rest read and dropped.
MAX_STDERR = 64 * 1024
_CHUNK = 64 * 1024


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
    max_output: int = MAX_STDOUT,
    keep_truncated: bool = False,
) -> CommandResult:
    """Run argv, feed it input_text, and kill it (its whole process group) if it outlives timeout
    or prints more than max_output bytes (then SlurmUnavailable, or with keep_truncated the
    first max_output bytes, marked truncated).

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
            out, err, over = await asyncio.wait_for(_exchange(proc, data, max_output), timeout)
        except TimeoutError:
            await _kill_group(proc)
            _observed(argv, started, "timeout")
            raise SlurmUnavailable(argv, -9, f"no answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            await _kill_group(proc)
            raise
        returncode = proc.returncode if proc.returncode is not None else -1
        if over and not keep_truncated:
            _observed(argv, started, "error")
            raise SlurmUnavailable(argv, -9, f"printed over {max_output} bytes")
        _observed(argv, started, "ok" if returncode == 0 else "error")
        return CommandResult(
            returncode, out.decode(errors="replace"), err.decode(errors="replace"), out, over
        )


async def _exchange(
    proc: asyncio.subprocess.Process, data: bytes | None, max_output: int
) -> tuple[bytes, bytes, bool]:
    """communicate(), with what is kept bounded: stdout up to max_output (the process group is
    killed there), stderr's first MAX_STDERR bytes; whether stdout went over."""

    async def feed() -> None:
        if data is None or proc.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(data)
            await proc.stdin.drain()
        proc.stdin.close()

    async def read(stream: asyncio.StreamReader | None, keep: int, kill: bool) -> bytes:
        kept, killed = bytearray(), False
        # Read to the end even past `keep` (what comes then is dropped): asyncio's wait() ends
        # only once every pipe is closed, and a pipe left unread is never seen to close (make
        # test's load showed it: a killed cat held its caller until the timeout).
        while stream is not None and (chunk := await stream.read(_CHUNK)):
            kept += chunk[: keep + 1 - len(kept)]  # one byte past `keep` says it went over
            if len(kept) > keep and kill and not killed:
                killed = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        return bytes(kept)

    _, out, err = await asyncio.gather(
        feed(), read(proc.stdout, max_output, kill=True), read(proc.stderr, MAX_STDERR, False)
    )
    await proc.wait()
    return out[:max_output], err[:MAX_STDERR], len(out) > max_output


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    # TERM first, which sudo relays to the command it runs; then KILL whatever is left.
    for sig, grace in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
            return
