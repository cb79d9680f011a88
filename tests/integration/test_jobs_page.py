"""The jobs page in Chromium: preview, submit, watch the job end, and a field error."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs, wait_for
from tests.integration.jobs import install_job_files
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_preview_submit_and_watch_a_job(hub: Hub, browser: Any) -> None:
    install_job_files("alice")
    cancel_user_jobs("alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")
    page.fill("#name", "where-page")
    page.select_option("#launcher", "mpi")
    page.check("#what-script")
    page.fill("#script", "/home/alice/../bob/where.sh")
    page.click("#preview")
    # Selectors, not wait_for_function: the portal's content policy forbids eval, which
    # Playwright's string predicates use.
    page.wait_for_selector("#error-script:has-text('must')")
    assert "must not contain '..'" in page.inner_text("#error-script")

    page.fill("#script", "/home/alice/jobs/where.sh")
    page.click("#preview")
    page.wait_for_selector("#script-preview:not([hidden])")
    assert "#SBATCH --ntasks-per-node=2" in page.inner_text("#script-preview")
    assert user_jobs("alice") == []

    page.click("#submit")
    # Older records (jobs, and sessions of other tests) are listed too: wait for this one.
    page.wait_for_selector("#jobs tbody tr[data-job]:has-text('where-page')")
    # The API holds exactly one job for alice: the click submitted once.
    assert page.locator("#jobs tbody tr[data-job]:has-text('where-page')").count() == 1
    page.wait_for_selector(
        "#jobs tr:has-text('where-page') td.gp-state:has-text('Completed')", timeout=90_000
    )
    row = page.inner_text("#jobs tbody tr[data-job]:has-text('where-page')")
    assert "where-page" in row and "gpu[01-02]" in row and "exit code 0" in row
    page.click("#jobs tbody tr[data-job]:has-text('where-page') button:has-text('Output')")
    page.wait_for_selector("#detail-box:not([hidden])")
    wait_for(lambda: "task 3 on gpu02" in page.inner_text("#job-detail"), 10, "the output")
    cancel_user_jobs("alice")


def test_srun_hostname_on_two_nodes_then_resubmit(hub: Hub, browser: Any) -> None:
    cancel_user_jobs("alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")
    # The form opens on a command with srun; its help says what srun does with it.
    assert page.input_value("#command") == "hostname"
    assert page.input_value("#launcher") == "srun"
    assert "once per node" in page.inner_text("#launcher-help")
    page.fill("#name", "names-page")
    page.fill("#command", "printenv SLURMD_NODENAME")
    page.click("#submit")
    page.wait_for_selector("#detail-title:has-text('completed')", timeout=90_000)
    page.wait_for_selector("#job-detail:has-text('gpu02')")
    assert sorted(page.inner_text("#job-detail").split()) == ["gpu01", "gpu02"]

    page.click("#jobs tbody tr[data-job]:has-text('names-page') button:has-text('Resubmit')")
    page.wait_for_selector("#form-note:has-text('Resubmitted as Slurm job')")
    wait_for(
        lambda: page.locator("#jobs tbody tr[data-job]:has-text('names-page')").count() == 2,
        30,
        "2 rows",
    )
    rows = page.locator("#jobs tbody tr[data-job]:has-text('names-page')")
    first, second = (rows.nth(i).inner_text() for i in (0, 1))
    assert "Slurm" in first and "Slurm" in second and first != second


def test_an_array_of_four_tasks_from_the_page(hub: Hub, browser: Any) -> None:
    cancel_user_jobs("alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")
    page.fill("#name", "sweep-page")
    page.fill("#nodes", "1")
    page.fill("#gpus_per_node", "1")
    page.fill("#command", "printenv SLURM_ARRAY_TASK_ID")
    page.click("#more-options summary")
    page.fill("#array", "0-3")
    page.click("#submit")
    page.wait_for_selector("#detail-title:has-text('completed')", timeout=120_000)
    tasks = page.locator("#detail-tasks span").all_inner_texts()
    assert tasks == [f"task {n}: completed" for n in range(4)]
    printed = [
        line for line in page.inner_text("#job-detail").splitlines() if line.strip().isdigit()
    ]
    assert sorted(printed) == ["0", "1", "2", "3"]
    # Edit fills the form with the array job again; a bad array is refused by name.
    page.click("#jobs tbody tr[data-job]:has-text('sweep-page') button:has-text('Edit')")
    assert page.input_value("#array") == "0-3"
    page.fill("#array", "3-1")
    page.click("#preview")
    page.wait_for_selector("#error-array:has-text('ends before it starts')")
    cancel_user_jobs("alice")
