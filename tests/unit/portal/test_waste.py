"""The week's GPU waste by user and group (gpuportal_portal.waste): held against used where
the GPUs were measured, the rest held and not measured; ranked by waste. And the home page's
last session (GET /api/usage/last-session): the last to end."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal import db
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.models import JobRecord, utcnow
from gpuportal_portal.waste import by_kind, tally, week_waste
from tests.unit.portal.conftest import API


def _use(gpu_hours: float, used: float | None, account: str = "ds", **more: Any) -> dict[str, Any]:
    return {"gpu_hours": gpu_hours, "gpu_hours_used": used, "account": account, **more}


def test_held_against_used_ranked_by_waste() -> None:
    users, groups = tally(
        [
            ("alice", _use(8.0, 1.0, cores=32, elapsed_s=7200, cpu_s=7200.0)),  # 7 wasted
            ("alice", _use(2.0, None)),  # a batch job: held, not measured
            ("bob", _use(4.0, 3.0)),  # 1 wasted
            ("erin", _use(16.0, None, account="vision")),  # the most held, none measured
        ]
    )
    assert [u.who for u in users] == ["alice", "bob", "erin"]
    alice = users[0].as_dict()
    assert alice == {
        "who": "alice", "jobs": 2, "gpu_hours": 10.0, "gpu_hours_measured": 8.0,
        "gpu_hours_used": 1.0, "gpu_hours_wasted": 7.0, "gpu_used_percent": 12.5,
        "cpu_percent": 3.1,  # 2 core-hours of 32 cores x 2 h, in the job that gathered CPU use
    }  # fmt: skip
    assert users[2].used_percent is None and users[2].wasted == 0
    assert [(g.who, g.held, g.wasted) for g in groups] == [("ds", 14.0, 8.0), ("vision", 16.0, 0.0)]


def test_the_waste_per_gpu_kind_where_the_accounting_tracks_kinds() -> None:
    uses = [
        ("alice", _use(8.0, 1.0, gpu_type="h100")),  # 7 wasted of the H100s
        ("bob", _use(4.0, 3.0, gpu_type="a100")),
        ("carol", _use(1.0, None, gpu_type="")),  # an older record: its kind not tracked
        ("dave", _use(0.0, None)),  # no GPU at all
    ]
    kinds = by_kind(uses)
    assert [(k.who, k.held, k.wasted) for k in kinds] == [
        ("h100", 8.0, 7.0),
        ("a100", 4.0, 1.0),
        ("not tracked", 1.0, 0.0),
    ]
    assert by_kind([("carol", _use(1.0, None))]) == []  # no kind tracked: no table


def test_the_week_from_the_records(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    database = db.Database(url)
    now = utcnow()

    def record(job: str, use: dict[str, Any] | None, days_ago: float) -> JobRecord:
        ended = (now - timedelta(days=days_ago)).astimezone()
        return JobRecord(
            user="alice", name=job, launcher="jupyterlab", request={}, script="", output="",
            slurm_job_id=job, state="COMPLETED", use=use,
            ended_at=ended.strftime("%Y-%m-%dT%H:%M:%S"),
            updated_at=now,  # the watcher's last look: not when it ended
        )  # fmt: skip

    with database.sessions() as session:
        session.add_all([
            record("1", _use(4.0, 1.0), 1),
            record("2", _use(4.0, 1.0), 8),  # last week's
            record("3", None, 1),  # use not read yet
            record("4", {"recorded": False}, 1),  # Slurm's accounting has none
        ])  # fmt: skip
        session.commit()
        week = week_waste(session, now)
    assert [(u.who, u.jobs, u.held) for u in week.users] == [("alice", 1, 4.0)]
    assert week.since == pytest.approx(now - timedelta(days=7), abs=timedelta(seconds=1))


def test_the_last_session_is_the_last_to_end_not_the_last_looked_at(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]
    now = utcnow()
    use = {
        **_use(1.0, None), "elapsed_s": 60, "limit_s": 3600, "cores": 8, "cpu_s": None,
        "cpu_percent": None, "time_percent": 1.7, "requested_bytes": None,
        "max_rss_bytes": None, "memory_percent": None, "summary": "Ran 1 min of its 1 h.",
    }  # fmt: skip
    with test_client.app.state.database.sessions() as session:  # type: ignore[attr-defined]
        for job, ended, looked in (
            ("7", "2026-11-25T10:00:00", 0),
            ("8", "2026-11-25T09:00:00", 1),
        ):
            session.add(
                JobRecord(
                    user="bob", name=f"s{job}", launcher="jupyterlab", request={}, script="",
                    output="", slurm_job_id=job, state="COMPLETED", use=use, ended_at=ended,
                    updated_at=now + timedelta(minutes=looked),
                )
            )  # fmt: skip
        session.commit()
    answer = test_client.get(f"{API}/usage/last-session", headers={"Authorization": "token full"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["slurm_job_id"] == "7"
    other = test_client.get(
        f"{API}/usage/last-session?user=alice", headers={"Authorization": "token full"}
    )
    assert other.status_code == 403


def test_the_last_session_to_end_is_the_last_even_before_its_use_is_read(
    client: tuple[TestClient, HubIdentity],
) -> None:
    """A session that ended after another is "the last" at once, its use still being read;
    the earlier one (use known) no longer shows for minutes (issue 34, item 4)."""
    test_client = client[0]
    with test_client.app.state.database.sessions() as session:  # type: ignore[attr-defined]
        for job, ended, use in (
            ("5", "2026-11-25T09:00:00", _use(1.0, None)),
            ("6", "2026-11-25T10:00:00", None),
            ("4", "2026-11-25T08:00:00", {"recorded": False}),
        ):
            session.add(
                JobRecord(
                    user="bob", name=f"s{job}", launcher="jupyterlab", request={}, script="",
                    output="", slurm_job_id=job, state="COMPLETED", use=use, ended_at=ended,
                )
            )  # fmt: skip
        session.commit()
    answer = test_client.get(f"{API}/usage/last-session", headers={"Authorization": "token full"})
    assert answer.status_code == 200, answer.text
    last = answer.json()
    assert (last["slurm_job_id"], last["use"], last["recorded"]) == ("6", None, True)
