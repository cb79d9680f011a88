"""Issue 20, item 4: the named-session limit counts the sessions that run, and reaching it is
said where the user is, with what to do, never JupyterHub's bare 400 page. Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def named(hub: Hub, alice: requests.Session, name: str) -> dict[str, Any]:
    model = hub.api(alice, "GET", "/users/alice?include_stopped_servers=1").json()
    server: dict[str, Any] = model["servers"].get(name, {})
    return server


def start(hub: Hub, alice: requests.Session, name: str) -> requests.Response:
    return hub.api(
        alice, "POST", f"/users/alice/servers/{name}", json={"user_options": {"profile": "gpu-1"}}
    )


def test_the_limit_counts_running_sessions_and_says_what_to_do(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    for name in ("one", "two"):
        assert start(hub, alice, name).status_code in (201, 202)
    for name in ("one", "two"):
        wait_for(lambda name=name: named(hub, alice, name).get("ready"), 120, f"{name} ready")

    # At the limit: the home page says so at the form and stays where it is.
    page.goto(f"{hub.url}/hub/home")
    page.locator('.gp-card[data-server="two"] .gp-state', has_text="Running").wait_for()
    page.fill("#gp-new-name", "three")
    page.click("#gp-new button[type=submit]")
    page.wait_for_selector("#gp-new-error:has-text('You already run')")
    assert "You already run one and two, the most at a time" in page.inner_text("#gp-new-error")
    assert page.url.endswith("/hub/home")
    # The API (and the spawn form) refuse with the same words; nothing is submitted.
    refused = start(hub, alice, "three")
    assert refused.status_code == 409, refused.text
    assert "Stop one on your home page, then start 'three'" in refused.json()["message"]

    # Stopped sessions do not count: with both stopped, a third starts.
    for name in ("one", "two"):
        hub.api(alice, "DELETE", f"/users/alice/servers/{name}")
    for name in ("one", "two"):
        wait_for(lambda name=name: named(hub, alice, name).get("stopped"), 60, f"{name} stopped")
    page.reload()
    page.locator('.gp-card[data-server="two"] .gp-state', has_text="Not running").wait_for()
    page.fill("#gp-new-name", "three")
    page.click("#gp-new button[type=submit]")
    page.wait_for_url("**/hub/spawn/alice/three")
    assert start(hub, alice, "three").status_code in (201, 202)
    wait_for(lambda: named(hub, alice, "three").get("ready"), 120, "three ready")


def test_the_hubs_error_pages_have_the_navigation_and_a_way_back(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    response = page.goto(f"{hub.url}/hub/spawn/alice/Not_A_Valid--Name")
    assert response is not None and response.status >= 400
    message = page.inner_text("#error-message")
    assert page.locator("h1").count() == 1
    assert page.inner_text("h1") not in message  # said once, not twice
    assert page.locator("#nav-jobs").is_visible()  # the product's navigation
    page.click("#error-home")
    page.wait_for_url("**/hub/home")
    # A page for admins only says who it is for, not which scope is missing.
    page.goto(f"{hub.url}/hub/admin")
    assert page.inner_text("h1") == "You may not do that"
    assert page.inner_text("#error-message").startswith("This page is for the hub's administrators")
