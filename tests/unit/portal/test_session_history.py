"""Sessions found in squeue by their tag join the job history once each
(gpuportal_portal.session_history)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from gpuportal_core.jobs import JobInfo
from gpuportal_core.tags import batch_tag, dask_tag, session_tag
from gpuportal_portal import db
from gpuportal_portal.models import JobRecord
from gpuportal_portal.session_history import DASK_LAUNCHER, SESSION_LAUNCHER, record_sessions


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
