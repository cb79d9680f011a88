"""Stop means stop, in every stage; options that fail the checks are never stored."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.hubproc import Hub, state_dir, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import home_page, late_sbatch_hub, spawn, state_of
from tests.integration.second_lane import HUB_ENV, NODES, fill_lane_gpus

pytestmark = pytest.mark.integration


def test_stopping_a_queued_server_cancels_its_job_and_it_never_comes_back(hub: Hub, clean: None):
    try:
        fill_lane_gpus(*NODES)
        frank = hub.login("frank")
        assert spawn(hub, frank, "frank").status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("frank", "%i"), 20, "frank's job")
        wait_for(lambda: state_of(job_id) == "PENDING", 20, "frank's job to wait")

        begun = time.monotonic()
        response = hub.api(frank, "DELETE", "/users/frank/server")
        assert response.status_code in (202, 204), response.text
        wait_for(lambda: state_of(job_id) in ("", "CANCELLED"), 5, "the job to leave the queue")
        assert time.monotonic() - begun < 5
        wait_for(lambda: hub.server(frank, "frank") is None, 10, "the server to go")

        # The resume service looks every 3 s: nothing brings the server or a job back.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert user_jobs("frank") == [], "a job of frank's came back"
            assert hub.server(frank, "frank") is None, "frank's server came back"
            time.sleep(1)
    finally:
        cancel_user_jobs("grace")


def test_options_that_fail_the_checks_are_never_stored(hub: Hub, clean: None):
    frank = hub.login("frank")
    assert spawn(hub, frank, "frank", runtime="02:00:00").status_code in (201, 202)
    hub.wait_ready(frank, "frank")
    grace = hub.login("grace")
    hub.stop_server(grace, "frank")

    for bad in ({"profile": 1}, {"profile": ["gpu-1"]}, {"profile": "gpu-1", "runtime": 5}):
        response = hub.api(frank, "POST", "/users/frank/server", json={"user_options": bad})
        assert response.status_code == 400, (bad, response.text)
        assert "Traceback" not in response.text
        # Every page of frank's still works, and an admin can still manage him.
        assert 'id="gp-sessions"' in home_page(hub, frank)
        cards = frank.get(f"{hub.url}/hub/gpuportal/sessions", timeout=30).json()["sessions"]
        assert [(c["name"], c["state"], c["profile"]) for c in cards] == [("", "stopped", "1 GPU")]
        assert frank.get(f"{hub.url}/hub/spawn", timeout=30).status_code == 200
        model = hub.api(grace, "GET", "/users/frank?include_stopped_servers=1").json()
        # The last good options, as checked (the profile's first environment filled in).
        assert model["servers"][""]["user_options"] == {
            "profile": "gpu-1",
            "runtime": "02:00:00",
            "environment": "session",
        }
        assert hub.api(grace, "DELETE", "/users/frank/server").status_code in (202, 204)
    assert user_jobs("frank") == []

    # An admin can delete the user too (the directory brings him back at his next login).
    assert spawn(hub, frank, "frank", runtime=5).status_code == 400  # type: ignore[arg-type]
    assert hub.api(grace, "DELETE", "/users/frank").status_code == 204
    frank = hub.login("frank")
    assert spawn(hub, frank, "frank", runtime="02:00:00").status_code in (201, 202)
    hub.wait_ready(frank, "frank")
    hub.stop_server(grace, "frank")

    # The stored (good) options are what a spawn without options uses.
    assert hub.api(frank, "POST", "/users/frank/server", json={}).status_code in (201, 202)
    hub.wait_ready(frank, "frank")
    assert user_jobs("frank", "%l") == ["2:00:00"]


@pytest.fixture
def slow_to_cancel_hub() -> Iterator[Hub]:
    """A hub of its own whose spawns hang in an sbatch that submits, then ignores SIGTERM: a
    cancelled spawn takes over a second to end (the spawner's TERM grace, then KILL)."""
    with late_sbatch_hub(
        state_dir(), {**HUB_ENV, "PORTAL_HUB_ID": "test-deaf"}, slurm_timeout=45, deaf=True
    ) as instance:
        yield instance


def test_stop_during_a_spawn_slow_to_cancel_ends_the_job_and_the_server(
    hub: Hub, clean: None, slow_to_cancel_hub: Hub
):
    """JupyterHub gives a cancelled spawn one second before it stops the server; past that its
    DELETE answered 500 and left the server record and the job behind
    (gpuportal_spawner.stop_handler)."""
    late = slow_to_cancel_hub
    frank = late.login("frank")
    assert spawn(late, frank, "frank").status_code in (201, 202)
    # Submitted, and the spawn still waits on the sbatch that submitted it.
    [job_id] = wait_for(lambda: user_jobs("frank", "%i"), 20, "frank's job")

    response = late.api(frank, "DELETE", "/users/frank/server")
    assert response.status_code in (202, 204), response.text
    wait_for(lambda: late.server(frank, "frank") is None, 30, "the server to go")
    wait_for(lambda: state_of(job_id) in ("", "CANCELLED"), 30, "the job to end")
    assert "Interrupting the spawn of frank" in late.log_tail(300)
