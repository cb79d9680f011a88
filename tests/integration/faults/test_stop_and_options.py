"""Stop means stop, in every stage; options that fail the checks are never stored."""

from __future__ import annotations

import time

import pytest

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import fill_gpus, home_page, spawn, state_of

pytestmark = pytest.mark.integration


def test_stopping_a_queued_server_cancels_its_job_and_it_never_comes_back(hub: Hub, clean: None):
    try:
        fill_gpus("gpu01", "gpu02")
        bob = hub.login("bob")
        assert spawn(hub, bob, "bob").status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("bob", "%i"), 20, "bob's job")
        wait_for(lambda: state_of(job_id) == "PENDING", 20, "bob's job to wait")

        begun = time.monotonic()
        response = hub.api(bob, "DELETE", "/users/bob/server")
        assert response.status_code in (202, 204), response.text
        wait_for(lambda: state_of(job_id) in ("", "CANCELLED"), 5, "the job to leave the queue")
        assert time.monotonic() - begun < 5
        wait_for(lambda: hub.server(bob, "bob") is None, 10, "the server to go")

        # The resume service looks every 3 s: nothing brings the server or a job back.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert user_jobs("bob") == [], "a job of bob's came back"
            assert hub.server(bob, "bob") is None, "bob's server came back"
            time.sleep(1)
    finally:
        cancel_user_jobs("carol")


def test_options_that_fail_the_checks_are_never_stored(hub: Hub, clean: None):
    bob = hub.login("bob")
    assert spawn(hub, bob, "bob", runtime="02:00:00").status_code in (201, 202)
    hub.wait_ready(bob, "bob")
    carol = hub.login("carol")
    hub.stop_server(carol, "bob")

    for bad in ({"profile": 1}, {"profile": ["gpu-1"]}, {"profile": "gpu-1", "runtime": 5}):
        response = hub.api(bob, "POST", "/users/bob/server", json={"user_options": bad})
        assert response.status_code == 400, (bad, response.text)
        assert "Traceback" not in response.text
        # Every page of bob's still works, and an admin can still manage him.
        assert 'id="gp-sessions"' in home_page(hub, bob)
        cards = bob.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"]
        assert [(c["name"], c["state"], c["profile"]) for c in cards] == [("", "stopped", "1 GPU")]
        assert bob.get(f"{hub.url}/hub/spawn", timeout=30).status_code == 200
        model = hub.api(carol, "GET", "/users/bob?include_stopped_servers=1").json()
        # The last good options, as checked (the profile's first environment filled in).
        assert model["servers"][""]["user_options"] == {
            "profile": "gpu-1",
            "runtime": "02:00:00",
            "environment": "session",
        }
        assert hub.api(carol, "DELETE", "/users/bob/server").status_code in (202, 204)
    assert user_jobs("bob") == []

    # An admin can delete the user too (the directory brings him back at his next login).
    assert spawn(hub, bob, "bob", runtime=5).status_code == 400  # type: ignore[arg-type]
    assert hub.api(carol, "DELETE", "/users/bob").status_code == 204
    bob = hub.login("bob")
    assert spawn(hub, bob, "bob", runtime="02:00:00").status_code in (201, 202)
    hub.wait_ready(bob, "bob")
    hub.stop_server(carol, "bob")

    # The stored (good) options are what a spawn without options uses.
    assert hub.api(bob, "POST", "/users/bob/server", json={}).status_code in (201, 202)
    hub.wait_ready(bob, "bob")
    assert user_jobs("bob", "%l") == ["2:00:00"]
