"""The spawner's half that carries the lifecycle out (poll, the start's waits, the hub's start-up
check), with the Slurm boundary replaced (tests/unit/hub/slurm_stand_in.py): what it asks Slurm,
what it cancels, what it answers the hub and what it leaves said. Table-driven, as
tests/unit/core/test_lifecycle.py. The stop: test_session_stop.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gpuportal_adapters.slurm import SlurmUnavailable
from gpuportal_core.environments import SoftwareEnvironment
from gpuportal_core.jobs import JobInfo
from gpuportal_core.lifecycle import Stage
from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.request import SpawnRequest
from gpuportal_spawner import session_job, slurm_spawner
from tests.unit.hub.slurm_stand_in import TAG, FakeSlurm, Spawner, info, no_waiting, spawner

__all__ = ["no_waiting"]  # autouse: the spawner's waits are instant

# (saved stage, Slurm's answer, hub start-up check) -> (poll's answer, stage after, cancelled)
POLLS = [
    ("ready", info("RUNNING"), True, None, Stage.READY, []),
    ("ready", info("TIMEOUT"), False, 1, Stage.ENDED, []),
    ("ready", None, False, 1, Stage.ENDED, []),
    ("ready", SlurmUnavailable(["squeue"], 1, "timed out"), False, None, Stage.READY, []),
    # A job Slurm may requeue is cancelled, so that no copy runs on for nobody.
    ("ready", info("NODE_FAIL"), False, 1, Stage.ENDED, ["7"]),
    ("queued", info("PENDING"), True, 1, Stage.HANDED_OVER, []),
    ("queued", SlurmUnavailable(["squeue"], 1, "timed out"), True, 1, Stage.HANDED_OVER, []),
    ("queued", info("CANCELLED"), True, 1, Stage.ENDED, []),
]


@pytest.mark.parametrize(("saved", "answer", "hub_check", "polled", "after", "cancelled"), POLLS)
def test_poll(saved, answer, hub_check, polled, after, cancelled) -> None:
    fake = FakeSlurm(answer)
    made = spawner(fake, stage=saved)
    assert asyncio.run(made.poll_session(hub_check=hub_check)) == polled
    assert made.stage is after
    assert fake.cancelled == cancelled


def test_an_ended_session_keeps_why_and_is_not_asked_again() -> None:
    fake = FakeSlurm(info("TIMEOUT"))
    made = spawner(fake, stage="ready")
    asyncio.run(made.poll_session())
    assert made.note == "Your session (job 7) reached its 8 h time limit."
    asked = fake.asked
    assert asyncio.run(made.poll_session()) == 1
    assert fake.asked == asked
    assert made.note == "Your session (job 7) reached its 8 h time limit."


def test_a_poll_without_a_job_id_finds_the_job_by_its_tag_or_says_it_is_gone() -> None:
    fake = FakeSlurm(info("RUNNING", "9"), tagged=[info("RUNNING", "9")])
    made = spawner(fake, stage="submitting", job_id="")
    assert asyncio.run(made.poll_session()) is None
    assert made.job_id == "9"
    gone = spawner(FakeSlurm(None), stage="submitting", job_id="")
    assert asyncio.run(gone.poll_session()) == 1
    assert gone.stage is Stage.ENDED


def test_a_job_that_ended_while_starting_is_forgotten_by_the_poll_of_a_stop() -> None:
    # user.stop() polls first: a job that died while JupyterLab started is gone (poll 1), and
    # its token and TLS files go with it, as for any end.
    fake = FakeSlurm(info("FAILED"))
    forgotten: list[int] = []

    async def remove_token() -> None:
        forgotten.append(1)

    fake.remove_token = remove_token  # type: ignore[method-assign]
    made = spawner(fake, stage="starting")
    assert asyncio.run(made.poll_session()) == 1
    assert made.stage is Stage.ENDED
    assert forgotten == [1]


def test_a_start_that_goes_on_after_its_stop_ends_rather_than_watch_the_job() -> None:
    made = spawner(FakeSlurm(info("CANCELLED")), stage="ended")
    with pytest.raises(Exception, match="stopped before JupyterLab started"):
        asyncio.run(asyncio.wait_for(made._wait_until_reachable(), 5))


def test_a_job_long_in_the_queue_is_checked_less_often_and_its_start_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every status_interval (1 s) for its first 30 s in the queue, then every 10 s; JupyterLab's
    port call wakes the wait at once and Slurm is then asked afresh (max_age 0)."""
    clock = [1000.0]
    monkeypatch.setattr(slurm_spawner.time, "monotonic", lambda: clock[0])
    waits: list[float] = []
    made = spawner(FakeSlurm(info("PENDING")), stage="queued")
    made._queued_since = clock[0]

    async def wait_for(awaitable: Any, timeout: float) -> None:
        awaitable.close()  # the port event's wait, never awaited here
        waits.append(timeout)
        clock[0] += timeout
        if clock[0] - 1000.0 >= 60:
            made.report_port(8888)  # JupyterLab started and called back
        raise TimeoutError

    monkeypatch.setattr(slurm_spawner.asyncio, "wait_for", wait_for)
    asked: list[float] = []
    fake = made.fake

    async def job(job_id: str, *, max_age: float) -> JobInfo | None:
        asked.append(max_age)
        if made._port_ready.is_set():
            raise RuntimeError("asked once the port came")  # ends the loop for the test
        return fake.answer

    fake.job = job  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="port came"):
        asyncio.run(made._wait_until_reachable())
    assert waits == [1.0] * 30 + [10.0] * 3
    # Asked at 0, 1, ..., 30 s (the answer at 30 s sets the longer interval), 40 and 50 s; at
    # 60 s the port came.
    assert asked == [1.0] * 31 + [10.0] * 2 + [0.0]


