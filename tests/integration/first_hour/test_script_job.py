"""Issue 20, item 1: a script job with the form's defaults runs, and a script that is not there
is refused before anything is submitted. In Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs, wait_for
from tests.integration.jobs import install_job_files
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def jobs_page(browser: Any, hub: Hub) -> Any:
    install_job_files("alice")
    cancel_user_jobs("alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")
    page.check("#what-script")
    return page


def test_a_python_script_with_the_forms_defaults_runs_in_the_sessions_environment(
    hub: Hub, browser: Any
) -> None:
    page = jobs_page(browser, hub)
    # The environment offered first is the sessions' default, the one their kernels use.
    page.click("#more-options summary")
    assert page.input_value("#env-kind") == "site:session"
    assert page.locator("#env-kind option").first.inner_text().startswith("Session default")
    page.fill("#name", "hello-defaults")
    page.fill("#script", "/home/alice/jobs/hello.py")
    page.click("#submit")
    row = "#jobs tbody tr:has-text('hello-defaults')"
    page.wait_for_selector(f"{row} td.gp-state:has-text('Completed')", timeout=90_000)
    page.click(f"{row} button:has-text('Output')")
    page.wait_for_selector("#detail-box:not([hidden])")
    wait_for(lambda: "hello from gpu02" in page.inner_text("#job-detail"), 15, "the output")
    output = page.inner_text("#job-detail")
    assert "hello from gpu01" in output and "in /opt/gpuportal/venv" in output, output
    cancel_user_jobs("alice")


def test_a_script_job_without_an_environment_runs_with_the_nodes_python3(
    hub: Hub, browser: Any
) -> None:
    page = jobs_page(browser, hub)
    page.click("#more-options summary")
    page.select_option("#env-kind", "")  # "none": the nodes' own system
    page.fill("#name", "hello-system")
    page.fill("#script", "/home/alice/jobs/hello.py")
    page.fill("#nodes", "1")
    page.click("#submit")
    row = "#jobs tbody tr:has-text('hello-system')"
    page.wait_for_selector(f"{row} td.gp-state:has-text('Completed')", timeout=90_000)
    page.click(f"{row} button:has-text('Output')")
    wait_for(lambda: "hello from" in page.inner_text("#job-detail"), 15, "the output")
    assert "in /usr" in page.inner_text("#job-detail")
    cancel_user_jobs("alice")


def test_a_script_that_is_not_there_is_refused_at_once_and_says_why(hub: Hub, browser: Any) -> None:
    page = jobs_page(browser, hub)
    page.fill("#name", "not-there")
    page.fill("#script", "/home/alice/jobs/not-there.py")
    page.click("#submit")
    page.wait_for_selector("#error-script:has-text('no file')")
    assert "there is no file /home/alice/jobs/not-there.py" in page.inner_text("#error-script")
    assert user_jobs("alice") == []
    # A folder that is not there, under More.
    page.fill("#script", "/home/alice/jobs/hello.py")
    page.click("#more-options summary")
    page.fill("#workdir", "/home/alice/no-such-folder")
    page.click("#preview")
    page.wait_for_selector("#error-workdir:has-text('not a folder')")
    assert page.locator("#more-options").get_attribute("open") is not None
    assert user_jobs("alice") == []
