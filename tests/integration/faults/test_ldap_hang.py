"""A directory that hangs (slapd sent SIGSTOP): logins fail fast with words that say so, and
nothing else waits on it (the hub answers, a logged-in user's spawn is as quick as ever)."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from tests.hubproc import PASSWORDS, Hub
from tests.integration.faults.helpers import spawn

pytestmark = pytest.mark.integration

SLAPD_PID = Path("/var/lib/portal-local/run/slapd.pid")


def _try_login(hub: Hub, user: str = "frank") -> tuple[int, float, str]:
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=10)
    begun = time.monotonic()
    response = session.post(
        f"{hub.url}/hub/login",
        data={"username": user, "password": PASSWORDS[user], "_xsrf": session.cookies["_xsrf"]},
        allow_redirects=False,
        timeout=30,
    )
    return response.status_code, time.monotonic() - begun, response.text


@pytest.mark.whole_cluster  # the directory is both lanes'
def test_a_hung_directory_fails_logins_fast_and_slows_nothing_else(hub: Hub, clean: None):
    erin = hub.login("erin")  # logged in before the directory hangs
    pid = int(SLAPD_PID.read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        status, took, page = _try_login(hub)
        assert status == 503, status
        assert took < 5, f"the login took {took:.2f} s"
        assert "(LDAP) is not answering" in page and "try again in a minute" in page
        assert "Invalid username or password" not in page

        # 24 logins hang on the directory at once; meanwhile the hub answers and erin spawns.
        with ThreadPoolExecutor(24) as pool:
            logins = [pool.submit(_try_login, hub) for _ in range(24)]
            time.sleep(0.5)
            assert requests.get(f"{hub.url}/hub/api", timeout=5).status_code == 200
            begun = time.monotonic()
            assert spawn(hub, erin, "erin").status_code in (201, 202)
            hub.wait_ready(erin, "erin", timeout=60)
            spawn_took = time.monotonic() - begun
            results = [future.result() for future in logins]
        assert {status for status, _, _ in results} == {503}
        # Far from the 20 s seen when logins and spawns shared one thread pool.
        assert spawn_took < 10, f"erin's spawn took {spawn_took:.1f} s"
    finally:
        os.kill(pid, signal.SIGCONT)
    # The directory answers again: logins work again.
    status, _, _ = _try_login(hub)
    assert status == 302
