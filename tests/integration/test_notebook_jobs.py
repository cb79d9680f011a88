"""Notebook jobs (the `notebook` launcher) through the portal's jobs API on the local cluster:
the notebook runs headless in a Slurm job as its owner, its executed copy and HTML land in a
dated folder beside it in the home, and a notebook whose cell raises ends the job failed."""

from __future__ import annotations

import pwd
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
import requests

from gpuportal_core.jobs import PENDING_REASONS
from tests.integration.conftest import Hub
from tests.integration.faults.helpers import fill_gpus
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_live_profiles import log_in
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


def _get(hub: Hub, path: str, headers: dict[str, str]) -> Any:
    answer = requests.get(f"{hub.url}{path}", headers=headers, timeout=30)
    return answer.json() if answer.ok else {}


def _once(ask: Callable[[], Any], done: Callable[[Any], Any], deadline_s: float = 150) -> Any:
    """Ask until `done` says the answer is there: the portal looks after a job's end."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        answer = ask()
        if answer and done(answer):
            return answer
        time.sleep(1)
    raise AssertionError(f"not there after {deadline_s} s: {answer}")


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
    # One product: the portal's Jobs API names the run's outputs, shows its HTML (running
    # nothing of it), and has what it used, as for any job.
    mine = {"Authorization": f"token {alice_token}"}
    # Kept on the record once the job has ended: the list has it too.
    listed = _once(
        lambda: _get(hub, f"{JOBS}?mine=true", mine),
        lambda jobs: next(j for j in jobs if j["id"] == detail["id"])["outputs"],
    )
    job = next(j for j in listed if j["id"] == detail["id"])
    assert job["outputs"] == {
        "folder": str(folder),
        "notebook": str(folder / "train_params.ipynb"),
        "html": str(folder / "train_params.html"),
        "lab_path": f"jobs/train_params-runs/{folder.name}/train_params.ipynb",
    }
    assert _get(hub, f"{JOBS}/{detail['id']}", mine)["outputs"] == job["outputs"]
    report = requests.get(f"{hub.url}{JOBS}/{detail['id']}/report", headers=mine, timeout=30)
    assert report.status_code == 200 and "run overnight: lr=0.5 epochs=3" in report.text
    assert report.headers["content-security-policy"].startswith("sandbox;")
    assert "cdnjs" not in report.text
    use = _once(lambda: _get(hub, f"{JOBS}/{detail['id']}/use", mine), lambda u: "gpus" in u)
    assert use["gpus"] == 1 and use["summary"]
    # It read its GPU as a session does: here the nodes' GPUs are Slurm's fake devices, so the
    # card says why it is not measured (a GPU machine's run has the figures).
    assert use["gpu"]["measured"] is False, use["gpu"]
    assert use["gpu"]["note"].startswith("nvidia-smi is not installed on gpu0"), use["gpu"]


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


def test_a_notebook_job_on_the_portals_jobs_page(
    hub: Hub, browser: Any, tmp_path: Path, alice_token: str
) -> None:
    """The Jobs page's form runs a notebook; its row says it is a notebook job and, once it has
    ended, opens its executed notebook in the lab and its HTML as a page."""
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    runs = _runs("train_params")
    page = log_in(browser, hub, "alice", "alice-demo", viewport={"width": 1400, "height": 900})
    page.goto(f"{hub.url}/services/portal/jobs")
    page.fill("#name", "nb-page")
    page.fill("#command", "hostname")
    page.select_option("#launcher", "notebook")
    # A notebook is a file on one node: the form turns to a script and 1 node by itself.
    assert page.is_checked("#what-script") and page.input_value("#nodes") == "1"
    page.fill("#gpus_per_node", "1")
    page.fill("#script", f"{JOBS_DIR}/train_params.ipynb")
    page.fill("#args", "lr=0.25\nrun_name=from-the-page")
    page.click("#submit")
    row = "#jobs tbody tr[data-job]:has-text('nb-page')"
    page.wait_for_selector(f"{row} td.gp-state:has-text('Completed')", timeout=120_000)
    assert "notebook job · 1 node \N{MULTIPLICATION SIGN} 1 GPU" in page.inner_text(row)
    report = page.wait_for_selector(f"{row} a:has-text('Report')", timeout=60_000)
    (folder_,) = runs.iterdir()
    opened = page.get_attribute(f"{row} a:has-text('Open notebook')", "href")
    assert opened == (
        f"/hub/user-redirect/lab/tree/jobs/train_params-runs/{folder_.name}/train_params.ipynb"
    )
    page.click(f"{row} button:has-text('Output')")
    page.wait_for_selector("#detail-outputs:has-text('Executed notebook')")
    assert str(folder_ / "train_params.ipynb") in page.inner_text("#detail-outputs")
    # The list and the open output, from the list's heading to the end of the output.
    top = page.locator("h2:has-text('Your jobs')").bounding_box()
    end = page.locator("#detail-box").bounding_box()
    assert top and end
    # Boxes are the viewport's, the clip the page's: add how far the page is scrolled.
    scrolled = page.evaluate("window.scrollY")
    top["y"] += scrolled
    end["y"] += scrolled
    height = end["y"] + end["height"] - top["y"] + 16
    clip = {"x": 0, "y": top["y"] - 16, "width": 1400, "height": height}
    page.screenshot(path=str(out / "notebook-jobs-portal-light.png"), full_page=True, clip=clip)
    with page.context.expect_page() as shown:
        report.click()
    html = shown.value
    html.wait_for_load_state()
    assert "run from-the-page: lr=0.25" in html.inner_text("body")
    html.screenshot(path=str(out / "notebook-jobs-report-light.png"))
    html.close()


def test_a_notebook_job_over_its_groups_gpu_limit_waits_with_a_sessions_words(
    hub: Hub, alice_token: str
) -> None:
    """Group ds may hold 6 GPUs at once: with 4 held, a 4-GPU notebook job waits for the
    group's limit (Slurm holds it) and says so in the words the waiting page has for a
    session, with its place in line, in the portal's API and in the list the lab shows."""
    held = fill_gpus("gpu01", gpus=4, user="alice")
    mine = {"Authorization": f"token {alice_token}"}
    body = {**_job("nb-held", "train_params.ipynb"), "gpus_per_node": 4}
    submitted = requests.post(f"{hub.url}{JOBS}", headers=mine, json=body, timeout=60)
    assert submitted.status_code == 201, submitted.text
    record = submitted.json()
    group = PENDING_REASONS["AssocGrpGRES"]
    assert group.startswith("your group is at its GPU limit")
    job = _once(
        lambda: _get(hub, f"{JOBS}/{record['id']}", mine),
        lambda j: j["reason"] == "AssocGrpGRES" and j["queue"],
        deadline_s=60,
    )
    assert job["waiting_because"] == group
    assert job["queue"].startswith(f"Job {record['slurm_job_id']} is queued: {group}. ")
    assert " waiting for partition gpu." in job["queue"], job["queue"]
    # What the lab's Notebook Jobs list reads (through the hub): the same words.
    listed = _get(hub, "/hub/gpuportal/notebook-jobs", mine)
    shown = next(j for j in listed if j["id"] == record["id"])
    assert shown["queue"].startswith(f"Job {record['slurm_job_id']} is queued: {group}. ")
    subprocess.run(["scancel", *held], check=True, timeout=30)
