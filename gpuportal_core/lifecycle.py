"""The life of one notebook session, as a pure state machine.

`step(stage, event)` says, from what Slurm reports and what the hub asks, the session's next
stage, what the spawner must do, and what the user is told. The spawner
(gpuportal_spawner.slurm_spawner)
only carries the step out: it asks Slurm, feeds the answer in here, and acts. Every rule about
job states lives here and in gpuportal_core.states, and the unit tests read them as tables.

Stages:  SUBMITTING -> QUEUED -> STARTING -> READY, with SUSPENDED and REQUEUED on the side,
STOPPING while a stop's cancels run, and ENDED at the end. A session that has been READY is kept
through a suspension or a requeue (its job comes back by itself); one that ends is told why
("reached its 8 h time limit"). HANDED_OVER: the hub, starting up, let go of a server that was
still starting; its job is left for the resume (gpuportal_spawner.resume_service), never cancelled
here.

The hub's own transitions are events too (a spawn begins, sbatch answered, the queue limit, a
stop and its cancels confirmed), so that a session's stage and the words it leaves (Session)
are written here only.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpuportal_core.culling import Reason, cull_message
from gpuportal_core.jobs import JobInfo
from gpuportal_core.slurm_time import describe_runtime, limit_seconds
from gpuportal_core.states import Phase


class Stage(enum.Enum):
    SUBMITTING = "submitting"  # no job id yet
    QUEUED = "queued"  # the job waits for its allocation
    STARTING = "starting"  # the job runs; JupyterLab is starting
    READY = "ready"  # JupyterLab answered: the hub routes to it
    SUSPENDED = "suspended"  # a ready session's job was suspended
    REQUEUED = "requeued"  # a ready session's job went back to the queue
    STOPPING = "stopping"  # a stop was asked: its cancels are under way
    HANDED_OVER = "handed_over"  # let go at a hub start-up; its job is kept for the resume
    ENDED = "ended"


# The job phases in which a new spawn may take a job over (it has not started, so it can still
# be handed this spawn's token), and those the resumer brings back to a spawn, which takes over
# the waiting ones and cancels a running one (started with a token the hub no longer knows).
ADOPTABLE = frozenset({Phase.QUEUED, Phase.REQUEUED})
LIVE = ADOPTABLE | {Phase.RUNNING}


# Stages in which the hub already routes to the session (start() has returned).
_SERVING = {Stage.READY, Stage.SUSPENDED, Stage.REQUEUED}
# Stages after which nothing happens to the session until its next spawn.
FINAL = frozenset({Stage.ENDED, Stage.HANDED_OVER})
# Stages in which a poll asks Slurm nothing and answers "gone": those, and a stop under way
# (the hub's periodic poll may come while the cancels run; the stop says how it ended).
QUIET = FINAL | {Stage.STOPPING}


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
    GONE = "gone"  # the server is gone already: poll answers 1, nothing is done
    LET_GO = "let_go"  # a stop of a handed-over server: its job is the resume's, left alone


# Event kinds.
class Event(enum.Enum):
    SLURM = "slurm"  # Slurm answered; `info` is the job (None: Slurm no longer lists it)
    SLURM_SILENT = "slurm_silent"  # Slurm could not be asked (timeout, controller down)
    LAB_ANSWERED = "lab_answered"  # JupyterLab accepted a connection on its port
    LAB_UNREACHABLE = "lab_unreachable"  # a served JupyterLab did not (`info`: its job)
    STOP = "stop"  # a user, an admin or the culler stops the server (`culled`: which rule)
    CANCELLED = "cancelled"  # the stop's cancels are done (`left_running`: not confirmed)
    SPAWN = "spawn"  # start() begins: a new life for the server
    SUBMITTED = "submitted"  # sbatch answered, or a waiting job of the server's was taken over
    QUEUE_DESCRIBED = "queue_described"  # place in line and expected start (`words`, `progress`)
    QUEUE_LIMIT = "queue_limit"  # waited over the profile's queue limit (`limit` seconds)
    NO_JOB = "no_job"  # no job id, and Slurm lists no job with the server's tag
    NOT_ASKED = "not_asked"  # a poll in a FINAL stage: Slurm is not asked again


@dataclass(frozen=True)
class Seen:
    """One event, with what came with it."""

    kind: Event
    info: JobInfo | None = None
    port_known: bool = False  # the job has reported JupyterLab's port
    culled: Reason | None = None  # STOP, CANCELLED: the cull rule behind the stop
    limit: int = 0  # STOP, CANCELLED, QUEUE_LIMIT: that rule's limit, seconds
    left_running: tuple[str, ...] = ()  # CANCELLED: jobs whose cancel Slurm did not confirm
    words: str = ""  # QUEUE_DESCRIBED: the waiting page's note
    progress: int = 0  # QUEUE_DESCRIBED: its bar


@dataclass(frozen=True)
class Step:
    stage: Stage
    do: Do
    # For the user: the spawn-pending page, the spawn error, the home page. None: the words
    # said before stay (an ended session keeps why it ended).
    message: str | None
    progress: int = 0  # the spawn-pending page's bar, while starting


def step(stage: Stage, seen: Seen, *, job_id: str, hub_check: bool = False) -> Step:
    """The next stage of a session in `stage` on the event `seen`.

    hub_check: the hub is starting up and checks a server it had before it stopped.
    """
    hub_event = _hub_event(stage, seen, job_id)
    if hub_event is not None:
        return hub_event
    if stage in QUIET:
        return Step(stage, Do.GONE, None)  # nothing more happens to it until the next spawn
    if seen.kind is Event.NO_JOB:
        return Step(Stage.ENDED, Do.GONE, "")
    if hub_check and stage not in _SERVING:
        return _left_starting(stage, seen, job_id)
    if stage in _SERVING:
        return _serving(stage, seen, job_id)
    return _starting(stage, seen, job_id)


def _hub_event(stage: Stage, seen: Seen, job_id: str) -> Step | None:
    """The hub's own events: a spawn, its submission and queue, a stop. None: not one."""
    kind = seen.kind
    if kind is Event.SPAWN:
        return Step(Stage.SUBMITTING, Do.WAIT, "Submitting the job to Slurm...", 10)
    if kind is Event.SUBMITTED:
        return Step(Stage.QUEUED, Do.WAIT, f"Job {job_id} is in Slurm's queue.", 20)
    if kind is Event.QUEUE_DESCRIBED:
        # Only a queued session's note; one that moved on meanwhile (started, stopped) keeps its.
        if stage is Stage.QUEUED:
            return Step(stage, Do.WAIT, seen.words, seen.progress)
        return Step(stage, Do.WAIT, None)
    if kind is Event.QUEUE_LIMIT:
        # jupyterhub-idle-culler never sees a server that is still starting: the wait applies
        # the profile's queue limit, and the job is cancelled rather than start for nobody.
        return Step(Stage.ENDED, Do.CANCEL, cull_message(Reason.QUEUED, seen.limit, job_id))
    if kind is Event.STOP:
        if stage is Stage.HANDED_OVER:
            return Step(stage, Do.LET_GO, None)
        # Stop means stop, in every other stage: a queued job is cancelled too, never kept.
        return Step(Stage.STOPPING, Do.CANCEL, f"Job {job_id} is being cancelled.")
    if kind is Event.CANCELLED:
        return Step(Stage.ENDED, Do.END, _stopped(seen, job_id))
    return None


