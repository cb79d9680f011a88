"""Guessing a password is slowed down, with a clear message, and logged (issue 10, 6).

Real hub, real LDAP. The other address and password spraying are unit-tested
(tests/unit/core/test_throttle.py): every request here comes from 127.0.0.1.
"""

from __future__ import annotations

import time

import pytest
import requests

from tests.integration.conftest import Hub

pytestmark = pytest.mark.integration


def try_login(hub: Hub, user: str, password: str) -> requests.Response:
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=10)
    return session.post(
        f"{hub.url}/hub/login",
        data={"username": user, "password": password, "_xsrf": session.cookies.get("_xsrf", "")},
        allow_redirects=False,
        timeout=30,
    )


def test_failed_logins_make_the_next_wait_and_the_right_password_works_after(hub: Hub) -> None:
    for _ in range(3):
        assert try_login(hub, "bob", "not-his-password").status_code == 403
    # Now even the right password must wait: the guesser cannot tell it was right.
    throttled = try_login(hub, "bob", "bob-demo")
    assert throttled.status_code == 429, throttled.status_code
    assert "Too many failed logins for bob from your address" in throttled.text
    assert "Wait 1 seconds" in throttled.text
    # Another user from the same address is not held up by bob's failures.
    assert try_login(hub, "alice", "alice-demo").status_code == 302
    time.sleep(1.2)
    assert try_login(hub, "bob", "bob-demo").status_code == 302
    log = hub.log_tail(200)
    assert "Failed login of bob from 127.0.0.1 (3 in a row)" in log
    assert "Login of bob from 127.0.0.1 throttled" in log
