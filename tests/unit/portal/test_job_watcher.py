"""JobWatcher against a stand-in Slurm client: what it records, and what it does on trouble."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import cast

import anyio.to_thread
import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from gpuportal_core.jobs import JobDetail, JobInfo
from gpuportal_core.slurm import SlurmClient, SlurmError, SlurmUnavailable
from gpuportal_portal.job_service import record_tag
from gpuportal_portal.job_watcher import JobWatcher
from gpuportal_portal.models import Base, JobRecord
from gpuportal_portal.settings import PortalSettings


def as_client(fake: FakeSlurm) -> SlurmClient:
    return cast(SlurmClient, fake)


async def refresh(watcher: JobWatcher, session: Session, records: list[JobRecord]) -> None:
    """What a plain route does: refresh from a worker thread, Slurm asked on the loop."""
    await anyio.to_thread.run_sync(watcher.refresh, session, records)


class FakeSlurm:
    def __init__(self) -> None:
        self.queue: dict[str, JobInfo] = {}
        self.details: dict[str, JobDetail] = {}
        self.fail = False
        self.squeue_calls = 0
        # sacct's records; None: a cluster without accounting (sacct refuses).
        self.accounted: dict[str, list[JobDetail]] | None = None

    async def jobs(self, job_ids: Iterable[str]) -> dict[str, JobInfo]:
        self.squeue_calls += 1
        if self.fail:
            raise SlurmUnavailable(["squeue"], 1, "Unable to contact slurm controller")
        return {i: self.queue[i] for i in job_ids if i in self.queue}

    async def tagged(self, tag: str | None = None, **_: object) -> list[JobInfo]:
        if self.fail:
            raise SlurmUnavailable(["squeue"], 1, "Unable to contact slurm controller")
        return [job for job in self.queue.values() if tag is None or job.comment == tag]

    async def job_details(self, job_id: str) -> list[JobDetail]:
        if self.fail:
            raise SlurmError(["scontrol"], 1, "Socket timed out")
        return [self.details[job_id]] if job_id in self.details else []

    async def accounting(self, job_id: str) -> list[JobDetail]:
        if self.accounted is None:
            raise SlurmError(["sacct"], 1, "Slurm accounting storage is disabled")
        return self.accounted.get(job_id, [])


@pytest.fixture
def session() -> Iterator[Session]:
    # One in-memory database for every thread: the watcher's records are changed in a worker
    # thread, as in a plain route.
    engine = create_engine(
        "sqlite://", connect_args={"check_same_thread": False}, poolclass=StaticPool
    )
    Base.metadata.create_all(engine)
    with Session(engine) as db:
        yield db


def record(session: Session, job_id: str, state: str = "PENDING") -> JobRecord:
    row = JobRecord(
        user="alice", name="t", launcher="srun", script="", output="/dev/null",
        slurm_job_id=job_id, state=state,
    )  # fmt: skip
    session.add(row)
    session.commit()
    return row


def detail(job_id: str, state: str, code: int | None) -> JobDetail:
    return JobDetail(job_id, "alice", state, "None", code, 0, "gpu[01-02]", "t0", "t1", "t2")


async def test_one_squeue_for_all_live_jobs_and_scontrol_for_ended_ones(session: Session) -> None:
    slurm = FakeSlurm()
    running, done = record(session, "11"), record(session, "12")
    finished = record(session, "13", state="COMPLETED")
    slurm.queue["11"] = JobInfo("11", "RUNNING", "None", "gpu01", "t1", "alice")
    slurm.details["12"] = detail("12", "FAILED", 3)
    await refresh(JobWatcher(as_client(slurm), min_interval=0), session, [running, done, finished])
    assert slurm.squeue_calls == 1
    assert (running.state, running.nodes) == ("RUNNING", "gpu01")
    assert (done.state, done.exit_code, done.ended_at) == ("FAILED", 3, "t2")
    assert finished.state == "COMPLETED"


async def test_a_job_slurm_forgot_reads_as_ended(session: Session) -> None:
    gone = record(session, "21")
    await refresh(JobWatcher(as_client(FakeSlurm()), min_interval=0), session, [gone])
    assert (gone.state, gone.reason) == ("ENDED", "Slurm no longer knows this job")


async def test_a_job_the_controller_forgot_is_read_from_accounting(session: Session) -> None:
    slurm = FakeSlurm()
    slurm.accounted = {"22": [detail("22", "OUT_OF_MEMORY", 0)]}
    forgotten, unknown = record(session, "22"), record(session, "23")
    await refresh(JobWatcher(as_client(slurm), min_interval=0), session, [forgotten, unknown])
    assert (forgotten.state, forgotten.exit_code, forgotten.nodes) == (
        "OUT_OF_MEMORY",
        0,
        "gpu[01-02]",
    )
    assert unknown.state == "ENDED"


async def test_slurm_trouble_keeps_the_last_state_and_raises_nothing(session: Session) -> None:
    slurm = FakeSlurm()
    slurm.fail = True
    waiting = record(session, "31")
    watcher = JobWatcher(as_client(slurm), min_interval=0)
    await refresh(watcher, session, [waiting])
    await anyio.to_thread.run_sync(watcher.refresh_one, session, waiting)
    assert waiting.state == "PENDING"


async def test_many_lists_at_once_make_one_squeue(session: Session) -> None:
    slurm = FakeSlurm()
    live = [record(session, str(40 + i)) for i in range(5)]
    watcher = JobWatcher(as_client(slurm), min_interval=60)
    for _ in range(10):
        await refresh(watcher, session, live)
    assert slurm.squeue_calls == 1


async def test_a_submission_sbatch_never_answered_is_settled_by_its_tag(session: Session) -> None:
    slurm = FakeSlurm()
    settings = PortalSettings(slurm_timeout=0.01)  # settle after 0.03 s
    sent, lost = record(session, "", state="SUBMITTING"), record(session, "", state="SUBMITTING")
    tag = record_tag(sent, settings)
    slurm.queue["51"] = JobInfo("51", "PENDING", "Resources", "", "N/A", "alice", comment=tag)
    watcher = JobWatcher(as_client(slurm), min_interval=0, settings=settings)
    await asyncio.sleep(0.05)
    slurm.fail = True  # Slurm still silent: nothing is decided
    await refresh(watcher, session, [sent, lost])
    assert (sent.state, lost.state) == ("SUBMITTING", "SUBMITTING")
    slurm.fail = False
    await refresh(watcher, session, [sent, lost])
    assert (sent.slurm_job_id, sent.state) == ("51", "PENDING")
    assert (lost.slurm_job_id, lost.state) == ("", "NOT_SUBMITTED")


async def test_a_submission_still_in_flight_is_left_alone(session: Session) -> None:
    slurm = FakeSlurm()
    in_flight = record(session, "", state="SUBMITTING")
    await refresh(JobWatcher(as_client(slurm), min_interval=0), session, [in_flight])
    assert in_flight.state == "SUBMITTING"


def test_an_extended_sessions_record_takes_slurms_new_time_limit(session: Session) -> None:
    from gpuportal_portal.job_watcher import apply_detail

    def detail(limit: str) -> JobDetail:
        return JobDetail(
            "7", "alice", "RUNNING", "None", None, None, "gpu01", "", "", "", "", limit
        )

    row = JobRecord(
        user="alice",
        name="default",
        launcher="jupyterlab",
        request={"server": "", "time_limit": "8:00:00", "nodes": 1},
        script="",
        output="",
        slurm_job_id="7",
        state="RUNNING",
    )
    session.add(row)
    session.commit()
    apply_detail(row, detail("8:30:00"))
    session.commit()
    session.refresh(row)
    assert row.request["time_limit"] == "08:30:00"
    # A batch job's request stays as it was sent.
    batch = record(session, "8", "RUNNING")
    sent = dict(batch.request)
    apply_detail(batch, detail("1:00:00"))
    assert batch.request == sent


def test_scontrol_and_sacct_give_the_time_limit() -> None:
    from gpuportal_core.jobs import parse_sacct, parse_scontrol_job

    line = "JobId=9 UserId=alice(10001) JobState=RUNNING TimeLimit=08:30:00 NodeList=gpu01\n"
    scontrol = parse_scontrol_job(line)
    assert scontrol is not None and scontrol.time_limit == "08:30:00"
    (accounted,) = parse_sacct("9|alice|COMPLETED|0:0|a|b|c|gpu01|None|1-00:00:00\n")
    assert accounted.time_limit == "24:00:00"
