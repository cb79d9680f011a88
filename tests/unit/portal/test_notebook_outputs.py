"""A notebook job's outputs for the Jobs page (gpuportal_portal.notebook_outputs): found in the
runner's first line of output, believed only where the runner makes this job's folder, kept once
the job has ended; its HTML shown under a policy that runs and loads nothing."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_portal import db, notebook_outputs
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.models import JobRecord, utcnow

from .conftest import API

RUN = "2026-11-29_14-05-12_job4242"


def AsItself() -> SlurmClient:
    """Runs the reads as this process's user: the boundary is sudo, not dd or test."""
    return SlurmClient(run_as=(), timeout=10)


def _said(notebook: str, folder: str) -> str:
    return f"[notebook job] running {notebook} with kernel python3; outputs in {folder}\n"


def test_the_folder_is_believed_only_where_the_runner_makes_this_jobs() -> None:
    notebook = "/home/alice/jobs/train.ipynb"
    mine = f"/home/alice/jobs/train-runs/{RUN}"
    text = "loading modules\n" + _said(notebook, mine) + "[notebook job] done\n"
    assert notebook_outputs.folder_in(text, notebook, "4242") == mine
    # Another job's run, a folder elsewhere (a cell may print anything), a name not a run's.
    assert notebook_outputs.folder_in(text, notebook, "4243") is None
    elsewhere = _said(notebook, f"/etc/train-runs/{RUN}")
    assert notebook_outputs.folder_in(elsewhere, notebook, "4242") is None
    odd = _said(notebook, "/home/alice/jobs/train-runs/../../../etc")
    assert notebook_outputs.folder_in(odd, notebook, "4242") is None
    assert notebook_outputs.folder_in("x " + _said(notebook, mine), notebook, "4242") is None


def test_the_lab_path_is_from_the_home_and_empty_outside_it() -> None:
    inside = notebook_outputs.outputs_of(
        f"/home/alice/jobs/train-runs/{RUN}", "/home/alice/jobs/train.ipynb",
        home="/home/alice", has_html=True,
    )  # fmt: skip
    assert inside == {
        "folder": f"/home/alice/jobs/train-runs/{RUN}",
        "notebook": f"/home/alice/jobs/train-runs/{RUN}/train.ipynb",
        "html": f"/home/alice/jobs/train-runs/{RUN}/train.html",
        "lab_path": f"jobs/train-runs/{RUN}/train.ipynb",
    }
    outside = notebook_outputs.outputs_of(
        f"/projects/vision/train-runs/{RUN}", "/projects/vision/train.ipynb",
        home="/home/alice", has_html=False,
    )  # fmt: skip
    assert (outside["lab_path"], outside["html"]) == ("", "")


def _ended_notebook_job(tmp_path: Path, job_id: str, log: str, state: str) -> JobRecord:
    output = tmp_path / f"train-{job_id}.out"
    output.write_text(log)
    return JobRecord(
        user="alice", name="train", launcher="notebook",
        request={"script": str(tmp_path / "train.ipynb")}, script="", output=str(output),
        slurm_job_id=job_id, state=state, started_at="2026-11-29T14:05:10",
        updated_at=utcnow() - timedelta(seconds=30),
    )  # fmt: skip


def test_an_ended_notebook_jobs_outputs_are_looked_for_once_and_kept(
    tmp_path: Path, monkeypatch: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db.upgrade(url)
    database = db.Database(url)
    monkeypatch.setattr(
        notebook_outputs.pwd, "getpwnam", lambda user: type("P", (), {"pw_dir": str(tmp_path)})
    )
    notebook = str(tmp_path / "train.ipynb")
    done = tmp_path / "train-runs" / RUN
    done.mkdir(parents=True)
    (done / "train.html").write_text("<html>ran</html>")
    stopped = tmp_path / "train-runs" / RUN.replace("4242", "4243")
    stopped.mkdir()
    with database.sessions() as session:
        session.add_all([
            _ended_notebook_job(tmp_path, "4242", _said(notebook, str(done)), "COMPLETED"),
            # Cancelled mid-run: an executed notebook so far, no HTML.
            _ended_notebook_job(tmp_path, "4243", _said(notebook, str(stopped)), "CANCELLED"),
            # Its notebook could not be run at all: no folder.
            _ended_notebook_job(tmp_path, "4244", "[notebook job] cannot run it: no\n", "FAILED"),
            # Still running: its page looks each time, the record keeps nothing yet.
            _ended_notebook_job(tmp_path, "4245", _said(notebook, str(done)), "RUNNING"),
        ])  # fmt: skip
        session.commit()
    assert asyncio.run(notebook_outputs.collect(database, AsItself())) == 2
    with database.sessions() as session:
        kept = {r.slurm_job_id: r.outputs for r in session.query(JobRecord)}
    assert kept["4242"] == {
        "folder": str(done),
        "notebook": str(done / "train.ipynb"),
        "html": str(done / "train.html"),
        "lab_path": f"train-runs/{RUN}/train.ipynb",
    }
    assert kept["4243"] is not None and kept["4243"]["html"] == ""
    assert kept["4244"] == {}
    assert kept["4245"] is None
    # Looked for once: nothing is due any more.
    assert notebook_outputs.due_records(database) == []


def test_the_report_is_served_to_run_and_load_nothing(
    client: tuple[TestClient, HubIdentity], tmp_path: Path
) -> None:
    test_client, _ = client
    html = tmp_path / "train.html"
    html.write_text("<html><script>alert(1)</script><p>epoch 3: loss 0.12</p></html>")
    app: Any = test_client.app
    app.state.slurm = AsItself()
    with app.state.database.sessions() as session:
        for job_id, outputs in (("51", {"html": str(html)}), ("52", None)):
            session.add(
                JobRecord(
                    user="bob", name="train", launcher="notebook" if outputs else "srun",
                    request={}, script="", output="", slurm_job_id=job_id, state="COMPLETED",
                    outputs=outputs,
                )
            )  # fmt: skip
        session.commit()
    bob = {"Authorization": "token full"}
    shown = test_client.get(f"{API}/jobs/1/report", headers=bob)
    assert shown.status_code == 200
    assert "epoch 3: loss 0.12" in shown.text
    policy = shown.headers["content-security-policy"]
    assert policy.startswith("sandbox;") and "default-src 'none'" in policy
    assert "script-src" not in policy
    other = test_client.get(f"{API}/jobs/2/report", headers=bob)
    assert other.status_code == 404 and "not a notebook job" in other.json()["detail"]
    html.unlink()
    gone = test_client.get(f"{API}/jobs/1/report", headers=bob)
    assert gone.status_code == 404 and "not there any more" in gone.json()["detail"]
    # Someone else's: carol's token is an admin's, alice has none; a stranger's is a 401.
    assert (
        test_client.get(f"{API}/jobs/1/report", headers={"Authorization": "token x"}).status_code
        == 401
    )
