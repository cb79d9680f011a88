"""A job's output, read and written as its user: the folder it is written to (made once a
minute at most), the last lines of its files for the job's page and API, and its text from a
byte offset on, for a follower that must not miss a line however fast the job writes."""

from __future__ import annotations

import codecs
import logging
import time
from dataclasses import dataclass

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_portal.models import JobRecord

log = logging.getLogger(__name__)

MADE_DIR_TTL = 60.0


class OutputFolders:
    """The folders jobs write their output to, made as their users: one `sudo install -d` per
    user, folder and minute, not one per job. Not for ever: a user who removes the folder gets
    it back a minute later at most, rather than jobs whose output Slurm cannot open. One per
    portal app (app.state.output_folders)."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str], float] = {}  # (user, folder): when

    async def make(self, slurm: SlurmClient, user: str, path: str) -> None:
        made = self._made.get((user, path))
        if made is not None and time.monotonic() - made < MADE_DIR_TTL:
            return
        # install -d also makes a folder that already exists private (0700): job output is
        # the user's alone, whatever an older version left.
        result = await slurm.run_as_user(user, ["install", "-d", "-m", "0700", path])
        if result.returncode != 0:
            raise OSError(f"could not create {path}: {result.stderr.strip()}")
        self._made[(user, path)] = time.monotonic()


def output_files(record: JobRecord) -> list[str]:
    """The job's output file; an array's, one per task Slurm has started (or more)."""
    if "%a" not in record.output:
        return [record.output]
    started = [t for t in record.tasks if t.isdigit() and record.tasks[t] != "PENDING"]
    return [record.output.replace("%a", task) for task in sorted(started, key=int)[:20]]


# The end of each output file read for its last lines: a line longer than this shows cut.
TAIL_BYTES = 16384


async def output_tail(slurm: SlurmClient, record: JobRecord, lines: int = 30) -> list[str]:
    """The last lines of the job's output, read as its user (an array's: of each task's file,
    under tail's own "==> file <==" headings). Its last TAIL_BYTES of each file only: a user's
    output of a terabyte with no newline costs what a small one does."""
    files = output_files(record)
    if not record.slurm_job_id or not files:
        return []
    try:
        result = await slurm.tail_as_user(record.user, files, count=TAIL_BYTES)
    except SlurmError as error:  # a timeout reading a slow home directory
        log.warning("Could not read the output of job %s: %s", record.slurm_job_id, error)
        return []
    # Non-zero also when one task's file is not there yet: what tail did read still counts.
    return last_lines(result.stdout, files, lines)


def last_lines(text: str, files: list[str], lines: int) -> list[str]:
    """tail -c's output cut to the last `lines` lines of each file's part, headings kept."""
    if len(files) == 1:
        return text.splitlines()[-lines:] if lines else []
    headings = {f"==> {name} <==" for name in files}
    parts: list[list[str]] = [[]]
    for line in text.splitlines():
        if line in headings:
            parts.append([line])
        else:
            parts[-1].append(line)
    kept: list[str] = []
    for part in parts:
        if not part:
            continue
        heading = part[:1] if part[0] in headings else []
        body = part[len(heading) :]
        while body and not body[-1]:  # tail's blank line before the next heading
            body.pop()
        kept += [""] if kept else []
        kept += heading + body[-lines:]
    return kept


# At most this much of a job's output per request: a follower asks again at once for the rest.
OUTPUT_PART_BYTES = 65536


class NoSuchOutput(LookupError):
    """The job has no such output file: a task the array job does not have."""


class TaskNeeded(ValueError):
    """An array job's output was asked for without saying whose task."""


@dataclass(frozen=True)
class OutputPart:
    text: str
    next_offset: int  # ask from here next
    more: bool  # the file already holds more past next_offset


def output_file(record: JobRecord, task: str | None) -> str:
    """The one file a follower reads: the job's, or one task's of an array."""
    if "%a" not in record.output:
        return record.output
    if task is None:
        raise TaskNeeded("This is an array job: say which task's output you want (task=N).")
    if task not in record.tasks or not task.isdigit():
        known = ", ".join(sorted((t for t in record.tasks if t.isdigit()), key=int)) or "none yet"
        raise NoSuchOutput(f"The job has no task {task!r} (its tasks: {known}).")
    return record.output.replace("%a", task)


async def output_from(
    slurm: SlurmClient,
    record: JobRecord,
    offset: int,
    task: str | None = None,
    size: int = OUTPUT_PART_BYTES,
) -> OutputPart:
    """The job's output from byte `offset` on, at most `size` bytes of it, read as its user.

    One byte more than asked is read, to say whether more is there. A character cut in two at
    the end is left for the next part: next_offset counts the bytes of whole characters only.
    """
    path = output_file(record, task)
    if not record.slurm_job_id:
        return OutputPart("", offset, False)
    try:
        result = await slurm.read_as_user(record.user, path, offset=offset, count=size + 1)
    except SlurmError as error:  # a timeout reading a slow home directory: ask again
        log.warning("Could not read the output of job %s: %s", record.slurm_job_id, error)
        return OutputPart("", offset, False)
    if result.returncode != 0:  # not written yet (a job that waits), or removed
        return OutputPart("", offset, False)
    raw = result.raw_stdout[:size]
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(raw, final=False)
    pending = len(decoder.getstate()[0])
    return OutputPart(text, offset + len(raw) - pending, len(result.raw_stdout) > size)
