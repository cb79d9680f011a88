"""What ended jobs used is read once, after they have settled, and kept on their records
(gpuportal_portal.use_collector); a session's GPU readings come from the file it left."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_core.efficiency import parse_use
from gpuportal_portal import db, use_collector
from gpuportal_portal.models import JobRecord, utcnow
from gpuportal_portal.session_history import SESSION_LAUNCHER

SACCT = {
    # A 2-GPU session: an hour of 8 hours.
    "41": "41|COMPLETED|01:00:00|08:00:00|00:30:00|16|96G||cpu=16,gres/gpu=2,mem=96G|ds\n"
    "41.batch|COMPLETED|01:00:00||00:30:00|16||2G|cpu=16|ds\n",
    # A batch job on one GPU.
    "42": "42|COMPLETED|00:30:00|01:00:00|00:05:00|8|48G||cpu=8,gres/gpu=1,mem=48G|ds\n"
    "42.0|COMPLETED|00:30:00||00:05:00|8||1G|cpu=8|ds\n",
    # A notebook job on one GPU: it read its GPU as a session does.
    "49": "49|COMPLETED|00:30:00|01:00:00|00:05:00|8|48G||cpu=8,gres/gpu=1,mem=48G|ds\n"
    "49.0|COMPLETED|00:30:00||00:05:00|8||1G|cpu=8|ds\n",
    # No CPU and memory figures (yet?): kept only once the job has been over for a while.
    "47": "47|COMPLETED|00:30:00|01:00:00|00:00:00|8|48G||cpu=8,mem=48G|ds\n",
    "48": "48|COMPLETED|00:30:00|01:00:00|00:00:00|8|48G||cpu=8,mem=48G|ds\n",
}
READINGS = {
    "measured": True,
    "samples": 60,
    "note": "",
    "gpus": [
        {"mean_percent": 40.0, "peak_percent": 90, "memory_peak_mib": 20000,
         "memory_total_mib": 81559},
        {"mean_percent": 0.0, "peak_percent": 0, "memory_peak_mib": 3,
         "memory_total_mib": 81559},
    ],
}  # fmt: skip


class Accounting(SlurmClient):
    """sacct's answers, and the session's readings file read as this process's user (the
    boundary is sudo, not dd)."""

    def __init__(self, home: Path) -> None:
        super().__init__(run_as=(), timeout=10)
        self.home = home
        self.asked: list[str] = []

    async def use(self, job_id: str) -> Any:
        self.asked.append(job_id)
        return parse_use(SACCT[job_id]) if job_id in SACCT else None


def _record(job_id: str, launcher: str, *, state: str, ended_ago: float) -> JobRecord:
    return JobRecord(
        user="alice", name=job_id, launcher=launcher, request={}, script="", output="",
        slurm_job_id=job_id, state=state, updated_at=utcnow() - timedelta(seconds=ended_ago),
    )  # fmt: skip


def test_ended_jobs_use_is_read_once_with_the_sessions_gpu_readings(
    tmp_path: Path, monkeypatch: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    database = db.Database(url)
    readings = tmp_path / "41.json"
    readings.write_text(json.dumps(READINGS))
    notebook = {**READINGS, "gpus": READINGS["gpus"][:1]}
    (tmp_path / "49.json").write_text(json.dumps(notebook))
    monkeypatch.setattr(
        use_collector, "summary_path", lambda home, job_id: tmp_path / f"{job_id}.json"
    )
    monkeypatch.setattr(use_collector.pwd, "getpwnam", lambda user: type("P", (), {"pw_dir": "/"}))
    with database.sessions() as session:
        session.add_all([
            _record("41", SESSION_LAUNCHER, state="COMPLETED", ended_ago=60),
            _record("42", "torchrun", state="COMPLETED", ended_ago=60),
            _record("43", "torchrun", state="RUNNING", ended_ago=60),  # not ended
            _record("44", "torchrun", state="COMPLETED", ended_ago=1),  # slurmdbd may be behind
            _record("45", "torchrun", state="COMPLETED", ended_ago=60),  # no record yet
            _record("46", "torchrun", state="COMPLETED", ended_ago=7200),  # nor ever
            _record("47", "torchrun", state="COMPLETED", ended_ago=60),
            _record("48", "torchrun", state="COMPLETED", ended_ago=600),
            _record("49", "notebook", state="COMPLETED", ended_ago=60),
        ])  # fmt: skip
        session.commit()
    accounting = Accounting(tmp_path)
    assert asyncio.run(use_collector.collect(database, accounting)) == 5
    assert sorted(accounting.asked) == ["41", "42", "45", "46", "47", "48", "49"]
    with database.sessions() as session:
        use = {r.slurm_job_id: r.use for r in session.query(JobRecord)}
    session_use = use["41"]
    assert session_use is not None
    assert (session_use["gpus"], session_use["gpu_hours"], session_use["account"]) == (2, 2.0, "ds")
    assert session_use["gpu_hours_used"] == 0.4  # 2 GPU-hours held, 20 % busy on average
    assert session_use["summary"].endswith(
        "Its 2 GPUs: 20 % busy on average (peak 90 %), at most 20 GB of their 159 GB."
    )
    assert readings.exists()  # only read: the session's next start removes old ones
    assert use["42"] is not None and use["42"]["gpu"] == {
        "measured": False,
        "note": "only sessions and notebook jobs read their GPUs",
    }
    assert use["42"]["gpu_hours_used"] is None
    notebook_use = use["49"]
    assert notebook_use is not None and notebook_use["gpu"] == notebook
    assert notebook_use["gpu_hours_used"] == 0.2  # half an hour on one GPU, 40 % busy
    assert use["43"] is None and use["44"] is None and use["45"] is None
    assert use["46"] == {"recorded": False}
    assert use["47"] is None  # slurmdbd may not have its steps yet
    assert use["48"] is not None and use["48"]["cpu_percent"] is None  # a cluster gathering none
    assert use["48"]["gpu"] == {"measured": False, "note": "it asked for no GPU"}
    # Kept: the next look asks Slurm about the one it is still waiting for only.
    accounting.asked.clear()
    asyncio.run(use_collector.collect(database, accounting))
    assert sorted(accounting.asked) == ["45", "47"]


def test_a_session_that_left_no_readings_says_so(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(use_collector, "summary_path", lambda home, job_id: tmp_path / "none.json")
    monkeypatch.setattr(use_collector.pwd, "getpwnam", lambda user: type("P", (), {"pw_dir": "/"}))
    gpu = asyncio.run(use_collector.gpu_readings(Accounting(tmp_path), "alice", "41"))
    assert gpu == {
        "measured": False,
        "note": "it left no GPU readings (it ended before its first)",
    }
