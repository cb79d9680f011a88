"""Sessions found in squeue by their tag join the job history once each
(gpuportal_portal.session_history)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from gpuportal_core.jobs import JobDetail, JobInfo
from gpuportal_core.tags import batch_tag, dask_tag, session_tag
from gpuportal_portal import db
from gpuportal_portal.models import JobRecord
from gpuportal_portal.session_history import (
    DASK_LAUNCHER,
    SESSION_LAUNCHER,
    record_new_sessions,
    record_sessions,
    scan_forever,
)


def job(
    job_id: str, state: str, comment: str, start: str = "2026-11-23T08:00:00", user: str = ""
) -> JobInfo:
    owner = user or comment.split(":")[3] if comment.startswith("gpuportal:") else "alice"
    return JobInfo(job_id, state, "Resources", "gpu01", start, owner, "8:00:00", "gpu01", comment)


def test_each_session_of_this_hub_is_recorded_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    database = db.Database(url)
    jobs = [
        job("11", "RUNNING", str(session_tag(hub="local", user="alice", server=""))),
        job("12", "PENDING", str(session_tag(hub="local", user="bob", server="training"))),
        job("13", "RUNNING", str(session_tag(hub="other-hub", user="alice", server=""))),
        job("14", "RUNNING", str(batch_tag(hub="local", user="alice", key="1.2"))),
        job("15", "RUNNING", "somebody's own comment"),
        job("16", "RUNNING", str(dask_tag(hub="local", user="alice", server="training"))),
        # A tag naming somebody else, on alice's own job: not recorded for either.
        job("17", "RUNNING", str(dask_tag(hub="local", user="bob", server="")), user="alice"),
    ]
    with database.sessions() as session:
        assert len(record_sessions(session, jobs, hub_id="local")) == 3
        assert record_sessions(session, jobs, hub_id="local") == []  # seen already
        records = {r.slurm_job_id: r for r in session.scalars(select(JobRecord))}
    assert set(records) == {"11", "12", "16"}
    worker = records["16"]
    assert (worker.user, worker.name, worker.launcher) == (
        "alice",
        "Dask worker of session training",
        DASK_LAUNCHER,
    )
    alice, bob = records["11"], records["12"]
    assert (alice.user, alice.name, alice.launcher, alice.nodes) == (
        "alice",
        "default",
        SESSION_LAUNCHER,
        "gpu01",
    )
    assert alice.started_at == "2026-11-23T08:00:00" and alice.expected_start == ""
    # A waiting session: why, and when Slurm expects it, no node yet.
    assert (bob.name, bob.state, bob.reason, bob.nodes) == ("training", "PENDING", "Resources", "")
    assert bob.expected_start == "2026-11-23T08:00:00" and bob.started_at == ""


class OneLook:
    """Slurm as the scan sees it: squeue's tagged jobs, and scontrol for one that ended."""

    def __init__(self, jobs: list[JobInfo], details: dict[str, JobDetail]) -> None:
        self.jobs, self.details, self.asked = jobs, details, []

    async def tagged(self, *, alive_only: bool) -> list[JobInfo]:
        assert alive_only is False  # a session that ended already must be seen too
        return self.jobs

    async def job_detail(self, job_id: str) -> JobDetail | None:
        self.asked.append(job_id)
        return self.details.get(job_id)


def test_a_session_that_ended_before_it_was_seen_gets_its_times(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    database = db.Database(url)
    tag = str(session_tag(hub="local", user="alice", server=""))
    ended = JobDetail(
        "21", "alice", "CANCELLED", "", 0, 15, "gpu01",
        "2026-11-23T07:59:58", "2026-11-23T08:00:00", "2026-11-23T08:00:09",
    )  # fmt: skip
    slurm = OneLook([job("21", "CANCELLED", tag), job("22", "RUNNING", tag)], {"21": ended})
    assert asyncio.run(record_new_sessions(database, slurm, hub_id="local")) == 2  # type: ignore[arg-type]
    with database.sessions() as session:
        records = {r.slurm_job_id: r for r in session.scalars(select(JobRecord))}
    # Only the ended one is asked about: the job watcher follows the running one.
    assert slurm.asked == ["21"]
    assert (records["21"].ended_at, records["21"].exit_code) == ("2026-11-23T08:00:09", 0)
    assert records["22"].ended_at == ""


def test_the_background_look_goes_on_after_a_database_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    database = db.Database(url)
    tag = str(session_tag(hub="local", user="alice", server=""))
    slurm = OneLook([job("31", "RUNNING", tag)], {})
    real = database.sessions
    calls: list[int] = []

    def flaky() -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("SELECT", {}, Exception("database is locked"))
        return real()

    database.sessions = flaky  # type: ignore[method-assign]

    async def run() -> None:
        task = asyncio.create_task(
            scan_forever(database, slurm, hub_id="local", every=0.01)  # type: ignore[arg-type]
        )
        for _ in range(200):
            if len(calls) >= 2:
                break
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(run())
    with real() as session:
        assert [r.slurm_job_id for r in session.scalars(select(JobRecord))] == ["31"]
