"""JobWatcher against a stand-in Slurm client: what its steps record, that its loop keeps
everyone's records up to date by itself, and what it does on trouble."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from gpuportal_adapters.slurm import SlurmClient, SlurmError, SlurmUnavailable
from gpuportal_core.jobs import JobDetail, JobInfo
from gpuportal_core.tags import session_tag
from gpuportal_portal import db
from gpuportal_portal.job_service import record_tag
from gpuportal_portal.job_watcher import JobWatcher, apply_detail
from gpuportal_portal.models import JobRecord
from gpuportal_portal.settings import PortalSettings


def as_client(fake: FakeSlurm) -> SlurmClient:
    return cast(SlurmClient, fake)


class FakeSlurm:
    """squeue's lines of every job (`listed`), scontrol's (`details`), sacct's."""

    def __init__(self) -> None:
        self.listed: dict[str, JobInfo] = {}
        self.details: dict[str, JobDetail] = {}
        self.fail = False
        self.squeue_calls = 0
        self.scontrol_asked: list[str] = []
        # sacct's records; None: a cluster without accounting (sacct refuses).
        self.accounted: dict[str, list[JobDetail]] | None = None

    async def queue(self) -> list[JobInfo]:
        self.squeue_calls += 1
        if self.fail:
            raise SlurmUnavailable(["squeue"], 1, "Unable to contact slurm controller")
        return list(self.listed.values())

    async def job_names(self, job_ids: object) -> dict[str, str]:
        return {job_id: f"name of {job_id}" for job_id in job_ids}  # type: ignore[attr-defined]

    async def job_details(self, job_id: str) -> list[JobDetail]:
        self.scontrol_asked.append(job_id)
        if self.fail:
            raise SlurmError(["scontrol"], 1, "Socket timed out")
        return [self.details[job_id]] if job_id in self.details else []

    async def accounting(self, job_id: str) -> list[JobDetail]:
        if self.accounted is None:
            raise SlurmError(["sacct"], 1, "Slurm accounting storage is disabled")
        return self.accounted.get(job_id, [])


@pytest.fixture
def database(tmp_path: Path) -> db.Database:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    return db.Database(url)


def watcher_of(
    database: db.Database, slurm: FakeSlurm, settings: PortalSettings | None = None
) -> JobWatcher:
    return JobWatcher(database, as_client(slurm), settings=settings or PortalSettings(), every=0)


def record(database: db.Database, job_id: str, state: str = "PENDING", user: str = "alice") -> int:
    with database.sessions() as session:
        row = JobRecord(
            user=user, name="t", launcher="srun", script="", output="/dev/null",
            slurm_job_id=job_id, state=state,
        )  # fmt: skip
        session.add(row)
        session.commit()
        return row.id


def read(database: db.Database, record_id: int) -> JobRecord:
    with database.sessions() as session:
        row = session.get(JobRecord, record_id)
        assert row is not None
        return row


def detail(job_id: str, state: str, code: int | None) -> JobDetail:
    return JobDetail(job_id, "alice", state, "None", code, 0, "gpu[01-02]", "t0", "t1", "t2")


async def test_one_squeue_for_all_live_jobs_and_scontrol_for_ended_ones(
    database: db.Database,
) -> None:
    slurm = FakeSlurm()
    running, done = record(database, "11"), record(database, "12")
    finished = record(database, "13", state="COMPLETED")
    slurm.listed["11"] = JobInfo("11", "RUNNING", "None", "gpu01", "t1", "alice")
    slurm.details["12"] = detail("12", "FAILED", 3)
    await watcher_of(database, slurm).step()
    assert slurm.squeue_calls == 1
    assert slurm.scontrol_asked == ["12"]  # not the running one, nor the one long settled
    assert (read(database, running).state, read(database, running).nodes) == ("RUNNING", "gpu01")
    ended = read(database, done)
    assert (ended.state, ended.exit_code, ended.ended_at) == ("FAILED", 3, "t2")
    assert read(database, finished).state == "COMPLETED"


async def test_a_job_slurm_forgot_reads_as_ended(database: db.Database) -> None:
    gone = record(database, "21")
    await watcher_of(database, FakeSlurm()).step()
    assert (read(database, gone).state, read(database, gone).reason) == (
        "ENDED",
        "Slurm no longer knows this job",
    )


