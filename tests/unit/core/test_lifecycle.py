"""The session lifecycle, table by table: (stage, what Slurm says) -> (stage, action, words)."""

import pytest

from gpuportal_core.culling import Reason
from gpuportal_core.jobs import JobInfo
from gpuportal_core.lifecycle import Do, Event, Seen, Session, Stage, step


def job(state: str, reason: str = "None", host: str = "gpu01", limit: str = "8:00:00") -> Seen:
    info = JobInfo("7", state, reason, host, "N/A", "alice", limit, host, "")
    return Seen(Event.SLURM, info)


GONE = Seen(Event.SLURM, None)
SILENT = Seen(Event.SLURM_SILENT)
STOP = Seen(Event.STOP)
UNREACHABLE = Seen(Event.LAB_UNREACHABLE, job("RUNNING", host="gpu02").info)


def test_no_job_yet_is_submitting():
    result = step(Stage.SUBMITTING, GONE, job_id="")
    assert (result.stage, result.do, result.progress) == (Stage.SUBMITTING, Do.WAIT, 10)


# While starting: what the spawn-pending page says, and what the spawner does.
STARTING = [
    (
        Stage.QUEUED,
        job("PENDING", "Resources"),
        Stage.QUEUED,
        Do.WAIT,
        30,
        "Job 7 is queued: waiting for GPUs to become free.",
    ),
    (
        Stage.QUEUED,
        job("CONFIGURING"),
        Stage.QUEUED,
        Do.WAIT,
        30,
        "Job 7 is queued: waiting for the scheduler to place it.",
    ),
    (
        Stage.QUEUED,
        job("REQUEUED", "BeginTime"),
        Stage.QUEUED,
        Do.WAIT,
        30,
        "Job 7 was put back in the queue and will start again; waiting for it to start.",
    ),
    (
        Stage.QUEUED,
        job("RUNNING"),
        Stage.STARTING,
        Do.WAIT,
        70,
        "Job 7 is running on gpu01; JupyterLab is starting...",
    ),
    # Suspended before JupyterLab answered: still starting (the hub routes nowhere yet).
    (
        Stage.STARTING,
        job("SUSPENDED"),
        Stage.STARTING,
        Do.WAIT,
        50,
        "Job 7 was suspended by an administrator; it goes on when it is resumed.",
    ),
    (
        Stage.STARTING,
        SILENT,
        Stage.STARTING,
        Do.WAIT,
        70,
        "Slurm is not answering; still waiting for job 7.",
    ),
    (
        Stage.QUEUED,
        SILENT,
        Stage.QUEUED,
        Do.WAIT,
        30,
        "Slurm is not answering; still waiting for job 7.",
    ),
    (
        Stage.STARTING,
        Seen(Event.LAB_ANSWERED),
        Stage.READY,
        Do.RETURN,
        100,
        "JupyterLab is up (job 7).",
    ),
    (Stage.STARTING, GONE, Stage.ENDED, Do.FAIL, 0, "The JupyterLab job 7 ended while starting."),
    (
        Stage.STARTING,
        job("FAILED"),
        Stage.ENDED,
        Do.FAIL,
        0,
        "The JupyterLab job 7 failed while starting (FAILED).",
    ),
    (
        Stage.QUEUED,
        job("CANCELLED"),
        Stage.ENDED,
        Do.FAIL,
        0,
        "The JupyterLab job 7 was cancelled while starting (CANCELLED).",
    ),
    (
        Stage.STARTING,
        job("COMPLETING"),
        Stage.STARTING,
        Do.WAIT,
        70,
        "Job 7 is ending; waiting for Slurm to say how.",
    ),
    (
        Stage.STARTING,
        job("OUT_OF_MEMORY"),
        Stage.ENDED,
        Do.FAIL,
        0,
        "The JupyterLab job 7 ran out of memory and was killed while starting (OUT_OF_MEMORY).",
    ),
    (
        Stage.STARTING,
        job("TIMEOUT", limit="1:00"),
        Stage.ENDED,
        Do.FAIL,
        0,
        "The JupyterLab job 7 reached its 1 min time limit while starting (TIMEOUT).",
    ),
]


@pytest.mark.parametrize(("stage", "seen", "next_stage", "do", "progress", "message"), STARTING)
def test_while_starting(stage, seen, next_stage, do, progress, message):
    result = step(stage, seen, job_id="7")
    assert (result.stage, result.do, result.progress, result.message) == (
        next_stage,
        do,
        progress,
        message,
    )


def test_a_reported_port_on_a_running_job_means_connect_and_on_a_suspended_one_wait():
    running = job("RUNNING")
    assert (
        step(Stage.STARTING, Seen(Event.SLURM, running.info, port_known=True), job_id="7").do
        is Do.CONNECT
    )
    suspended = job("SUSPENDED")
    # The port came, then the job was suspended: wait for the next check, no knocking.
    assert (
        step(Stage.STARTING, Seen(Event.SLURM, suspended.info, port_known=True), job_id="7").do
        is Do.WAIT
    )
    queued = job("REQUEUED")
    assert (
        step(Stage.STARTING, Seen(Event.SLURM, queued.info, port_known=True), job_id="7").do
        is Do.WAIT
    )


