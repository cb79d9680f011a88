"""The life of one notebook session, as a pure state machine.

`step(stage, event)` says, from what Slurm reports and what the hub asks, the session's next
stage, what the spawner must do, and what the user is told. The spawner (spawner.slurm_spawner)
only carries the step out: it asks Slurm, feeds the answer in here, and acts. Every rule about
job states lives here and in core.states, and the unit tests read them as tables.

Stages:  SUBMITTING -> QUEUED -> STARTING -> READY, with SUSPENDED and REQUEUED on the side and
ENDED at the end. A session that has been READY is kept through a suspension or a requeue (its
job comes back by itself); one that ends is told why ("reached its 8 h time limit").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from core.jobs import JobInfo
from core.partitions import parse_slurm_time
from core.runtime import describe_runtime
from core.states import Phase


class Stage(enum.Enum):
    SUBMITTING = "submitting"  # no job id yet
    QUEUED = "queued"  # the job waits for its allocation
    STARTING = "starting"  # the job runs; JupyterLab is starting
    READY = "ready"  # JupyterLab answered: the hub routes to it
    SUSPENDED = "suspended"  # a ready session's job was suspended
    REQUEUED = "requeued"  # a ready session's job went back to the queue
    ENDED = "ended"


# Stages in which the hub already routes to the session (start() has returned).
_SERVING = {Stage.READY, Stage.SUSPENDED, Stage.REQUEUED}


class Do(enum.Enum):
    """What the spawner does next."""

    WAIT = "wait"  # starting: wait for the port or the next status check
    CONNECT = "connect"  # starting: knock on JupyterLab's port
    RETURN = "return"  # starting: JupyterLab answers, start() returns
    FAIL = "fail"  # starting: the spawn fails with the message
    KEEP = "keep"  # serving: the server stays (poll answers None)
    END = "end"  # serving: the server is gone (poll answers 1)
    CANCEL = "cancel"  # scancel the job, then the server is gone
    DETACH = "detach"  # hub start-up: let the hub drop the server, keep the job for the resume


# Event kinds.
class Event(enum.Enum):
    SLURM = "slurm"  # Slurm answered; `info` is the job (None: Slurm no longer lists it)
    SLURM_SILENT = "slurm_silent"  # Slurm could not be asked (timeout, controller down)
    LAB_ANSWERED = "lab_answered"  # JupyterLab accepted a connection on its port
    LAB_UNREACHABLE = "lab_unreachable"  # a served JupyterLab did not (`info`: its job)
    STOP = "stop"  # a user or admin stops the server, in any stage


@dataclass(frozen=True)
class Seen:
    """One event, with what came with it."""

    kind: Event
    info: JobInfo | None = None
    port_known: bool = False  # the job has reported JupyterLab's port


@dataclass(frozen=True)
class Step:
    stage: Stage
    do: Do
    message: str  # for the user: the spawn-pending page, the spawn error, the home page
    progress: int = 0  # the spawn-pending page's bar, while starting


def step(stage: Stage, seen: Seen, *, job_id: str, hub_check: bool = False) -> Step:
    """The next stage of a session in `stage` on the event `seen`.

    hub_check: the hub is starting up and checks a server it had before it stopped.
    """
    if seen.kind is Event.STOP:
        # Stop means stop, in every stage: a queued job is cancelled too, never kept.
        return Step(Stage.ENDED, Do.CANCEL, f"Job {job_id} is being cancelled.")
    if hub_check and stage not in _SERVING:
        return _left_starting(stage, seen, job_id)
    if stage in _SERVING:
        return _serving(stage, seen, job_id)
    return _starting(stage, seen, job_id)


def poll_answer(result: Step) -> int | None:
    """What the hub's poll() answers after a step: None while the server lives, else 1."""
    alive = {Do.WAIT, Do.CONNECT, Do.RETURN, Do.KEEP}
    return None if result.do in alive else 1


