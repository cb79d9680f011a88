"""Where a notebook job put its executed notebook and HTML, for the Jobs page, its API and
`gpuportal jobs show`.

The job's runner (gpuportal_session.notebook_run) names its folder in its first line of output:
`[notebook job] running NOTEBOOK with kernel K; outputs in FOLDER`. That line is read as the
job's user (a job's output is theirs), and believed only for the folder the runner makes:
beside the notebook, `NAME-runs/DATE_jobID/` with this job's ID. Once the job has ended, the
portal looks once and keeps what it found on the record (`outputs`; `{}` when the run made no
folder: its notebook could not be run at all); while it runs, the job's page looks each time.
"""

from __future__ import annotations

import logging
import posixpath
import pwd
import re
from datetime import timedelta
from functools import partial
from typing import Any

import anyio.to_thread
from sqlalchemy import select

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_portal import job_output
from gpuportal_portal.db import Database
from gpuportal_portal.job_service import settled
from gpuportal_portal.models import JobRecord, aware_utc, utcnow

log = logging.getLogger(__name__)

NOTEBOOK_LAUNCHER = "notebook"
# The runner's words (gpuportal_session.notebook_run.run); its PREFIX starts the line.
_RUNNER_SAYS = re.compile(
    r"^\[notebook job\] running .+ with kernel \S+; outputs in (/\S.*)$", re.MULTILINE
)
# The folder's own name: the run's start and its job, as notebook_run.runs_folder makes it.
_RUN_FOLDER = r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_job"
# Looked for at most this many ended jobs per look.
BATCH = 10
GIVE_UP_AFTER = timedelta(hours=1)


def folder_in(text: str, notebook: str, slurm_job_id: str) -> str | None:
    """The run's folder as the runner said it, if it is where the runner makes this job's."""
    stem = posixpath.splitext(posixpath.basename(notebook))[0]
    runs = posixpath.join(posixpath.dirname(notebook), f"{stem}-runs")
    for said in _RUNNER_SAYS.finditer(text):
        folder = said.group(1).rstrip()
        name = posixpath.basename(folder)
        if posixpath.dirname(folder) == runs and re.fullmatch(
            _RUN_FOLDER + re.escape(slurm_job_id), name
        ):
            return folder
    return None


def outputs_of(folder: str, notebook: str, *, home: str, has_html: bool) -> dict[str, Any]:
    """What the record keeps: the folder, the executed notebook and its HTML ("" when the run
    wrote none: it was stopped before its end), and the notebook's path in the user's lab
    (relative to their home, where sessions start; "" when it is outside it)."""
    name = posixpath.basename(notebook)
    executed = posixpath.join(folder, name)
    inside = executed.startswith(home.rstrip("/") + "/")
    return {
        "folder": folder,
        "notebook": executed,
        "html": posixpath.splitext(executed)[0] + ".html" if has_html else "",
        "lab_path": posixpath.relpath(executed, home) if inside else "",
    }


class NotLookedAt(Exception):
    """The job's output or passwd could not be read just now: look again later."""


async def find(slurm: SlurmClient, record: JobRecord) -> dict[str, Any] | None:
    """The job's outputs as its output says now; None when it names no folder (yet).
    NotLookedAt when nothing could be read (a slow home directory), for a later look."""
    notebook = str(record.request.get("script") or "")
    if record.launcher != NOTEBOOK_LAUNCHER or not record.slurm_job_id or not notebook:
        return None
    start = await job_output.output_from(slurm, record, 0)
    if not start.text and record.started_at and not _over(record):
        # It ran, so it wrote: an empty read is a home that did not answer (or a removed file).
        raise NotLookedAt(f"no output of job {record.slurm_job_id} to read yet")
    folder = folder_in(start.text, notebook, record.slurm_job_id)
    if folder is None:
        return None
    outputs = outputs_of(folder, notebook, home="/", has_html=True)
    try:
        # In a thread: on a site, passwd is sssd or LDAP, which may take a while to answer.
        home = (await anyio.to_thread.run_sync(pwd.getpwnam, record.user)).pw_dir
        looked = await slurm.run_as_user(record.user, ["test", "-f", outputs["html"]])
    except (KeyError, SlurmError) as error:
        raise NotLookedAt(f"job {record.slurm_job_id}'s outputs: {error}") from None
    return outputs_of(folder, notebook, home=home, has_html=looked.returncode == 0)


def _over(record: JobRecord) -> bool:
    """Ended long enough ago that an output still unread will stay so (removed by its user)."""
    return settled(record.state) and utcnow() - aware_utc(record.updated_at) > GIVE_UP_AFTER


def due_records(database: Database, *, limit: int = BATCH) -> list[JobRecord]:
    """Ended notebook jobs whose outputs were not looked for yet (a worker thread)."""
    with database.sessions() as session:
        query = (
            select(JobRecord)
            .where(
                JobRecord.launcher == NOTEBOOK_LAUNCHER,
                JobRecord.outputs.is_(None),
                JobRecord.slurm_job_id != "",
            )
            .order_by(JobRecord.updated_at.desc())
            .limit(200)
        )
        due = [record for record in session.scalars(query) if settled(record.state)][:limit]
        session.expunge_all()
    return due


def keep(database: Database, record_id: int, outputs: dict[str, Any]) -> None:
    """Store what was found, unless the record went or has its outputs already."""
    with database.sessions() as session:
        stored = session.get(JobRecord, record_id)
        if stored is not None and stored.outputs is None:
            stored.outputs = outputs
            session.commit()


async def collect(database: Database, slurm: SlurmClient, *, limit: int = BATCH) -> int:
    """Look once for the outputs of up to `limit` ended notebook jobs; how many had some."""
    found = 0
    for record in await anyio.to_thread.run_sync(partial(due_records, database, limit=limit)):
        try:
            outputs = await find(slurm, record)
        except NotLookedAt as error:
            log.info("Not now: %s", error)
            continue
        found += outputs is not None
        await anyio.to_thread.run_sync(keep, database, record.id, outputs or {})
    return found


# The report's HTML is the user's notebook: on the portal's origin it runs nothing (sandbox, no
# script) and loads nothing but its own inline styles and images.
REPORT_HEADERS = {
    "Content-Security-Policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'; "
    "img-src data:; font-src data:",
    "Cache-Control": "private, no-store",
}
# A report larger than this is opened in JupyterLab instead (it is read into memory here).
REPORT_MAX_BYTES = 64 * 1024 * 1024


class ReportUnreadable(Exception):
    """The HTML is gone, or too large to show here: the message says what to do."""


async def read_report(slurm: SlurmClient, user: str, path: str) -> str:
    """The HTML file, read as its user (dd, as a job's output is)."""
    try:
        count = REPORT_MAX_BYTES + 1
        result = await slurm.read_as_user(user, path, count=count, through_links=False)
    except SlurmError as error:  # a timeout reading a slow home directory
        raise ReportUnreadable(f"{path} could not be read just now ({error}); try again") from None
    if result.returncode != 0:
        raise ReportUnreadable(f"{path} is not there any more (moved or removed)")
    if len(result.raw_stdout) > REPORT_MAX_BYTES:
        raise ReportUnreadable(
            f"{path} is over {REPORT_MAX_BYTES // 2**20} MB: open it, or the executed notebook "
            "beside it, in JupyterLab"
        )
    return result.raw_stdout.decode("utf-8", errors="replace")
