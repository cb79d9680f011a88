"""Issue 20, item 3: a session the user stopped reads as stopped on its card and the home page,
not "Job N is being cancelled." for ever. In Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_a_stopped_session_says_so_once_its_job_has_ended(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    response = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(alice, "alice")

    page.goto(f"{hub.url}/hub/home")
    card = page.locator('.gp-card[data-server=""]')
    card.locator(".gp-state", has_text="Running").wait_for()
    card.locator(".gp-stop").click()
    card.locator(".gp-stop-confirm").click()  # Stop asks first (item 10)
    card.locator(".gp-state", has_text="Not running").wait_for(timeout=60_000)
    wait_for(lambda: user_jobs("alice") == [], 60, "the job to leave the queue")

    page.reload()
    card.locator(".gp-state").wait_for()
    assert card.locator(".gp-state").inner_text() == "Not running"
    assert "being cancelled" not in page.inner_text("body")