# Once serving: what the hub's poll answers and what the home page says.
SERVING = [
    (Stage.READY, job("RUNNING"), Stage.READY, Do.KEEP, ""),
    (Stage.READY, SILENT, Stage.READY, Do.KEEP, ""),
    (Stage.SUSPENDED, SILENT, Stage.SUSPENDED, Do.KEEP, ""),
    (
        Stage.READY,
        job("SUSPENDED"),
        Stage.SUSPENDED,
        Do.KEEP,
        "Your session (job 7) was suspended by an administrator. It goes on where it was when it "
        "is resumed.",
    ),
    (Stage.SUSPENDED, job("RUNNING"), Stage.READY, Do.KEEP, ""),
    (
        Stage.READY,
        job("PENDING", "BeginTime"),
        Stage.REQUEUED,
        Do.KEEP,
        "Your session (job 7) was put back in the queue by Slurm. JupyterLab starts again when it "
        "runs; your files are kept, running kernels are not.",
    ),
    (
        Stage.READY,
        job("REQUEUE_HOLD"),
        Stage.REQUEUED,
        Do.KEEP,
        "Your session (job 7) was put back in the queue by Slurm. JupyterLab starts again when it "
        "runs; your files are kept, running kernels are not.",
    ),
    (Stage.REQUEUED, job("RUNNING"), Stage.READY, Do.KEEP, ""),
    (
        Stage.READY,
        job("TIMEOUT"),
        Stage.ENDED,
        Do.END,
        "Your session (job 7) reached its 8 h time limit.",
    ),
    (
        Stage.READY,
        job("TIMEOUT", limit="1-00:30:00"),
        Stage.ENDED,
        Do.END,
        "Your session (job 7) reached its 24 h 30 min time limit.",
    ),
    (
        Stage.READY,
        job("OUT_OF_MEMORY"),
        Stage.ENDED,
        Do.END,
        "Your session (job 7) ran out of memory and was killed.",
    ),
    (Stage.READY, job("CANCELLED"), Stage.ENDED, Do.END, "Your session (job 7) was cancelled."),
    (Stage.READY, job("COMPLETED"), Stage.ENDED, Do.END, "Your session (job 7) ended."),
    # COMPLETING hides why it ends: the next poll tells (TIMEOUT, OUT_OF_MEMORY...).
    (Stage.READY, job("COMPLETING"), Stage.READY, Do.KEEP, ""),
    (Stage.READY, GONE, Stage.ENDED, Do.END, "Your session (job 7) has ended."),
    # Slurm may requeue these: cancelled, so that no copy runs on with nobody attached.
    (
        Stage.READY,
        job("NODE_FAIL"),
        Stage.ENDED,
        Do.CANCEL,
        "Your session (job 7) ended because its node failed.",
    ),
    (
        Stage.SUSPENDED,
        job("PREEMPTED"),
        Stage.ENDED,
        Do.CANCEL,
        "Your session (job 7) was preempted by a higher-priority job.",
    ),
    # A state this table does not know is never read as "ended".
    (Stage.READY, job("SOMETHING_NEW"), Stage.READY, Do.KEEP, ""),
    # Slurm says it runs, but the hub cannot connect to it: kept, and the user is told why.
    (
        Stage.READY,
        UNREACHABLE,
        Stage.READY,
        Do.KEEP,
        "The hub cannot reach gpu02, where your session (job 7) runs. Slurm says the job still "
        "runs, so the session is kept: it opens again once gpu02 is back on the network.",
    ),
    (Stage.READY, Seen(Event.LAB_ANSWERED), Stage.READY, Do.KEEP, ""),
]


@pytest.mark.parametrize(("stage", "seen", "next_stage", "do", "message"), SERVING)
def test_while_serving(stage, seen, next_stage, do, message):
    result = step(stage, seen, job_id="7")
    assert (result.stage, result.do, result.message) == (next_stage, do, message)


@pytest.mark.parametrize("stage", set(Stage) - {Stage.HANDED_OVER})
def test_stop_cancels_in_every_stage_but_handed_over(stage):
    # Stop always cancels (a queued job too); a job handed over to the resume is left alone.
    result = step(stage, STOP, job_id="7")
    assert (result.stage, result.do) == (Stage.STOPPING, Do.CANCEL)
    assert result.message == "Job 7 is being cancelled."
    kept = step(Stage.HANDED_OVER, STOP, job_id="7")
    assert (kept.stage, kept.do, kept.message) == (Stage.HANDED_OVER, Do.LET_GO, None)


