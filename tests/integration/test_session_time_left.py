"""JupyterLab shows the time left and warns 15 minutes before the end (issue 11, 3): the
@gpuportal/session lab extension, reading the hub's card of the session.
Real Slurm, hub, Chromium."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def spawn(hub: Hub, runtime: str) -> Any:
    alice = hub.login("alice")
    options = {"profile": "gpu-1", "runtime": runtime}
    response = hub.api(alice, "POST", "/users/alice/server", json={"user_options": options})
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(alice, "alice")
    return alice


def status_text(page: Any) -> str:
    return str(page.locator(".gp-time-left").inner_text())


def test_the_status_bar_counts_down_and_warns_once_in_the_last_15_minutes(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = spawn(hub, "00:15:00")
    page.goto(f"{hub.url}/user/alice/lab")
    page.locator(".gp-time-left", has_text="Session:").wait_for(timeout=60_000)
    assert re.fullmatch(r"Session: 1[45] min left", status_text(page)), status_text(page)
    assert "gp-soon" in (page.get_attribute(".gp-time-left", "class") or "")
    warning = page.get_by_text(re.compile(r"Your session ends at \d\d:\d\d \(1[45] min left\)"))
    warning.wait_for()
    assert page.get_by_role("button", name="Extend on the hub").count() == 1

    # Extended on the hub: the status bar follows when the user comes back to the tab.
    extended = alice.post(
        f"{hub.url}/hub/gpuportal/extend", json={"server": "", "add": "01:00:00"}, timeout=30
    )
    assert extended.status_code == 200, extended.text
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    page.locator(".gp-time-left", has_text=re.compile(r"Session: 1 h 1[45] min left")).wait_for()
    assert "gp-soon" not in (page.get_attribute(".gp-time-left", "class") or "")
    assert warning.count() == 1  # warned once, not again


def test_a_long_session_shows_its_time_left_and_no_warning(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    spawn(hub, "02:00:00")
    page.goto(f"{hub.url}/user/alice/lab")
    page.locator(".gp-time-left", has_text="Session:").wait_for(timeout=60_000)
    assert re.fullmatch(r"Session: (2 h|1 h 59 min) left", status_text(page)), status_text(page)
    assert page.get_attribute(".gp-time-left", "href") == "/hub/home"
    assert page.get_by_text("Your session ends at").count() == 0
    # Clusters are offline: JupyterLab's news and update check (which call jupyter.org) are off.
    config = page.evaluate("JSON.parse(document.getElementById('jupyter-config-data').textContent)")
    assert "@jupyterlab/apputils-extension:announcements" in config["disabledExtensions"]
    # The lab follows the browser's light or dark scheme, like the hub's pages (issue 20).
    assert page.evaluate("document.body.dataset.jpThemeLight") == "true"
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")


def test_a_lab_that_read_the_card_before_its_start_time_was_known_shows_it_soon(
    hub: Hub, clean: None, browser: Any
) -> None:
    """The lab's first read can come before the hub has seen the job's start (a busy Slurm
    answers the hub's look later: CI's Debian 13 lane waited a minute for the next read).
    Here the first answer is the real card with its time taken out; the next read, seconds
    later and not a minute, shows the time."""
    page = log_in(browser, hub, "alice", "alice-demo")
    spawn(hub, "02:00:00")
    answered: list[int] = []

    def first_without_time(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if not answered:
            for card in body["sessions"]:
                card.update(left=None, ends=None, started=None)
        answered.append(len(body["sessions"]))
        route.fulfill(response=response, json=body)

    page.route("**/hub/gpuportal/sessions", first_without_time)
    page.goto(f"{hub.url}/user/alice/lab")
    page.locator("#jp-main-statusbar").wait_for(timeout=60_000)
    for _ in range(60):  # the first read comes with the extension's activation
        if answered:
            break
        page.wait_for_timeout(1000)
    assert answered, "the lab never read its card"
    # Read again within seconds (every 5 s while the time is not known), not after 60 s.
    page.locator(".gp-time-left", has_text="Session:").wait_for(timeout=30_000)
    assert len(answered) >= 2
