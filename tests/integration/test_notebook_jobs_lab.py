"""JupyterLab's Notebook Jobs in Chromium, as a user works: from an open notebook, Jupyter
Scheduler's own "Create a notebook job" form with this user's environments and profiles, a
parameter, Create; the list shows the Slurm job until it has completed, with its outputs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs
from tests.integration.jobs import install_job_files
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_live_profiles import log_in, open_lab
from tests.integration.test_notebook_jobs import _runs

pytestmark = pytest.mark.integration
# The docs' pictures of it (docs/tutorials/notebook-job.md; test_docs_screenshots names them).
NOTEBOOK_JOB_SHOTS = ("form", "refused", "list", "run", "schedule", "definition")


def _open_the_notebook(hub: Hub, browser: Any) -> Any:
    """alice's session, with jobs/train_params.ipynb open and no earlier runs of it."""
    install_job_files("alice")
    cancel_user_jobs("alice")
    _runs("train_params")
    page = log_in(browser, hub, "alice", "alice-demo", viewport={"width": 1400, "height": 900})
    page.set_default_timeout(120_000)
    open_lab(page, hub, "alice")
    page.goto(f"{hub.url}/user/alice/lab/tree/jobs/train_params.ipynb?reset")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    return page


def test_a_notebook_job_from_the_labs_own_dialog(
    hub: Hub, clean: None, browser: Any, tmp_path: Path
) -> None:
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)

    def shot(page: Any, name: str) -> None:
        assert name in NOTEBOOK_JOB_SHOTS
        page.screenshot(path=str(out / f"notebook-jobs-{name}-light.png"))

    page = _open_the_notebook(hub, browser)
    # Another notebook selected in the file browser, as after a look through the folder: the
    # toolbar's button still makes a job of the notebook it sits on (Jupyter Scheduler's own
    # took the browser's selection: that other file, or nothing where none was selected).
    page.click(".jp-DirListing-content >> text=diverges.ipynb")
    page.click(".jp-NotebookPanel-toolbar [data-command='gpuportal:create-notebook-job']")
    page.wait_for_selector("text=Create Job")
    assert page.input_value("input[name=inputFile]") == "jobs/train_params.ipynb"
    page.click("text=Environment >> xpath=.. >> [role=button]")
    page.click("li[role=option]:has-text('Session default')")
    page.click("text=Parameters >> xpath=.. >> button")
    page.fill("text=Job name >> xpath=.. >> input", "overnight")
    # Typed as a user does, a tab between the fields: the form checks a parameter as a field
    # of it is left.
    page.click("input[placeholder=Name]")
    page.keyboard.type("lr")
    page.keyboard.press("Tab")
    page.keyboard.type("[0.1,")
    page.keyboard.press("Tab")
    shot(page, "form")
    page.click("button:has-text('Create')")
    # Refused by the portal, in words, by the dialog's name for the field; nothing submitted.
    page.wait_for_selector("text=Parameters: lr: '[0.1,' is not a JSON or YAML value")
    shot(page, "refused")
    page.fill("input[placeholder=Value]", "")
    page.click("input[placeholder=Value]")
    page.keyboard.type("0.5")
    page.keyboard.press("Tab")
    page.click("button:has-text('Create')")
    row = page.wait_for_selector("tr:has-text('overnight')")
    assert row is not None and "train_params.ipynb" in row.inner_text()
    # The list follows Slurm (through the portal's records): reloaded until the job is done.
    for _ in range(60):
        page.click("button:has-text('Reload')")
        page.wait_for_timeout(2000)
        if "Completed" in page.inner_text("tr:has-text('overnight')"):
            break
    row_text = page.inner_text("tr:has-text('overnight')")
    assert "Completed" in row_text and "Notebook" in row_text and "HTML" in row_text, row_text
    shot(page, "list")
    page.click("tr:has-text('overnight') >> text=overnight")
    page.wait_for_selector("text=Parameter name")
    detail = page.inner_text("body")
    assert "overnight" in detail and "0.5" in detail and "Completed" in detail
    # Its executed notebook, from the detail's link: this run's value, in the cell's output.
    page.click("a:has-text('Notebook')")
    page.wait_for_selector(".jp-OutputArea-output:has-text('run default: lr=0.5 epochs=1')")
    shot(page, "run")


def _pending(name: str) -> list[str]:
    """The user's jobs of this name waiting in Slurm's queue, with why."""
    listed = subprocess.run(
        ["squeue", "-h", "-u", "alice", "-n", name, "-t", "PENDING", "-o", "%i %r"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return listed.stdout.splitlines()


def test_a_notebook_on_a_schedule_from_the_labs_own_dialog(
    hub: Hub, clean: None, browser: Any, tmp_path: Path
) -> None:
    """Run on a schedule, every minute: a definition whose next run waits in Slurm's queue;
    a run of it completes and shows under it; Pause cancels the waiting run; Delete forgets
    it."""
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    page = _open_the_notebook(hub, browser)
    page.click(".jp-NotebookPanel-toolbar [data-command='gpuportal:create-notebook-job']")
    page.wait_for_selector("text=Create Job")
    page.wait_for_selector("text=Compute type")  # the form has its environments
    page.get_by_label("Run on a schedule").check()
    page.click("text=Interval >> xpath=.. >> [role=button]")
    page.click("li[role=option]:has-text('Minute')")
    page.wait_for_selector("[role=listbox]", state="detached")
    name = page.locator("text=Job name >> xpath=.. >> input")
    name.fill("nightly")
    assert name.input_value() == "nightly"
    page.mouse.wheel(0, 600)
    page.screenshot(path=str(out / "notebook-jobs-schedule-light.png"))
    page.click("button:has-text('Create')")
    row = page.wait_for_selector("tr:has-text('nightly')")
    assert row is not None and "Every minute" in row.inner_text() and "Active" in row.inner_text()
    # Its next run waits in Slurm's queue for the minute to begin; no process of the session's.
    (waiting,) = _pending("nightly")
    assert waiting.endswith("BeginTime"), waiting
    page.click("tr:has-text('nightly') >> text=nightly")
    page.wait_for_selector("text=Every minute")
    # Its runs, listed under it: the first completes, and the next is queued behind it.
    for _ in range(40):
        page.click("button:text-is('Reload')")
        page.wait_for_timeout(3000)
        if page.locator("tr:has-text('Completed')").count():
            break
    assert page.locator("tr:has-text('Completed')").count() >= 1, page.inner_text("table")
    page.screenshot(path=str(out / "notebook-jobs-definition-light.png"))
    page.click("button:text-is('Pause')")
    page.wait_for_selector("button:text-is('Resume')")
    assert _pending("nightly") == []
    page.click("button:has-text('Delete Job Definition')")
    page.click("[role=dialog] button:text-is('Delete')")
    page.wait_for_selector("text=There are no job definitions")
    assert _pending("nightly") == []