def test_a_card_waits_a_moment_for_slurm_then_shows_the_last_answer() -> None:
    """A busy Slurm (the poller's squeue waiting its turn) leaves the card as it last was;
    the look goes on, and its answer is there for the next page."""
    made = spawner(FakeSlurm(info("PENDING")), stage="queued")
    made._info = info("PENDING")
    answer = asyncio.Event()

    async def job(job_id: str, *, max_age: float) -> JobInfo | None:
        await answer.wait()
        return info("RUNNING")

    made.fake.job = job  # type: ignore[method-assign]

    async def two_pages() -> tuple[str, str]:
        first = await made.job_within(0.05, max_age=10)
        answer.set()
        for _ in range(100):  # the look that went on after the first page gave up
            if made._info is not None and made._info.state == "RUNNING":
                break
            await asyncio.sleep(0)
        second = await made.job_within(0.05, max_age=10)
        return (first.state if first else "", second.state if second else "")

    assert asyncio.run(two_pages()) == ("PENDING", "RUNNING")


def test_a_poll_a_busy_slurm_keeps_waiting_answers_from_the_last_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """JupyterHub polls on every home page: a job seen running before stays running while a
    fresh look waits its turn, rather than hold the page; the first look is always waited for."""
    monkeypatch.setattr(session_job, "POLL_WAIT_S", 0.05)
    made = spawner(FakeSlurm(info("RUNNING")), stage="ready")
    never = asyncio.Event()

    async def busy(job_id: str, *, max_age: float) -> JobInfo | None:
        await never.wait()
        return None

    async def polls() -> tuple[int | None, int | None]:
        first = await made.poll_session()  # no earlier look: answered by Slurm (running)
        made.fake.job = busy  # type: ignore[method-assign]
        second = await asyncio.wait_for(made.poll_session(), 5)
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()
        return first, second

    assert asyncio.run(polls()) == (None, None)
    assert made.stage is Stage.READY


def test_a_look_that_goes_on_after_its_page_asks_for_the_job_it_was_made_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A card's look is made, then the server is stopped (no job id any more) before the look
    runs: it still asks for job 7, never for "" (which failed the shared squeue of every
    server), and leaves the stopped server's last answer alone."""
    made = spawner(FakeSlurm(info("RUNNING")), stage="ready")
    asked: list[str] = []

    async def job(job_id: str, *, max_age: float) -> JobInfo | None:
        asked.append(job_id)
        return info("RUNNING", job_id) if job_id else None

    made.fake.job = job  # type: ignore[method-assign]
    shield = asyncio.shield

    def stopped_meanwhile(look: Any) -> Any:
        made.job_id = ""  # the stop runs between the look's making and its first step
        return shield(look)

    monkeypatch.setattr(session_job.asyncio, "shield", stopped_meanwhile)
    asyncio.run(made.job_within(1.0, max_age=0))
    assert asked == ["7"]
    assert made._info is None


def test_a_node_answers_again_only_after_it_did_not(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 54, item 17: "gpu01 answers again" was a warning after every new session's first
    check; now it is said, as information, only after the node did not answer."""
    answers = iter([True, False, True])

    async def node_answers(host: str, port: int, timeout: float) -> bool:
        return next(answers)

    monkeypatch.setattr(session_job, "node_answers", node_answers)
    made = spawner(FakeSlurm(info("RUNNING")), stage="ready")
    made.port = 8888
    said = []
    for _ in range(3):
        caplog.clear()
        with caplog.at_level("INFO"):
            asyncio.run(made.poll_session())
        said.append(
            [(r.levelname, r.getMessage()) for r in caplog.records if "gpu01" in r.getMessage()]
        )
    assert said[0] == []
    assert [level for level, _ in said[1]] == ["WARNING"]
    assert said[2] == [("INFO", f"{TAG}: gpu01 answers again")]


def test_a_session_in_an_image_says_the_image_loads_first() -> None:
    """Issue 54, item 5: a container-image session sat at "JupyterLab is starting" for 46 s
    while its image loaded, and never said so."""
    image = SoftwareEnvironment(
        slug="session-image", title="Image", kind="container", image="/srv/x.tar", engine="podman"
    )
    profile = ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1)

    async def first_message(made: Spawner) -> str:
        progress = made.progress()
        event = await anext(progress)
        await progress.aclose()
        return str(event["message"])

    for environment, says in ((image, True), (None, False)):
        made = spawner(FakeSlurm(info("RUNNING")), stage="starting")
        made.spawn_request = SpawnRequest(profile, 3600, environment)
        message = asyncio.run(first_message(made))
        assert message.endswith(slurm_spawner.IMAGE_NOTE) is says, message
