"""A hub restart with one running and one queued server: both are still there after it."""

from __future__ import annotations

import json
import subprocess

import pytest
import requests

from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs, wait_for
from tests.integration.faults.helpers import fill_gpus

pytestmark = pytest.mark.integration


def job_state(job_id: str) -> str:
    out = subprocess.run(
        ["squeue", "-h", "--states=all", f"--jobs={job_id}", "-o", "%T|%r"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return out


def queued_message(
    hub: Hub, session: requests.Session, user: str, containing: str = "is queued"
) -> str:
    """The first message of the waiting page that contains `containing`, read from the
    progress event stream it uses (Slurm's reason comes a few seconds after the job)."""
    url = f"{hub.url}/hub/api/users/{user}/server/progress"
    with session.get(url, stream=True, timeout=30) as response:
        for line in response.iter_lines(decode_unicode=True):
            if line and line.startswith("data:"):
                event = json.loads(line[5:])
                if containing in event.get("message", ""):
                    return str(event["message"])
    raise AssertionError("no queued message in the progress stream")


def test_running_and_queued_servers_survive_a_hub_restart(hub: Hub, clean: None):
    alice = hub.login("alice")
    response = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert response.status_code in (201, 202), response.text
    running_url = hub.wait_ready(alice, "alice")["url"]
    [alice_job] = [line.split("|") for line in user_jobs("alice", "%i|%B")]
    alice_job_id, alice_node = alice_job
    other = "gpu02" if alice_node == "gpu01" else "gpu01"
    blockers = fill_gpus(alice_node, gpus=3) + fill_gpus(other)
    try:
        wait_for(lambda: all(job_state(j).startswith("RUNNING") for j in blockers), 30, "blockers")

        bob = hub.login("bob")
        # What the spawn form sends, an environment included: the resume must not depend on
        # the portal (which offers environments) being up before the resume service posts.
        form_options = {"profile": "gpu-1", "runtime": "08:00:00", "environment": "session"}
        response = hub.api(bob, "POST", "/users/bob/server", json={"user_options": form_options})
        # 202, or 201 after an earlier failed spawn of bob's: JupyterHub 6.1's get_spawner
        # (replace_failed) answers from a spawner it never stores, which is not pending.
        assert response.status_code in (201, 202), response.text
        [bob_job_id] = wait_for(lambda: user_jobs("bob", "%i"), 20, "bob's job")
        wait_for(lambda: job_state(bob_job_id) == "PENDING|Resources", 30, "bob's job to wait")
        message = queued_message(hub, bob, "bob", "waiting for GPUs to become free")
        assert f"Job {bob_job_id} is queued: waiting for GPUs to become free." in message

        hub.restart()

        # The running server is still running, reachable, on the same job.
        alice = hub.login("alice")
        assert hub.server_after_check(alice, "alice").get("ready") is True
        assert user_jobs("alice", "%i|%T") == [f"{alice_job_id}|RUNNING"]
        token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "t"}).json()["token"]
        status = requests.get(
            f"{hub.url}{running_url}api/status",
            headers={"Authorization": f"token {token}"},
            timeout=10,
        )
        assert status.status_code == 200, status.text

        # The queued server is queued again, on the very same job: nothing resubmitted.
        bob = hub.login("bob")
        wait_for(lambda: (hub.server(bob, "bob") or {}).get("pending") == "spawn", 60, "resume")
        # Taken over, with a new token, before GPUs free up: a job that starts during the
        # takeover still holds the token the restart let go, and is cancelled as serving nobody
        # (gpuportal_spawner.slurm_spawner._adopt; a clean-clone CI of 2026-11-29 met it).
        took_over = f"Took over job {bob_job_id} "
        wait_for(lambda: took_over in hub.log_path.read_text(errors="replace"), 60, "takeover")
        assert user_jobs("bob", "%i|%T") == [f"{bob_job_id}|PENDING"]

        # When GPUs free up, the same job starts and the server comes up.
        cancel_user_jobs("carol")
        hub.wait_ready(bob, "bob", timeout=120)
        assert user_jobs("bob", "%i|%T") == [f"{bob_job_id}|RUNNING"]
    finally:
        cancel_user_jobs("carol")
