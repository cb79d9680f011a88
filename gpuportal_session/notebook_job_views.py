"""How the portal's notebook job records and definitions show in Jupyter Scheduler's list and
detail (gpuportal_session.notebook_scheduler asks the portal for them): ids, statuses, the
words for a waiting or failed job, the run's output files beside the notebook."""

from __future__ import annotations

import glob
import os
from datetime import datetime
from typing import Any

from jupyter_scheduler.exceptions import SchedulerError
from jupyter_scheduler.models import DescribeJob, DescribeJobDefinition, JobFile, Status

from gpuportal_core.states import Phase, job_state

# Jupyter Scheduler's ids have a dash (its routes' pattern); the portal's are numbers.
ID_PREFIX = "portal-"
FORMATS = {"ipynb": "Notebook", "html": "HTML"}


def job_id(record_id: int) -> str:
    return f"{ID_PREFIX}{record_id}"


def definition_id(schedule_id: int) -> str:
    return f"{ID_PREFIX}{schedule_id}"


def record_id(scheduler_id: str) -> int:
    number = scheduler_id.removeprefix(ID_PREFIX)
    if not number.isdigit():
        raise SchedulerError(f"{scheduler_id} is not a notebook job of the portal")
    return int(number)


def compute_type(profile: dict[str, Any]) -> str:
    """What the dialog's Compute type list shows: the profile and what it gives."""
    return f"{profile['slug']} · {profile['summary']}"


def profile_slug(compute: str | None) -> str:
    return (compute or "").split(" ", 1)[0]


def status_of(state: str) -> Status:
    """Jupyter Scheduler's status for a Slurm state."""
    meaning = job_state(state)
    if state == "COMPLETED":
        return Status.COMPLETED
    if state == "CANCELLED":
        return Status.STOPPED
    if meaning.phase in (Phase.QUEUED, Phase.REQUEUED):
        return Status.QUEUED
    if meaning.phase in (Phase.RUNNING, Phase.SUSPENDED):
        return Status.IN_PROGRESS
    if meaning.phase is Phase.ENDING:
        return Status.STOPPING if state == "COMPLETING" else Status.IN_PROGRESS
    return Status.FAILED


def _ms(iso: str | None) -> int | None:
    return int(datetime.fromisoformat(iso).timestamp() * 1000) if iso else None


def message_of(record: dict[str, Any]) -> str:
    """Where the job stands, in the words of the portal's Jobs page; a waiting one's in the
    words of the hub's waiting page (why, its place in line, the expected start)."""
    state = str(record.get("state") or "")
    waiting = job_state(state).phase is Phase.QUEUED
    if waiting and record.get("queue"):
        return str(record["queue"])
    said = f"Slurm job {record.get('slurm_job_id') or '(not yet)'} {job_state(state).meaning}"
    if waiting and (record.get("waiting_because") or record.get("reason")):
        said += f" ({record.get('waiting_because') or record['reason']})"
    if waiting and record.get("expected_start"):
        said += f"; Slurm expects it to start at {record['expected_start'][:16].replace('T', ' ')}"
    if record.get("exit_code") not in (None, 0):
        said += f"; exit code {record['exit_code']}"
    return said


def outputs_folder(notebook: str, slurm_job_id: str) -> str | None:
    """The run's folder beside the notebook (gpuportal_session.notebook_run names it)."""
    if not slurm_job_id:
        return None
    stem = os.path.splitext(os.path.basename(notebook))[0]
    # Escaped: a notebook's name may hold [ or *, which glob reads as patterns.
    runs = glob.escape(os.path.join(os.path.dirname(notebook), f"{stem}-runs"))
    found = glob.glob(os.path.join(runs, f"*_job{glob.escape(slurm_job_id)}"))
    return found[0] if found else None


def request_fields(request: dict[str, Any]) -> dict[str, Any]:
    """What a job and a definition show alike of the portal's job request: the notebook's
    name, the environment, the parameters and the GPUs."""
    environment = request.get("environment") or request.get("container") or {}
    parameters = dict(a.split("=", 1) for a in request.get("args") or [] if "=" in a)
    gpus = f"{request.get('gpus_per_node')} GPU {request.get('gpu_type') or ''}".strip()
    return {
        "input_filename": os.path.basename(str(request.get("script") or "")),
        "runtime_environment_name": str(
            environment.get("prefix") or environment.get("image") or "Session default"
        ),
        "runtime_environment_parameters": None,
        "output_formats": list(FORMATS),
        "parameters": parameters or None,
        "compute_type": gpus,
    }


def describe(record: dict[str, Any], root_dir: str) -> DescribeJob:
    """A portal job record as Jupyter Scheduler's list and detail show it."""
    request = record.get("request") or {}
    notebook = str(request.get("script") or "")
    name = os.path.basename(notebook)
    folder = outputs_folder(notebook, str(record.get("slurm_job_id") or ""))
    files = []
    for fmt, label in FORMATS.items():
        path = os.path.join(folder, os.path.splitext(name)[0] + f".{fmt}") if folder else ""
        exists = bool(path) and os.path.isfile(path)
        files.append(
            JobFile(
                display_name=label,
                file_format=fmt,
                file_path=os.path.relpath(path, root_dir) if exists else None,
            )
        )
    submitted = _ms(record.get("submitted_at")) or 0
    return DescribeJob(
        job_id=job_id(int(record["id"])),
        job_definition_id=definition_id(record["schedule_id"])
        if record.get("schedule_id")
        else None,
        name=str(record.get("name") or ""),
        **request_fields(request),
        url=f"/jobs/{job_id(int(record['id']))}",
        create_time=submitted,
        update_time=submitted,
        start_time=_ms(record.get("started_at")),
        end_time=_ms(record.get("ended_at")),
        status=status_of(str(record.get("state") or "")),
        # The dialog shows it as an alert: said where there is something to say, a job waiting
        # (why, and when it should start) or one that did not complete.
        status_message=message_of(record)
        if status_of(str(record.get("state") or ""))
        in (Status.QUEUED, Status.FAILED, Status.STOPPED)
        else None,
        job_files=files,
        # Written by the job in place, beside the notebook: nothing to download.
        downloaded=True,
    )


def described_definition(definition: dict[str, Any]) -> DescribeJobDefinition:
    """A portal definition as Jupyter Scheduler's definitions list and detail show it."""
    shown = request_fields(definition.get("job") or {})
    created = _ms(definition.get("created_at")) or 0
    return DescribeJobDefinition(
        job_definition_id=definition_id(int(definition["id"])),
        name=str(definition.get("name") or ""),
        **shown,
        # Shown as the output directory: each run's folder beside the notebook.
        output_filename_template=f"{os.path.splitext(shown['input_filename'])[0]}-runs/DATE_jobID/",
        schedule=definition.get("schedule"),
        timezone=definition.get("timezone"),
        create_time=created,
        update_time=_ms(definition.get("updated_at")) or created,
        active=bool(definition.get("active")),
    )