def _stopped(seen: Seen, job_id: str) -> str:
    """What stays said of a stopped session: that its job may run on, or which limit ended it;
    a plain stop needs no words."""
    if seen.left_running:
        return (
            f"Slurm did not answer the cancel of job {', '.join(seen.left_running)}: it may run "
            "on until its time limit. Stop the session again in a minute to retry."
        )
    if seen.culled is not None:
        return cull_message(seen.culled, seen.limit, job_id)
    return ""


class Session:
    """One server's place in the machine: its stage and the words the user reads. Only
    advance() (that is, step) changes them; the spawner carries out what it returns."""

    def __init__(self, stage: Stage = Stage.SUBMITTING) -> None:
        self.stage = stage
        self.note = ""
        self.progress = 0

    @classmethod
    def restored(cls, saved: str | None) -> Session:
        """From the stage a hub saved (unknown or none: a server that had not submitted)."""
        known = {s.value: s for s in Stage}
        return cls(known.get(saved or "", Stage.SUBMITTING))

    def advance(self, seen: Seen, *, job_id: str, hub_check: bool = False) -> Step:
        result = step(self.stage, seen, job_id=job_id, hub_check=hub_check)
        self.stage = result.stage
        if result.message is not None:
            self.note, self.progress = result.message, result.progress
        return result


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
    if not job_id:
        # Slurm could not be asked for a job of this server, and no id was saved: nothing to
        # resume by id.
        return Step(Stage.ENDED, Do.END, "")
    return Step(Stage.HANDED_OVER, Do.DETACH, f"Job {job_id} is kept for the hub to pick up again.")


def _ended(info: JobInfo) -> str:
    """How a job ended, in words: "reached its 8 h time limit", "ran out of memory ..."."""
    described = info.described
    limit = limit_seconds(info.time_limit)
    if info.state == "TIMEOUT" and limit:
        return f"reached its {describe_runtime(limit)} time limit"
    return described.meaning
