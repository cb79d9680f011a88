"""`gpuportal jobs show N` of a notebook job names its executed notebook and HTML."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from gpuportal_cli import main

RUN = "/home/alice/jobs/train-runs/2026-11-29_14-05-12_job4242"
JOB = {
    "id": 7, "name": "train", "launcher": "notebook", "slurm_job_id": "4242",
    "state": "COMPLETED", "final": True, "waiting_because": "", "nodes": "gpu01",
    "exit_code": 0, "tasks": {}, "output_tail": ["[notebook job] done"],
    "outputs": {
        "folder": RUN, "notebook": f"{RUN}/train.ipynb", "html": f"{RUN}/train.html",
        "lab_path": "jobs/train-runs/2026-11-29_14-05-12_job4242/train.ipynb",
    },
}  # fmt: skip


class Portal:
    def portal(self, method: str, path: str, **_: Any) -> Any:
        assert method == "GET"
        return {"summary": "ran 2 s of 1 h"} if path == "/jobs/7/use" else JOB


def test_a_notebook_jobs_outputs_are_shown(monkeypatch: Any) -> None:
    monkeypatch.setattr(main.Context, "client", property(lambda self: Portal()))
    shown = CliRunner().invoke(main.cli, ["--url", "https://hub", "jobs", "show", "7"])
    assert shown.exit_code == 0, shown.output
    assert f"executed notebook: {RUN}/train.ipynb\nhtml: {RUN}/train.html\n" in shown.output
    assert "use: ran 2 s of 1 h" in shown.output
