"""A job's output, read and written as its user: the folder it is written to (made once a
minute at most), and the last lines of its files for the job's page and API."""

from __future__ import annotations

import logging
import time

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_portal.models import JobRecord

log = logging.getLogger(__name__)

# Output directories made in this process, and when: one `sudo install -d` per user and minute,
# not one per job. Not for ever: a user who removes the folder gets it back a minute later at
# most, rather than jobs whose output Slurm cannot open.
_made_dirs: dict[tuple[str, str], float] = {}
MADE_DIR_TTL = 60.0


async def make_output_dir(slurm: SlurmClient, user: str, path: str) -> None:
    made = _made_dirs.get((user, path))
    if made is not None and time.monotonic() - made < MADE_DIR_TTL:
        return
    # install -d also makes a folder that already exists private (0700): job output is the
    # user's alone, whatever an older version left.
    result = await slurm.run_as_user(user, ["install", "-d", "-m", "0700", path])
    if result.returncode != 0:
        raise OSError(f"could not create {path}: {result.stderr.strip()}")
    _made_dirs[(user, path)] = time.monotonic()


def output_files(record: JobRecord) -> list[str]:
    """The job's output file; an array's, one per task Slurm has started (or more)."""
    if "%a" not in record.output:
        return [record.output]
    started = [t for t in record.tasks if t.isdigit() and record.tasks[t] != "PENDING"]
    return [record.output.replace("%a", task) for task in sorted(started, key=int)[:20]]


async def output_tail(slurm: SlurmClient, record: JobRecord, lines: int = 30) -> list[str]:
    """The last lines of the job's output, read as its user (an array's: of each task's file,
    under tail's own "==> file <==" headings)."""
    files = output_files(record)
    if not record.slurm_job_id or not files:
        return []
    try:
        argv = ["tail", "-n", str(lines), *files]
        result = await slurm.run_as_user(record.user, argv)
    except SlurmError as error:  # a timeout reading a slow home directory
        log.warning("Could not read the output of job %s: %s", record.slurm_job_id, error)
        return []
    # Non-zero also when one task's file is not there yet: what tail did read still counts.
    return result.stdout.splitlines()
