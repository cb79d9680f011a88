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
    page.wait_for_selector("#jobs tbody tr")
    # The API holds exactly one job for alice: the click submitted once.
    assert page.locator("#jobs tbody tr:has-text('where-page')").count() == 1
    page.wait_for_selector("#jobs td:text-is('COMPLETED')", timeout=90_000)
    row = page.inner_text("#jobs tbody tr")
    assert "where-page" in row and "gpu[01-02]" in row
    page.click("#jobs tbody tr button:has-text('Output')")
    page.wait_for_selector("#job-detail:not([hidden])")
    wait_for(lambda: "task 3 on gpu02" in page.inner_text("#job-detail"), 10, "the output")
    cancel_user_jobs("alice")
