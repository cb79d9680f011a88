"""Culling on the real stack (issue 13, 1): jupyterhub-idle-culler as a hub service, the limits
of a profile an admin set in the portal, Slurm's queue.

The test hub reads activity every 5 s and the culler looks every 5 s (tests/hubproc.py), so a
profile with one-minute limits shows each rule within two minutes.
"""

from __future__ import annotations

import subprocess
import time

import pytest
import requests

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import (
    failed_spawn_message,
    fill_gpus,
    home_page,
    spawn,
    state_of,
)
from tests.integration.test_audit import events
from tests.integration.test_cli import token_of
from tests.integration.test_metrics import moved, scrape

pytestmark = pytest.mark.integration

PORTAL = "/services/portal"
PROFILE = {
    "title": "1 GPU, culled in a minute",
    "gpus": 1,
    "idle_limit": "00:01:00",
    "gpu_idle_limit": "00:00:00",
    "queue_limit": "00:01:00",
    "enabled": True,
}


@pytest.fixture
def quick_cull_profile(hub: Hub) -> str:
    """A profile `cull-1m` with one-minute idle and queue limits, set by an admin (carol)."""
    headers = {"Authorization": f"token {token_of(hub, 'carol')}"}
    url = f"{hub.url}{PORTAL}/api/profiles"
    current = requests.get(f"{url}/cull-1m", headers=headers, timeout=10)
    if current.status_code == 404:
        answer = requests.post(
            url, headers=headers, json={"slug": "cull-1m", **PROFILE}, timeout=10
        )
    else:
        body = {"version": current.json()["version"], **PROFILE}
        answer = requests.patch(f"{url}/cull-1m", headers=headers, json=body, timeout=10)
    assert answer.status_code in (200, 201), answer.text
    return "cull-1m"


def _poke(hub: Hub, user: str, token: str) -> None:
    """What a user at work does to JupyterLab: a request to its REST API."""
    url = f"{hub.url}/user/{user}/api/contents"
    requests.get(url, headers={"Authorization": f"token {token}"}, timeout=10)


def test_idle_session_is_culled_and_an_active_one_kept(
    hub: Hub, clean: None, quick_cull_profile: str
) -> None:
    carol = token_of(hub, "carol")
    before = scrape(hub, "/hub/metrics", carol)
    alice, bob = hub.login("alice"), hub.login("bob")
    for session, user in ((alice, "alice"), (bob, "bob")):
        assert spawn(hub, session, user, profile=quick_cull_profile).status_code in (201, 202)
    hub.wait_ready(alice, "alice")
    hub.wait_ready(bob, "bob")
    [alice_job] = user_jobs("alice", "%i")
    bob_token = hub.api(bob, "POST", "/users/bob/tokens", json={"note": "t"}).json()["token"]
    started = time.monotonic()

    # The card warns before the cull (the limit is one minute, so at once).
    cards = alice.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"]
    cull = cards[0]["cull"]
    assert cull["reason"] == "idle", cull
    assert "unless it is used (idle limit 1 min)" in cull["warning"]
    # No GPU on the fake nodes: the card says it is not measured, and why.
    wait_for(
        lambda: (
            "GPU use not measured"
            in alice.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"][0][
                "cull"
            ]["gpu"]
        ),
        30,
        "the session's first GPU reading",
    )

    def alice_gone() -> bool:
        _poke(hub, "bob", bob_token)  # bob keeps working all along
        return hub.server(alice, "alice") is None

    wait_for(alice_gone, 180, "alice's idle session to be culled", step=5)
    assert time.monotonic() - started >= 55  # not before its limit
    wait_for(lambda: user_jobs("alice") == [], 30, "alice's job to leave squeue")
    assert f"Your session (job {alice_job}) was stopped after 1 min without use" in home_page(
        hub, alice
    )

    # bob, in use the whole time, is kept past the limit.
    for _ in range(6):
        _poke(hub, "bob", bob_token)
        time.sleep(5)
    assert time.monotonic() - started > 90
    assert hub.server(bob, "bob")["ready"] is True

    after = scrape(hub, "/hub/metrics", carol)
    assert moved(before, after, "gpuportal_culls_total", reason="idle") == 1
    [stop] = [e for e in events(hub, carol, action="stop", user="alice") if e["job"] == alice_job]
    assert (stop["by"], stop["why"]) == ("culler", "culled: idle")
    # Who asked, as the hub's request log saw it: the culler's service; then an admin.
    asked = events(hub, carol, action="stop_request", user="alice")
    assert (asked[0]["by"], asked[0]["role"]) == ("idle-culler", "service"), asked[0]
    hub.stop_all(hub.login("carol"), "bob")
    asked = events(hub, carol, action="stop_request", user="bob")
    assert (asked[0]["by"], asked[0]["role"]) == ("carol", "admin"), asked[0]


def test_session_queued_past_its_limit_is_cancelled(
    hub: Hub, clean: None, quick_cull_profile: str
) -> None:
    blockers = fill_gpus("gpu01", "gpu02")
    try:
        alice = hub.login("alice")
        response = spawn(hub, alice, "alice", profile=quick_cull_profile)
        assert response.status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("alice", "%i"), 20, "alice's job")
        wait_for(lambda: hub.server(alice, "alice") is None, 180, "the queue limit", step=3)
        message = failed_spawn_message(hub, alice, "alice", response)
    finally:
        cancel_user_jobs("carol")
    assert "Your session waited in the queue for 1 min, its profile's limit" in message, message
    wait_for(lambda: user_jobs("alice") == [], 30, "alice's queued job to be cancelled")
    assert f"so its job {job_id} was cancelled" in home_page(hub, alice)
    assert blockers


def test_a_queued_session_waits_past_the_hubs_start_timeout(hub: Hub, clean: None) -> None:
    """The hub's start_timeout counts on top of the queue: a spawn behind full nodes is kept
    past it (its profile's queue limit is 4 h) and starts when GPUs come free."""
    hub.extra_env["PORTAL_START_TIMEOUT"] = "20"
    hub.restart()
    try:
        blockers = fill_gpus("gpu01", "gpu02")
        alice = hub.login("alice")
        assert spawn(hub, alice, "alice").status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("alice", "%i"), 20, "alice's job")
        time.sleep(40)  # twice the start timeout
        assert state_of(job_id) == "PENDING"
        server = hub.server(alice, "alice")
        assert server is not None and server["pending"] == "spawn", server
        subprocess.run(["scancel", *blockers], check=True, timeout=20)
        hub.wait_ready(alice, "alice")
        assert user_jobs("alice", "%i") == [job_id]
    finally:
        cancel_user_jobs("carol")
        hub.stop_all(hub.login("carol"), "alice")
        del hub.extra_env["PORTAL_START_TIMEOUT"]
        hub.restart()
