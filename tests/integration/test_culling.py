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
    home_page,
    spawn,
    state_of,
)
from tests.integration.second_lane import NODES, fill_lane_gpus
from tests.integration.test_audit import events
from tests.integration.test_cli import token_of
from tests.integration.test_metrics import moved, scrape

pytestmark = pytest.mark.integration

PORTAL = "/services/portal"


# On the second lane (tests/integration/second_lane.py): erin, frank and grace, its hub, its
# nodes; the culler's minute runs beside the other tests.
@pytest.fixture
def hub(second_lane_hub: Hub) -> Hub:
    return second_lane_hub


@pytest.fixture
def clean(second_lane_clean: None) -> None:
    return None


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
    """A profile `cull-1m` with one-minute idle and queue limits, set by an admin (grace)."""
    headers = {"Authorization": f"token {token_of(hub, 'grace')}"}
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
    grace = token_of(hub, "grace")
    before = scrape(hub, "/hub/metrics", grace)
    erin, frank = hub.login("erin"), hub.login("frank")
    for session, user in ((erin, "erin"), (frank, "frank")):
        assert spawn(hub, session, user, profile=quick_cull_profile).status_code in (201, 202)
    hub.wait_ready(erin, "erin")
    hub.wait_ready(frank, "frank")
    [erins_job] = user_jobs("erin", "%i")
    bob_token = hub.api(frank, "POST", "/users/frank/tokens", json={"note": "t"}).json()["token"]
    started = time.monotonic()

    # The card warns before the cull (the limit is one minute, so at once).
    cards = erin.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"]
    cull = cards[0]["cull"]
    assert cull["reason"] == "idle", cull
    assert "unless it is used (idle limit 1 min)" in cull["warning"]
    # No GPU on the fake nodes: the card says it is not measured, and why.
    wait_for(
        lambda: (
            "GPU use not measured"
            in erin.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"][0][
                "cull"
            ]["gpu"]
        ),
        30,
        "the session's first GPU reading",
    )

    def alice_gone() -> bool:
        _poke(hub, "frank", bob_token)  # frank keeps working all along
        return hub.server(erin, "erin") is None

    wait_for(alice_gone, 180, "erin's idle session to be culled", step=5)
    assert time.monotonic() - started >= 55  # not before its limit
    wait_for(lambda: user_jobs("erin") == [], 30, "erin's job to leave squeue")
    assert f"Your session (job {erins_job}) was stopped after 1 min without use" in home_page(
        hub, erin
    )

    # frank, in use the whole time, is kept past the limit.
    for _ in range(6):
        _poke(hub, "frank", bob_token)
        time.sleep(5)
    assert time.monotonic() - started > 90
    assert hub.server(frank, "frank")["ready"] is True

    after = scrape(hub, "/hub/metrics", grace)
    assert moved(before, after, "gpuportal_culls_total", reason="idle") == 1
    [stop] = [e for e in events(hub, grace, action="stop", user="erin") if e["job"] == erins_job]
    # One record per stop, with who asked: the culler's service; then an admin.
    assert (stop["by"], stop["role"], stop["why"]) == ("idle-culler", "service", "culled: idle")
    [frank_job] = user_jobs("frank", "%i")
    hub.stop_all(hub.login("grace"), "frank")
    [stop] = [e for e in events(hub, grace, action="stop", user="frank") if e["job"] == frank_job]
    assert (stop["by"], stop["role"], stop["why"]) == ("grace", "admin", "stopped on the hub")


def test_session_queued_past_its_limit_is_cancelled(
    hub: Hub, clean: None, quick_cull_profile: str
) -> None:
    blockers = fill_lane_gpus(*NODES)
    try:
        erin = hub.login("erin")
        response = spawn(hub, erin, "erin", profile=quick_cull_profile)
        assert response.status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("erin", "%i"), 20, "erin's job")
        wait_for(lambda: hub.server(erin, "erin") is None, 180, "the queue limit", step=3)
        message = failed_spawn_message(hub, erin, "erin", response)
    finally:
        cancel_user_jobs("grace")
    assert "Your session waited in the queue for 1 min, its profile's limit" in message, message
    wait_for(lambda: user_jobs("erin") == [], 30, "erin's queued job to be cancelled")
    assert f"so its job {job_id} was cancelled" in home_page(hub, erin)
    assert blockers


def test_a_queued_session_waits_past_the_hubs_start_timeout(hub: Hub, clean: None) -> None:
    """The hub's start_timeout counts on top of the queue: a spawn behind full nodes is kept
    past it (its profile's queue limit is 4 h) and starts when GPUs come free."""
    hub.extra_env["PORTAL_START_TIMEOUT"] = "20"
    hub.restart()
    try:
        blockers = fill_lane_gpus(*NODES)
        erin = hub.login("erin")
        assert spawn(hub, erin, "erin").status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("erin", "%i"), 20, "erin's job")
        time.sleep(40)  # twice the start timeout
        assert state_of(job_id) == "PENDING"
        server = hub.server(erin, "erin")
        assert server is not None and server["pending"] == "spawn", server
        subprocess.run(["scancel", *blockers], check=True, timeout=20)
        hub.wait_ready(erin, "erin")
        assert user_jobs("erin", "%i") == [job_id]
    finally:
        cancel_user_jobs("grace")
        hub.stop_all(hub.login("grace"), "erin")
        del hub.extra_env["PORTAL_START_TIMEOUT"]
        hub.restart()
