"""Issue 34, item 10: the spawn form and the new-session name say what their format is
(the browser's own "Please match the requested format." did not), and an emptied time limit
says that the profile's default is used. In Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, user_jobs
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_the_time_limit_and_the_session_name_say_their_format(hub: Hub, browser: Any) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.fill("#gp-runtime", "abc")
    problem = page.locator("#gp-runtime-problem")
    assert problem.inner_text() == (
        "Write the time limit as hours:minutes:seconds, e.g. 02:30:00 for two and a half hours."
    )
    assert page.get_attribute("#gp-runtime", "aria-invalid") == "true"
    # The browser's bubble says the same, and nothing is sent.
    message = page.eval_on_selector("#gp-runtime", "e => e.validationMessage")
    assert message.startswith("Write the time limit as hours:minutes:seconds"), message
    page.click("#spawn_form button[type=submit]")
    assert page.url.endswith("/hub/spawn") and user_jobs("alice") == []

    page.fill("#gp-runtime", "")
    assert problem.is_hidden()
    assert page.inner_text("#gp-runtime-default") == (
        "Empty: this profile's default, 08:00:00, is used."
    )
    page.fill("#gp-runtime", "02:00:00")
    assert page.inner_text("#gp-runtime-default") == (
        "Your own time limit; this profile's default is 08:00:00."
    )

    page.goto(f"{hub.url}/hub/home")
    for typed, said in (
        ("Odd Name!", "“Odd Name!” cannot name a session: use lower-case letters, digits and "
         "single hyphens, starting with a letter and ending with a letter or digit (at most "
         "30), e.g. training-run."),
        ("", "Give the new session a name, e.g. training-run."),
    ):  # fmt: skip
        page.fill("#gp-new-name", typed)
        page.click("#gp-new button[type=submit]")
        assert page.inner_text("#gp-new-error") == said
        assert page.url.endswith("/hub/home")
