"""Issue 20, item 6: sharing a folder that does not exist says so at the form and leaves nothing
behind (the next share of a real folder is tb-runs, not tb-runs-2); the field points where the
TensorBoard notebook writes. In Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in
from tests.integration.test_tensorboard_folder import start_with_runs

pytestmark = pytest.mark.integration


def test_a_missing_folder_is_said_at_the_form_and_leaves_no_share(
    hub: Hub, clean: None, browser: Any
) -> None:
    alice = log_in(browser, hub, "alice", "alice-demo")
    start_with_runs(hub, hub.login("alice"))
    errors: list[str] = []
    alice.on("pageerror", lambda error: errors.append(str(error)))

    alice.goto(f"{hub.url}/hub/home")
    folder = alice.locator("#gp-share-folder")
    # Issue 54, item 9: the example is a hint beside the field, not a placeholder that looks
    # like a value already there.
    assert folder.get_attribute("placeholder") == "a folder of TensorBoard logs"
    assert "e.g. /home/alice/templates/runs" in alice.inner_text("#gp-share-hint")
    folder.fill("/home/alice/not-a-folder/runs")
    alice.select_option("#gp-share-group", "ds")
    alice.click("#gp-share button[type=submit]")
    alice.wait_for_selector("#gp-share-error:has-text('is not a folder you can read')")
    assert "~/templates/runs" in alice.inner_text("#gp-share-error")
    assert alice.locator("[data-board]").count() == 0
    # An unusable path: in words, without the API's JSON.
    folder.fill("runs")
    alice.click("#gp-share button[type=submit]")
    alice.wait_for_selector("#gp-share-error:has-text('absolute path')")
    said = alice.inner_text("#gp-share-error")
    assert said == (
        "the folder must be an absolute path of letters, digits and _ . / -, "
        "e.g. /home/alice/templates/runs"
    ), said
    boards = hub.login("alice").get(f"{hub.url}/hub/gpuportal/tensorboards").json()["boards"]
    assert boards == []

    folder.fill("/home/alice/runs")
    alice.click("#gp-share button[type=submit]")
    alice.wait_for_selector("[data-board='tb-runs'][data-state='running']", timeout=120_000)
    assert errors == []