# The hub's own events: (stage, event) -> (stage, action, the words left for the user).
LEFT_RUNNING = Seen(Event.CANCELLED, left_running=("7",))
HUB_EVENTS = [
    (Stage.ENDED, Seen(Event.SPAWN), Stage.SUBMITTING, Do.WAIT, "Submitting the job to Slurm..."),
    (Stage.SUBMITTING, Seen(Event.SUBMITTED), Stage.QUEUED, Do.WAIT, "Job 7 is in Slurm's queue."),
    (
        Stage.QUEUED,
        Seen(Event.QUEUE_DESCRIBED, words="1st of 1"),
        Stage.QUEUED,
        Do.WAIT,
        "1st of 1",
    ),
    # A queue note that comes after a stop began leaves the stop's words alone.
    (Stage.STOPPING, Seen(Event.QUEUE_DESCRIBED, words="1st"), Stage.STOPPING, Do.WAIT, None),
    (
        Stage.QUEUED,
        Seen(Event.QUEUE_LIMIT, limit=1800),
        Stage.ENDED,
        Do.CANCEL,
        "Your session waited in the queue for 30 min, its profile's limit, so its job 7 was "
        "cancelled rather than start later with nobody there. Pick a profile with free GPUs, or "
        "try again later.",
    ),
    # A plain stop leaves no words; a culled one says which limit; a failed cancel says so.
    (Stage.STOPPING, Seen(Event.CANCELLED), Stage.ENDED, Do.END, ""),
    (
        Stage.STOPPING,
        Seen(Event.CANCELLED, culled=Reason.IDLE, limit=3600),
        Stage.ENDED,
        Do.END,
        "Your session (job 7) was stopped after 1 h without use, its profile's idle limit, so "
        "that its GPUs go to others who wait. Your files are kept.",
    ),
    (
        Stage.STOPPING,
        LEFT_RUNNING,
        Stage.ENDED,
        Do.END,
        "Slurm did not answer the cancel of job 7: it may run on until its time limit. "
        "Stop the session again in a minute to retry.",
    ),
    # Over: polls ask nothing and keep the words that said why.
    (Stage.ENDED, Seen(Event.NOT_ASKED), Stage.ENDED, Do.GONE, None),
    (Stage.HANDED_OVER, Seen(Event.NOT_ASKED), Stage.HANDED_OVER, Do.GONE, None),
    # The hub's periodic poll during a stop's cancels: gone, Slurm not asked, no words changed.
    (Stage.STOPPING, job("RUNNING"), Stage.STOPPING, Do.GONE, None),
    (Stage.SUBMITTING, Seen(Event.NO_JOB), Stage.ENDED, Do.GONE, ""),
]


@pytest.mark.parametrize(("stage", "seen", "next_stage", "do", "message"), HUB_EVENTS)
def test_the_hubs_own_events(stage, seen, next_stage, do, message):
    result = step(stage, seen, job_id="7")
    assert (result.stage, result.do, result.message) == (next_stage, do, message)


def test_a_session_keeps_its_words_once_over_and_restores_its_saved_stage():
    session = Session()
    session.advance(Seen(Event.SUBMITTED), job_id="7")
    session.advance(job("TIMEOUT"), job_id="7")
    assert (session.stage, session.note) == (
        Stage.ENDED,
        "The JupyterLab job 7 reached its 8 h time limit while starting (TIMEOUT).",
    )
    session = Session.restored("ready")
    session.advance(job("TIMEOUT"), job_id="7")
    assert session.note == "Your session (job 7) reached its 8 h time limit."
    session.advance(Seen(Event.NOT_ASKED), job_id="7")
    assert session.note == "Your session (job 7) reached its 8 h time limit."
    assert Session.restored("a stage of a later release").stage is Stage.SUBMITTING
    assert Session.restored(None).stage is Stage.SUBMITTING


# The hub starting up, checking a server it had when it stopped.
HUB_CHECK = [
    (Stage.QUEUED, job("PENDING", "Resources"), Do.DETACH),
    (Stage.SUBMITTING, job("PENDING"), Do.DETACH),
    (Stage.STARTING, job("RUNNING"), Do.DETACH),
    (Stage.QUEUED, SILENT, Do.DETACH),  # Slurm silent: keep the job, never cancel on a guess
    (Stage.HANDED_OVER, job("PENDING"), Do.GONE),  # let go already: the resume's now
    (Stage.QUEUED, GONE, Do.END),
    (Stage.QUEUED, job("CANCELLED"), Do.END),
    (Stage.READY, job("RUNNING"), Do.KEEP),
    (Stage.READY, SILENT, Do.KEEP),
    (Stage.READY, job("SUSPENDED"), Do.KEEP),
    (Stage.READY, GONE, Do.END),
    (Stage.REQUEUED, job("PENDING"), Do.KEEP),
]


@pytest.mark.parametrize(("stage", "seen", "do"), HUB_CHECK)
def test_hub_start_up_check(stage, seen, do):
    result = step(stage, seen, job_id="7", hub_check=True)
    assert result.do is do
    if do is Do.DETACH:
        assert result.stage is Stage.HANDED_OVER


def test_hub_start_up_check_of_a_server_with_no_job_id_and_a_silent_slurm():
    # Nothing to resume by id: the hub drops it.
    result = step(Stage.SUBMITTING, SILENT, job_id="", hub_check=True)
    assert (result.stage, result.do) == (Stage.ENDED, Do.END)