async def test_a_job_the_controller_forgot_is_read_from_accounting(database: db.Database) -> None:
    slurm = FakeSlurm()
    slurm.accounted = {"22": [detail("22", "OUT_OF_MEMORY", 0)]}
    forgotten, unknown = record(database, "22"), record(database, "23")
    await watcher_of(database, slurm).step()
    row = read(database, forgotten)
    assert (row.state, row.exit_code, row.nodes) == ("OUT_OF_MEMORY", 0, "gpu[01-02]")
    assert read(database, unknown).state == "ENDED"


async def test_slurm_trouble_keeps_the_last_state_and_raises_nothing(
    database: db.Database,
) -> None:
    slurm = FakeSlurm()
    slurm.fail = True
    waiting = record(database, "31")
    watcher = watcher_of(database, slurm)
    await watcher.step()
    await watcher.look_now()
    assert read(database, waiting).state == "PENDING"


async def test_every_users_jobs_are_kept_up_to_date_by_the_loop(database: db.Database) -> None:
    """The loop steps by itself, for everyone's records: nobody needs to read a list."""
    slurm = FakeSlurm()
    alice, bob = record(database, "41"), record(database, "42", user="bob")
    slurm.listed["41"] = JobInfo("41", "RUNNING", "None", "gpu01", "t1", "alice")
    slurm.listed["42"] = JobInfo("42", "RUNNING", "None", "gpu02", "t1", "bob")
    watcher = JobWatcher(database, as_client(slurm), settings=PortalSettings(), every=0.05)
    loop = asyncio.create_task(watcher.run_forever())
    try:
        await asyncio.sleep(0.3)
        assert (read(database, alice).state, read(database, bob).state) == ("RUNNING", "RUNNING")
        slurm.listed["41"] = JobInfo("41", "COMPLETED", "None", "gpu01", "t1", "alice")
        slurm.details["41"] = detail("41", "COMPLETED", 0)
        del slurm.listed["42"]
        slurm.details["42"] = detail("42", "CANCELLED", 0)
        await asyncio.sleep(0.3)
    finally:
        loop.cancel()
    assert (read(database, alice).state, read(database, bob).state) == ("COMPLETED", "CANCELLED")


async def test_look_now_waits_for_a_step_that_began_after_it(database: db.Database) -> None:
    """A cancel's answer says what Slurm says after the cancel, not what an earlier step read."""
    slurm = FakeSlurm()
    job = record(database, "45")
    slurm.listed["45"] = JobInfo("45", "RUNNING", "None", "gpu01", "t1", "alice")
    watcher = JobWatcher(database, as_client(slurm), settings=PortalSettings(), every=60)
    loop = asyncio.create_task(watcher.run_forever())
    try:
        await asyncio.sleep(0.1)  # the first step has run; the next is a minute away
        slurm.listed["45"] = JobInfo("45", "CANCELLED", "None", "gpu01", "t1", "alice")
        slurm.details["45"] = detail("45", "CANCELLED", 0)
        await asyncio.wait_for(watcher.look_now(), 5)
    finally:
        loop.cancel()
    assert read(database, job).state == "CANCELLED"


async def test_a_submission_sbatch_never_answered_is_settled_by_its_tag(
    database: db.Database,
) -> None:
    slurm = FakeSlurm()
    settings = PortalSettings(slurm_timeout=0.01)  # settle after 0.03 s
    sent = record(database, "", state="SUBMITTING")
    lost = record(database, "", state="SUBMITTING")
    tag = record_tag(read(database, sent), settings)
    slurm.listed["51"] = JobInfo("51", "PENDING", "Resources", "", "N/A", "alice", comment=tag)
    watcher = watcher_of(database, slurm, settings)
    await asyncio.sleep(0.05)
    slurm.fail = True  # Slurm still silent: nothing is decided
    await watcher.step()
    assert (read(database, sent).state, read(database, lost).state) == ("SUBMITTING",) * 2
    slurm.fail = False
    await watcher.step()
    assert (read(database, sent).slurm_job_id, read(database, sent).state) == ("51", "PENDING")
    assert (read(database, lost).slurm_job_id, read(database, lost).state) == ("", "NOT_SUBMITTED")


async def test_a_submission_still_in_flight_is_left_alone(database: db.Database) -> None:
    in_flight = record(database, "", state="SUBMITTING")
    await watcher_of(database, FakeSlurm()).step()
    assert read(database, in_flight).state == "SUBMITTING"


