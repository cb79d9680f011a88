"""Slurm job states and squeue/sbatch output, parsed into plain values."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuportal_core.slurm_time import time_limit_hms, time_or_blank
from gpuportal_core.states import JobState, Phase, job_state, phase_of

# One line per job. '|' appears in none of these fields but the comment, which comes last and
# is split off whole (users may put anything in their own jobs' comments).
SQUEUE_FORMAT = "%i|%T|%r|%B|%S|%u|%l|%N|%k"
SQUEUE_FIELDS = 9


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
    # A time limit that would run into a maintenance reservation (gpuportal_core.reservations).
    "ReqNodeNotAvail, Reserved for maintenance": (
        "its time limit runs into a maintenance window, so it starts when the maintenance is "
        "over; a shorter limit (the spawn page offers one) starts before it"
    ),
    "PartitionDown": "the partition is down",
    "PartitionInactive": "the partition is inactive",
    "PartitionTimeLimit": "its time limit is over the partition's maximum",
    "PartitionNodeLimit": "it asks for more nodes than the partition allows",
    "NodeDown": "a node it needs is down",
    "Reservation": "waiting for its reservation to start",
    "QOSMaxGRESPerUser": "you are at your QOS limit of GPUs in use",
    "QOSMaxJobsPerUserLimit": "you are at your QOS limit of running jobs",
    "QOSGrpGRES": "your group's QOS is at its GPU limit: it starts as your group's jobs end",
    "AssocGrpGRES": "your group is at its GPU limit: it starts as your group's other jobs end",
    "AssocMaxJobsLimit": "your account is at its limit of running jobs",
    "launch failed requeued held": "the launch failed and the job was held",
}


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
    time_limit: str = ""  # as squeue prints it: "8:00:00", "1-00:00:00"
    nodes: str = ""  # every node of the job ("gpu[01-02]"); host is the batch host
    comment: str = ""  # the tag the portal gave the job (see gpuportal_core.tags)

    @property
    def phase(self) -> Phase:
        return phase_of(self.state)

    @property
    def described(self) -> JobState:
        return job_state(self.state)

    def waiting_message(self) -> str:
        """Why a queued job waits, and when Slurm expects it to start if it knows."""
        why = describe_reason(self.reason)
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
        parts = line.split("|", SQUEUE_FIELDS - 1)
        if len(parts) != SQUEUE_FIELDS:
            raise ParseError(f"unexpected squeue line {line!r}")
        job_id, state, reason, host, start, user, limit, nodes = (p.strip() for p in parts[:-1])
        host = "" if host in ("n/a", "(null)", "None assigned") else host
        nodes = "" if nodes in ("n/a", "(null)", "None assigned") else nodes
        comment = parts[-1].strip()
        comment = "" if comment == "(null)" else comment
        jobs[job_id] = JobInfo(job_id, state, reason, host, start, user, limit, nodes, comment)
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
    start_time: str  # for a waiting job: when Slurm expects to start it, if it knows
    end_time: str
    array_task: str = ""  # in an array: the task's index, or the range still waiting ("2-3")
    time_limit: str = ""  # as Slurm prints it ("8:00:00", "1-00:00:00"); moves with an extend

    @property
    def phase(self) -> Phase:
        return phase_of(self.state)


def parse_scontrol_job(text: str) -> JobDetail | None:
    """The job in `scontrol show job -o ID` output; None if it printed none."""
    details = parse_scontrol_jobs(text)
    return details[0] if details else None


def parse_scontrol_jobs(text: str) -> list[JobDetail]:
    """Every job record in `scontrol show job -o ID` output: one, or an array's tasks."""
    return [_detail(line) for line in text.splitlines() if line.startswith("JobId=")]


def _detail(line: str) -> JobDetail:
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
        nodes=time_or_blank(fields.get("NodeList", "")).replace("(null)", ""),
        submit_time=time_or_blank(fields.get("SubmitTime", "")),
        start_time=time_or_blank(fields.get("StartTime", "")),
        end_time=time_or_blank(fields.get("EndTime", "")),
        array_task=fields.get("ArrayTaskId", "").replace("(null)", ""),
        time_limit=time_limit_hms(fields.get("TimeLimit", "")),
    )


# What the portal asks sacct of a job Slurm's controller has forgotten (slurmdbd keeps it).
SACCT_FORMAT = "JobID,User,State,ExitCode,Submit,Start,End,NodeList,Reason,Timelimit"


def parse_sacct(text: str) -> list[JobDetail]:
    """`sacct -X -n -P -o SACCT_FORMAT` lines: the job, or each task of an array ("12_3")."""
    details = []
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 9:
            continue
        job_id, user, state, exit_code, submit, start, end, nodes, reason = parts[:9]
        time_limit = parts[9] if len(parts) > 9 else ""
        base, _, task = job_id.partition("_")
        state = state.split(" ", 1)[0]  # "CANCELLED by 10001"
        code, _, sig = exit_code.partition(":")
        ended = phase_of(state) is Phase.ENDED
        details.append(
            JobDetail(
                job_id=base,
                user=user,
                state=state,
                reason=reason,
                exit_code=int(code) if ended and code.isdigit() else None,
                signal=int(sig) if ended and sig.isdigit() else None,
                nodes="" if nodes == "None assigned" else nodes,
                submit_time=time_or_blank(submit),
                start_time=time_or_blank(start),
                end_time=time_or_blank(end),
                array_task=task.strip("[]"),
                time_limit=time_limit_hms(time_limit),
            )
        )
    return details


# Which state an array shows when its tasks differ: any task still at work wins, then the
# worst way a task ended; COMPLETED only when every task did.
_ARRAY_PRECEDENCE = ("RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED", "PENDING")


def array_summary(tasks: dict[str, str]) -> str:
    """One state for a whole array from its tasks' states ({"0": "COMPLETED", "1": ...})."""
    states = set(tasks.values())
    for state in _ARRAY_PRECEDENCE:
        if state in states:
            return state
    ended_badly = sorted(s for s in states if s != "COMPLETED")
    return ended_badly[0] if ended_badly else ("COMPLETED" if states else "UNKNOWN")
