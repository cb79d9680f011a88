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
        return _PHASES.get(self.state, Phase.ENDED)

    def waiting_message(self) -> str:
        """Why a queued job waits, and when Slurm expects it to start if it knows."""
        why = PENDING_REASONS.get(self.reason, f"Slurm says: {self.reason}")
        message = f"Job {self.job_id} is queued: {why}."
        if self.start and self.start not in ("N/A", "Unknown"):
            message += f" Expected start: {self.start.replace('T', ' ')}."
        return message


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
