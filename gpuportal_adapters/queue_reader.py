"""The one reader of job states: one squeue of every job, shared by whoever asks.

The hub (its servers' jobs, the tagged jobs a stop looks for) and the portal (every job record
it keeps) each used to run their own squeue over the same jobs. Both now ask a QueueReader for
a read no older than they can accept, and it answers from the last one:

- in one process, askers who come while a read is under way wait for that read;
- across processes, each read is written to a file both can read (`shared`, the hub's
  `PORTAL_QUEUE_FILE`), and a process takes the other's read when it is recent enough. Two
  processes may now and then read at the same moment; neither ever takes a read older than it
  asked for.

A job not in a read has left Slurm's queue: squeue lists every job Slurm still knows, ended
ones too (`--states=all`), and the caller (gpuportal_adapters.poller) asks for a read taken after
it first looked for a job, so a job submitted after a read is never taken for one that ended.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gpuportal_adapters.whole_file import replace_whole
from gpuportal_core.jobs import JobInfo

log = logging.getLogger(__name__)


class Queue(Protocol):
    """What the reader needs of a Slurm client (gpuportal_adapters.slurm.SlurmClient.queue)."""

    async def queue(self) -> list[JobInfo]: ...


@dataclass(frozen=True)
class QueueRead:
    """Every job Slurm listed, as of `as_of` (the wall-clock time squeue was started)."""

    as_of: float
    jobs: Mapping[str, JobInfo]


class QueueReader:
    def __init__(
        self,
        client: Queue,
        *,
        shared: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._shared = shared
        # Wall-clock time: the other process compares it with its own.
        self._clock = clock
        self._last: QueueRead | None = None
        self._lock = asyncio.Lock()
        self._running_since: float | None = None  # when the squeue under way was started
        self.queries = 0  # how many times this process ran squeue (the tests and benches read it)

    async def read(self, *, max_age: float, newer_than: float = 0.0) -> QueueRead:
        """A read started at most `max_age` s ago, or one under way when asked, and in either
        case not before `newer_than` (a wall-clock time). Raises what the client raises when
        Slurm cannot be asked (SlurmUnavailable, SlurmError): never an empty queue, which would
        read as every job gone."""
        floor = max(self._clock() - max_age, newer_than)
        if self._running_since is not None and self._running_since >= newer_than:
            floor = min(floor, self._running_since)  # the read under way will do
        if (fresh := self._taken_after(floor)) is not None:
            return fresh
        async with self._lock:  # one squeue at a time; those who waited take its read
            if (fresh := self._taken_after(floor)) is not None:
                return fresh
            if self._shared is not None:
                theirs = await asyncio.to_thread(load, self._shared)
                if theirs is not None and (self._last is None or theirs.as_of > self._last.as_of):
                    self._last = theirs
                if (fresh := self._taken_after(floor)) is not None:
                    return fresh
            return await self._run()

    def _taken_after(self, floor: float) -> QueueRead | None:
        """The last read, if it was started at or after `floor`."""
        last = self._last
        return last if last is not None and last.as_of >= floor else None

    async def _run(self) -> QueueRead:
        as_of = self._running_since = self._clock()
        self.queries += 1
        try:
            jobs = await self._client.queue()
        finally:
            self._running_since = None
        # Started after any read this process took or loaded (both under the lock): the newest.
        read = self._last = QueueRead(as_of, {job.job_id: job for job in jobs})
        if self._shared is not None:
            try:
                await asyncio.to_thread(save, self._shared, read)
            except OSError as error:
                # The other process reads for itself meanwhile: slower, never wrong.
                log.warning("Could not share the queue's read in %s: %s", self._shared, error)
        return read


def save(path: Path, read: QueueRead) -> None:
    """Written whole or not at all (a temporary file renamed over it), readable by this
    account only (job comments name users' sessions)."""
    text = json.dumps(
        {"as_of": read.as_of, "jobs": [dataclasses.asdict(job) for job in read.jobs.values()]}
    )
    replace_whole(path, text)


def load(path: Path) -> QueueRead | None:
    """The other process's last read; None if there is none or it cannot be read (then this
    process runs squeue itself)."""
    try:
        data = json.loads(path.read_text())
        jobs = [JobInfo(**job) for job in data["jobs"]]
        return QueueRead(float(data["as_of"]), {job.job_id: job for job in jobs})
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("Left out the shared queue read %s: %s", path, error)
        return None