def _starting(stage: Stage, seen: Seen, job_id: str) -> Step:
    if not job_id:
        return Step(Stage.SUBMITTING, Do.WAIT, "Submitting the job to Slurm...", 10)
    if seen.kind is Event.SLURM_SILENT:
        progress = 70 if stage is Stage.STARTING else 30
        return Step(
            stage, Do.WAIT, f"Slurm is not answering; still waiting for job {job_id}.", progress
        )
    if seen.kind is Event.LAB_ANSWERED:
        return Step(Stage.READY, Do.RETURN, f"JupyterLab is up (job {job_id}).", 100)
    info = seen.info
    if info is None:
        return Step(Stage.ENDED, Do.FAIL, f"The JupyterLab job {job_id} ended while starting.")
    described = info.described
    phase = described.phase
    if phase is Phase.QUEUED:
        return Step(Stage.QUEUED, Do.WAIT, info.waiting_message(), 30)
    if phase is Phase.REQUEUED:
        message = f"Job {job_id} {described.meaning}; waiting for it to start."
        return Step(Stage.QUEUED, Do.WAIT, message, 30)
    if phase is Phase.SUSPENDED:
        message = f"Job {job_id} {described.meaning}; it goes on when it is resumed."
        return Step(Stage.STARTING, Do.WAIT, message, 50)
    if phase is Phase.RUNNING:
        message = f"Job {job_id} is running on {info.host}; JupyterLab is starting..."
        return Step(Stage.STARTING, Do.CONNECT if seen.port_known else Do.WAIT, message, 70)
    if phase is Phase.ENDING:
        # COMPLETING hides how the job ended (squeue shows the flag, not the state under it):
        # wait the few seconds until Slurm says, so the message can tell the user why.
        return Step(stage, Do.WAIT, f"Job {job_id} is ending; waiting for Slurm to say how.", 70)
    # ENDED before JupyterLab ever answered.
    message = f"The JupyterLab job {job_id} {_ended(info)} while starting ({info.state})."
    return Step(Stage.ENDED, Do.FAIL, message)


def _serving(stage: Stage, seen: Seen, job_id: str) -> Step:
    if seen.kind is Event.LAB_UNREACHABLE:
        # Slurm says the job runs, but the hub cannot connect to it (a network fault between
        # the login host and the node): keep it, and say so; the next answer clears it.
        host = seen.info.host if seen.info is not None and seen.info.host else "its node"
        message = (
            f"The hub cannot reach {host}, where your session (job {job_id}) runs. Slurm says "
            f"the job still runs, so the session is kept: it opens again once {host} is back "
            "on the network."
        )
        return Step(stage, Do.KEEP, message)
    if seen.kind is Event.LAB_ANSWERED:
        return Step(Stage.READY, Do.KEEP, "")
    if seen.kind is not Event.SLURM:
        # Not knowing is not "gone": keep the server, ask again next poll.
        return Step(stage, Do.KEEP, "")
    info = seen.info
    if info is None:
        return Step(Stage.ENDED, Do.END, f"Your session (job {job_id}) has ended.")
    described = info.described
    phase = described.phase
    if phase is Phase.RUNNING:
        return Step(Stage.READY, Do.KEEP, "")
    if phase is Phase.ENDING:
        # Ask again next poll: the state under COMPLETING (TIMEOUT, OUT_OF_MEMORY...) is why.
        return Step(stage, Do.KEEP, "")
    if phase is Phase.SUSPENDED:
        message = (
            f"Your session (job {job_id}) {described.meaning}. It goes on where it was "
            "when it is resumed."
        )
        return Step(Stage.SUSPENDED, Do.KEEP, message)
    if phase in (Phase.QUEUED, Phase.REQUEUED):
        message = (
            f"Your session (job {job_id}) was put back in the queue by Slurm. JupyterLab starts "
            "again when it runs; your files are kept, running kernels are not."
        )
        return Step(Stage.REQUEUED, Do.KEEP, message)
    message = f"Your session (job {job_id}) {_ended(info)}."
    # A job Slurm may requeue is cancelled, so that no copy runs on with nobody attached.
    return Step(Stage.ENDED, Do.CANCEL if described.may_requeue else Do.END, message)


def _left_starting(stage: Stage, seen: Seen, job_id: str) -> Step:
    """The hub stopped while this server was starting.

    The hub cannot wait for a spawn it did not start, so it drops the server; a job that is
    still alive (or that Slurm cannot tell of) is kept for the resume, which starts the server
    again on the same job.
    """
    ended = seen.kind is Event.SLURM and (seen.info is None or not seen.info.described.alive)
    if ended:
        message = f"The JupyterLab job {job_id} ended while the hub was away."
        return Step(Stage.ENDED, Do.END, message)
    return Step(stage, Do.DETACH, f"Job {job_id} is kept for the hub to pick up again.")


def _ended(info: JobInfo) -> str:
    """How a job ended, in words: "reached its 8 h time limit", "ran out of memory ..."."""
    described = info.described
    try:
        limit = parse_slurm_time(info.time_limit) if info.time_limit else None
    except ValueError:
        limit = None
    if info.state == "TIMEOUT" and limit:
        return f"reached its {describe_runtime(limit)} time limit"
    return described.meaning
