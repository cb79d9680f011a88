"""Notebook jobs (the `notebook` launcher) through the portal's jobs API on the local cluster:
the notebook runs headless in a Slurm job as its owner, its executed copy and HTML land in a
dated folder beside it in the home, and a notebook whose cell raises ends the job failed."""

from __future__ import annotations

import pwd
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import requests

from tests.integration.conftest import Hub
from tests.integration.test_multinode_jobs import JOBS, alice_token, run_to_the_end

pytestmark = pytest.mark.integration
__all__ = ["alice_token"]  # the fixture, used by name below

JOBS_DIR = Path(pwd.getpwnam("alice").pw_dir, "jobs")


def _job(name: str, notebook: str, *parameters: str) -> dict[str, object]:
    """A notebook job on 1 GPU for one of tests/integration/jobs_data's notebooks."""
    return {
        "name": name,
        "launcher": "notebook",
        "nodes": 1,
        "gpus_per_node": 1,
        "runtime": "00:10:00",
        "script": f"{JOBS_DIR}/{notebook}",
        "args": list(parameters),
    }


def _runs(stem: str) -> Path:
    runs = JOBS_DIR / f"{stem}-runs"
    shutil.rmtree(runs, ignore_errors=True)
    return runs


def test_a_parameterised_notebook_runs_on_a_gpu_and_its_outputs_land_beside_it(
    hub: Hub, alice_token: str
) -> None:
    runs = _runs("train_params")
    _, detail = run_to_the_end(
        hub,
        alice_token,
        _job("nb-params", "train_params.ipynb", "lr=0.5", "epochs=3", "run_name=overnight"),
    )
    assert (detail["state"], detail["exit_code"]) == ("COMPLETED", 0), detail["output_tail"]
    (folder,) = runs.iterdir()
    assert folder.name.endswith(f"_job{detail['slurm_job_id']}")
    assert folder.stat().st_uid == pwd.getpwnam("alice").pw_uid  # written as alice
    executed = nbformat.read(str(folder / "train_params.ipynb"), as_version=4)
    printed = executed.cells[2].outputs[0]["text"]
    assert printed.startswith("run overnight: lr=0.5 epochs=3\non gpu0")
    # One GPU, the job's (which of the node's depends on what else runs there).
    assert re.search(rf"in job {detail['slurm_job_id']}\nGPUs: \d\n", printed), printed
    assert executed.cells[3].outputs[0]["data"]["text/plain"] == "[0.5, 0.25, 0.1667]"
    assert (folder / "train_params.html").stat().st_size > 0
    assert any(f"outputs in {folder}" in line for line in detail["output_tail"])


def test_a_notebook_whose_cell_raises_ends_failed_with_its_traceback(
    hub: Hub, alice_token: str
) -> None:
    runs = _runs("diverges")
    _, detail = run_to_the_end(hub, alice_token, _job("nb-fails", "diverges.ipynb"))
    assert (detail["state"], detail["exit_code"]) == ("FAILED", 1), detail["output_tail"]
    (folder,) = runs.iterdir()
    executed = nbformat.read(str(folder / "diverges.ipynb"), as_version=4)
    (error,) = executed.cells[1].outputs
    assert (error["ename"], error["evalue"]) == ("RuntimeError", "loss diverged at step 42")
    assert not executed.cells[2].outputs
    assert any("a cell raised RuntimeError" in line for line in detail["output_tail"])


def test_parameters_a_notebook_cannot_take_are_refused_at_their_field(
    hub: Hub, alice_token: str
) -> None:
    answer = requests.post(
        f"{hub.url}{JOBS}",
        headers={"Authorization": f"token {alice_token}"},
        json=_job("nb-bad", "train_params.ipynb", "lr=[0.1,"),
        timeout=60,
    )
    assert answer.status_code == 422, answer.text
    (problem,) = answer.json()["detail"]
    assert problem["loc"][-1] == "args"
    assert "is not a JSON or YAML value" in problem["msg"]
