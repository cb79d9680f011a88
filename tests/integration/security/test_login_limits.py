"""A hub login lasts PORTAL_SESSION_HOURS and ends after PORTAL_SESSION_IDLE_HOURS without a
call (issue 55, item 3), on a hub of this module's own with both shortened to seconds: 20 s idle,
45 s in all (the test hubs refresh a user's login every 4 s)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests

from tests.hubproc import Hub, state_dir

pytestmark = pytest.mark.integration

IDLE_S = 20
SESSION_S = 45


@pytest.fixture(scope="module")
def limits_hub(cluster: None) -> Iterator[Hub]:
    env = {
        "PORTAL_HUB_ID": "test-limits",
        "PORTAL_SESSION_IDLE_HOURS": str(IDLE_S / 3600),
        "PORTAL_SESSION_HOURS": str(SESSION_S / 3600),
    }
    hub = Hub(state_dir("login-limits"), 8700, env=env)
    hub.start()
    yield hub
    hub.stop()


def signed_in(hub: Hub, browser: requests.Session) -> bool:
    """Whether the hub's home page opens for this browser (else: to the login page)."""
    answer = browser.get(f"{hub.url}/hub/home", timeout=30, allow_redirects=False)
    assert answer.status_code in (200, 302), answer.status_code
    return answer.status_code == 200


def test_an_idle_login_ends_in_every_browser_and_a_token_goes_on(limits_hub: Hub) -> None:
    first, second = limits_hub.login("alice"), limits_hub.login("alice")
    made = limits_hub.api(first, "POST", "/users/alice/tokens", json={"note": "script"})
    assert made.status_code == 201, made.text
    token = {"Authorization": f"token {made.json()['token']}"}
    assert signed_in(limits_hub, first) and signed_in(limits_hub, second)
    time.sleep(IDLE_S + 5)
    assert not signed_in(limits_hub, first)
    assert not signed_in(limits_hub, second)  # every browser's login, not only the one asking
    again = limits_hub.login("alice")
    assert signed_in(limits_hub, again)
    # A token made on the token page keeps its own expiry.
    me = requests.get(f"{limits_hub.url}/hub/api/user", headers=token, timeout=30)
    assert me.status_code == 200 and me.json()["name"] == "alice"
    assert "their hub logins end" in limits_hub.log_path.read_text()


def test_a_login_in_use_lasts_the_session_hours_and_no_longer(limits_hub: Hub) -> None:
    bob = limits_hub.login("bob")
    started = time.monotonic()
    while time.monotonic() - started < SESSION_S - 8:
        assert signed_in(limits_hub, bob), time.monotonic() - started  # never idle
        time.sleep(5)
    time.sleep(max(0.0, SESSION_S + 2 - (time.monotonic() - started)))
    assert not signed_in(limits_hub, bob)


def test_a_running_session_keeps_no_login_open_and_the_logins_tokens_end(
    limits_hub: Hub,
) -> None:
    """The session's own calls (its activity every 5 s here, its GPU readings) counted as
    bob's: his login never went idle while it ran, and when a login did end, the token it had
    given the portal stayed good (issue 68, 5)."""
    bob = limits_hub.login("bob")
    portal = f"{limits_hub.url}/services/portal/api/jobs"
    # The portal's page signs him in through the hub's OAuth: a token of this login.
    assert bob.get(f"{limits_hub.url}/services/portal/jobs", timeout=30).ok
    assert bob.get(portal, timeout=30).status_code == 200
    started = limits_hub.api(
        bob, "POST", "/users/bob/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert started.status_code in (201, 202), started.text
    limits_hub.wait_ready(bob, "bob")
    try:
        time.sleep(IDLE_S + 8)  # the session calls the hub all along; bob does nothing
        assert not signed_in(limits_hub, bob)
        assert "token(s) of those logins ended" in limits_hub.log_path.read_text()
        # The portal asks the hub about a token again within 30 s: then it is refused.
        deadline = time.monotonic() + 45
        while bob.get(portal, timeout=30, allow_redirects=False).status_code == 200:
            assert time.monotonic() < deadline, "the portal still takes the ended login's token"
            time.sleep(3)
    finally:
        limits_hub.stop_server(limits_hub.login("bob"), "bob")
