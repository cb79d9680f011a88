"""Issue 34, items 3 and 7: the jobs form says at the field what is wrong, once. In Chromium,
as alice: `srun hostname` under the srun launcher (it ran `srun srun hostname`, which waits
for ever), and a script in a folder that is not there (also blamed on the empty working
directory field)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def jobs_form(browser: Any, hub: Hub) -> Any:
    cancel_user_jobs("alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")
    return page


def test_a_launch_inside_the_launcher_is_refused_at_the_command(hub: Hub, browser: Any) -> None:
    page = jobs_form(browser, hub)
    page.select_option("#launcher", "srun")
    page.check("#what-command")
    page.fill("#command", "srun hostname")
    page.click("#preview")
    page.wait_for_selector("#error-command:has-text('leave out')")
    assert page.inner_text("#error-command") == (
        "the srun launcher starts the command on every node itself: leave out 'srun' and give "
        "what it should run ('hostname')"
    )
    assert page.locator("#script-preview").is_hidden()
    page.click("#submit")
    page.wait_for_timeout(1000)
    assert user_jobs("alice") == []
    # As it says: the command alone previews.
    page.fill("#command", "hostname")
    page.click("#preview")
    page.wait_for_selector("#script-preview:not([hidden])")
    assert page.inner_text("#error-command") == ""
    assert "srun --kill-on-bad-exit=1 hostname" in page.inner_text("#script-preview")


def test_a_script_in_a_missing_folder_is_one_mistake_said_once(hub: Hub, browser: Any) -> None:
    page = jobs_form(browser, hub)
    page.check("#what-script")
    page.fill("#script", "/home/alice/nope/train.py")
    page.click("#preview")
    page.wait_for_selector("#error-script:has-text('no folder')")
    assert page.inner_text("#error-script") == (
        "there is no folder /home/alice/nope that you can use; check the script's path"
    )
    assert page.inner_text("#error-workdir") == ""
    assert user_jobs("alice") == []
