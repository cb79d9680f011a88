"""Issue 20, item 9: figures that follow what changed. The session history shows the time limit
after Extend; the spawn form's time field and the profile's card never seem to disagree.
In Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_the_session_history_follows_an_extend(hub: Hub, clean: None, browser: Any) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    options = {"profile": "gpu-1", "runtime": "02:00:00"}
    assert hub.api(alice, "POST", "/users/alice/server", json={"user_options": options}).ok
    hub.wait_ready(alice, "alice")
    extended = alice.post(
        f"{hub.url}/hub/gpuportal/extend", json={"server": "", "add": "00:30:00"}, timeout=30
    )
    assert extended.status_code == 200, extended.text

    def history_says() -> bool:
        page.goto(f"{hub.url}/services/portal/jobs")
        page.wait_for_selector("#jobs tbody tr")
        return "time limit 02:30:00" in page.inner_text("#jobs tbody")

    wait_for(history_says, 90, "the history to show the new limit", step=5)


def test_the_time_field_says_when_it_is_not_the_profiles_default(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    default = page.get_attribute("input[name=profile][value=gpu-1]", "data-default-runtime")
    # A time of one's own is said to be one's own, and kept for the next time.
    page.fill("#gp-runtime", "03:00:00")
    own = f"Your own time limit; this profile's default is {default}."
    assert page.inner_text("#gp-runtime-default") == own
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/lab**")
    hub.stop_server(alice, "alice")
    page.goto(f"{hub.url}/hub/spawn")
    assert page.is_checked("input[name=profile][value=gpu-1]")
    assert page.input_value("#gp-runtime") == "03:00:00"
    assert page.inner_text("#gp-runtime-default") == own
    # The default is not remembered as if chosen: the field then shows the profile's default
    # of the day, and says nothing.
    page.fill("#gp-runtime", default or "")
    assert page.inner_text("#gp-runtime-default") == ""
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/lab**")
    hub.stop_server(alice, "alice")
    page.goto(f"{hub.url}/hub/spawn")
    assert page.input_value("#gp-runtime") == default
    assert page.inner_text("#gp-runtime-default") == ""
