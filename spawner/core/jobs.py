"""Slurm job states and squeue/sbatch output, parsed into plain values."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

# One line per job; '|' cannot appear in any of these fields.
SQUEUE_FORMAT = "%i|%T|%r|%B|%S|%u"
SQUEUE_FIELDS = 6


class Phase(enum.Enum):
    """What a job state means for a notebook server."""

    QUEUED = "queued"  # not started yet (pending, configuring, requeued)
    RUNNING = "running"
    SUSPENDED = "suspended"  # still holds its allocation; the server comes back on resume
    ENDING = "ending"  # completing: the server is already gone
    ENDED = "ended"  # terminal, or no longer known to Slurm


_PHASES = {
    "PENDING": Phase.QUEUED,
    "CONFIGURING": Phase.QUEUED,
    "REQUEUED": Phase.QUEUED,
    "REQUEUE_HOLD": Phase.QUEUED,
    "REQUEUE_FED": Phase.QUEUED,
    "RESV_DEL_HOLD": Phase.QUEUED,
    "RUNNING": Phase.RUNNING,
    "RESIZING": Phase.RUNNING,
    "SIGNALING": Phase.RUNNING,
    "STAGE_OUT": Phase.ENDING,
    "SUSPENDED": Phase.SUSPENDED,
    "STOPPED": Phase.SUSPENDED,
    "COMPLETING": Phase.ENDING,
}

# Slurm's reason codes for a waiting job, in the words a data scientist needs.
PENDING_REASONS = {
    "None": "waiting for the scheduler to place it",
    "Resources": "waiting for GPUs to become free",
    "Priority": "other jobs with higher priority are ahead in the queue",
    "Dependency": "waiting for another job to finish",
    "BeginTime": "waiting for its requested start time",
    "JobHeldUser": "held by you (scontrol release it to start)",
    "JobHeldAdmin": "held by an administrator",
    "ReqNodeNotAvail": "the nodes it needs are unavailable (down, drained or reserved)",
    "PartitionDown": "the partition is down",
    "PartitionInactive": "the partition is inactive",
    "PartitionTimeLimit": "its time limit is over the partition's maximum",
    "PartitionNodeLimit": "it asks for more nodes than the partition allows",
    "NodeDown": "a node it needs is down",
    "Reservation": "waiting for its reservation to start",
    "QOSMaxGRESPerUser": "you are at your QOS limit of GPUs in use",
    "QOSMaxJobsPerUserLimit": "you are at your QOS limit of running jobs",
    "QOSGrpGRES": "your QOS group is at its GPU limit",
    "AssocGrpGRES": "your account is at its GPU limit",
    "AssocMaxJobsLimit": "your account is at its limit of running jobs",
    "launch failed requeued held": "the launch failed and the job was held",
}


def phase_of(state: str) -> Phase:
    """What a Slurm state means; states not listed are terminal (COMPLETED, FAILED, ...)."""
    return _PHASES.get(state, Phase.ENDED)


def describe_reason(reason: str) -> str:
    return PENDING_REASONS.get(reason, f"Slurm says: {reason}")


@dataclass(frozen=True)
class JobInfo:
    """One job as squeue reports it."""

    job_id: str
    state: str
    reason: str
    host: str
    start: str
    user: str

    @property
    def phase(self) -> Phase:
        return phase_of(self.state)

    def waiting_message(self) -> str:
        """Why a queued job waits, and when Slurm expects it to start if it knows."""
        why = describe_reason(self.reason)
        message = f"Job {self.job_id} is queued: {why}."
        if self.start and self.start not in ("N/A", "Unknown"):
            message += f" Expected start: {self.start.replace('T', ' ')}."
        return message


def start_progress(job_id: str, info: JobInfo | None) -> tuple[str, int]:
    """What the spawn-pending page says of a starting server's job, and how far along it is."""
    if not job_id:
        return "Submitting the job to Slurm...", 10
    if info is None or info.phase is Phase.QUEUED:
        return (info.waiting_message() if info else f"Job {job_id} submitted."), 30
    if info.phase is Phase.RUNNING:
        return f"Job {job_id} is running on {info.host}; JupyterLab is starting...", 70
    return f"Job {job_id} is {info.state.lower()}.", 90


class ParseError(ValueError):
    """Slurm printed something this module does not understand."""


_JOB_ID_RE = re.compile(r"\d+")


def parse_sbatch_parsable(output: str) -> str:
    """The job id from `sbatch --parsable` ("123" or "123;cluster")."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    if not lines:
        raise ParseError("sbatch printed no job id")
    job_id = lines[-1].split(";")[0].strip()
    if not _JOB_ID_RE.fullmatch(job_id):
        raise ParseError(f"sbatch printed {lines[-1]!r}, not a job id")
    return job_id


def parse_squeue(output: str) -> dict[str, JobInfo]:
    """Jobs from `squeue -h -o SQUEUE_FORMAT`, keyed by job id."""
    jobs: dict[str, JobInfo] = {}
    for line in output.splitlines():
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != SQUEUE_FIELDS:
            raise ParseError(f"unexpected squeue line {line!r}")
        job_id, state, reason, host, start, user = (part.strip() for part in parts)
        host = "" if host in ("n/a", "(null)", "None assigned") else host
        jobs[job_id] = JobInfo(job_id, state, reason, host, start, user)
    return jobs


@dataclass(frozen=True)
class JobDetail:
    """One job as `scontrol show job -o` tells it: enough for a job page."""

    job_id: str
    user: str
    state: str
    reason: str
    exit_code: int | None  # the batch script's, once the job ended
    signal: int | None
    nodes: str
    submit_time: str
    start_time: str
    end_time: str

    @property
    def phase(self) -> Phase:
        return phase_of(self.state)


def _time_or_blank(value: str) -> str:
    return "" if value in ("", "Unknown", "None", "N/A") else value


def parse_scontrol_job(text: str) -> JobDetail | None:
    """The job in `scontrol show job -o ID` output; None if it printed none."""
    line = next((line for line in text.splitlines() if line.startswith("JobId=")), "")
    if not line:
        return None
    # Key=Value pairs separated by spaces; the few values with spaces (Command=, Comment=) are
    # not needed, and the keys read here never contain them.
    fields: dict[str, str] = {}
    for token in line.split(" "):
        key, sep, value = token.partition("=")
        if sep and key not in fields:
            fields[key] = value
    exit_code: int | None = None
    signal: int | None = None
    code, _, sig = fields.get("ExitCode", "").partition(":")
    state = fields.get("JobState", "UNKNOWN")
    if code.isdigit() and phase_of(state) is Phase.ENDED:
        exit_code = int(code)
        signal = int(sig) if sig.isdigit() else None
    return JobDetail(
        job_id=fields["JobId"],
        user=fields.get("UserId", "").split("(", 1)[0],
        state=state,
        reason=fields.get("Reason", "None"),
        exit_code=exit_code,
        signal=signal,
        nodes=_time_or_blank(fields.get("NodeList", "")).replace("(null)", ""),
        submit_time=_time_or_blank(fields.get("SubmitTime", "")),
        start_time=_time_or_blank(fields.get("StartTime", "")),
        end_time=_time_or_blank(fields.get("EndTime", "")),
    )