async def test_a_session_that_ended_before_it_was_seen_gets_its_times(
    database: db.Database,
) -> None:
    slurm = FakeSlurm()
    tag = str(session_tag(hub="local", user="alice", server=""))
    ended = JobDetail(
        "61", "alice", "CANCELLED", "", 0, 15, "gpu01",
        "2026-11-23T07:59:58", "2026-11-23T08:00:00", "2026-11-23T08:00:09",
    )  # fmt: skip
    slurm.listed["61"] = JobInfo("61", "CANCELLED", "", "gpu01", "t", "alice", comment=tag)
    slurm.listed["62"] = JobInfo("62", "RUNNING", "", "gpu01", "t", "alice", comment=tag)
    slurm.details["61"] = ended
    assert await watcher_of(database, slurm).step() == 2
    with database.sessions() as session:
        records = {r.slurm_job_id: r for r in session.scalars(select(JobRecord))}
    # Only the ended one is asked of scontrol: squeue's line says the running one's state.
    assert slurm.scontrol_asked == ["61"]
    assert (records["61"].ended_at, records["61"].exit_code) == ("2026-11-23T08:00:09", 0)
    assert (records["62"].state, records["62"].ended_at) == ("RUNNING", "")


async def test_the_loop_goes_on_after_a_database_error(database: db.Database) -> None:
    slurm = FakeSlurm()
    tag = str(session_tag(hub="local", user="alice", server=""))
    slurm.listed["71"] = JobInfo("71", "RUNNING", "", "gpu01", "t", "alice", comment=tag)
    real = database.sessions
    calls: list[int] = []

    def flaky() -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("SELECT", {}, Exception("database is locked"))
        return real()

    database.sessions = flaky  # type: ignore[method-assign]
    watcher = JobWatcher(database, as_client(slurm), settings=PortalSettings(), every=0.01)
    loop = asyncio.create_task(watcher.run_forever())

    def recorded() -> list[str | None]:
        with real() as session:
            return [r.slurm_job_id for r in session.scalars(select(JobRecord))]

    # Until the record is there (a count of calls said "done" while a step was still between
    # its reading and its commit: the clean-clone run of 2026-11-28 failed so), 5 s at most.
    for _ in range(500):
        if recorded():
            break
        await asyncio.sleep(0.01)
    loop.cancel()
    assert len(calls) >= 2  # the failed step, then the loop went on
    assert recorded() == ["71"]


def test_an_extended_sessions_record_takes_slurms_new_time_limit(database: db.Database) -> None:
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
    apply_detail(row, detail("8:30:00"))
    assert row.request["time_limit"] == "08:30:00"
    # A batch job's request stays as it was sent.
    batch = read(database, record(database, "8", "RUNNING"))
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


async def test_a_users_own_jobs_are_kept_while_they_have_a_session(database: db.Database) -> None:
    """Issue 54, item 4: `sbatch` from a session's terminal was on neither the Jobs page nor
    `gpuportal jobs list`, though Dask's workers were."""
    slurm = FakeSlurm()
    tag = str(session_tag(hub="local", user="alice", server=""))
    slurm.listed["81"] = JobInfo("81", "RUNNING", "", "gpu01", "t", "alice", comment=tag)
    watcher = watcher_of(database, slurm)
    assert await watcher.step() == 1  # the session is recorded first
    slurm.listed["82"] = JobInfo("82", "PENDING", "Resources", "", "t", "alice")
    slurm.listed["83"] = JobInfo("83", "RUNNING", "", "gpu02", "t", "bob")  # bob has no session
    assert await watcher.step() == 1
    with database.sessions() as session:
        own = session.scalars(select(JobRecord).where(JobRecord.slurm_job_id == "82")).one()
        assert (own.user, own.name, own.launcher, own.state) == (
            "alice",
            "name of 82",
            "sbatch",
            "PENDING",
        )
        assert session.scalars(select(JobRecord).where(JobRecord.slurm_job_id == "83")).all() == []
    # Followed as any job: it starts, then ends.
    slurm.listed["82"] = JobInfo("82", "RUNNING", "", "gpu01", "t", "alice")
    assert await watcher.step() == 0
    with database.sessions() as session:
        own = session.scalars(select(JobRecord).where(JobRecord.slurm_job_id == "82")).one()
        assert (own.state, own.nodes) == ("RUNNING", "gpu01")
