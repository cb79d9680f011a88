"""Jobs that run a command, job arrays, filters and removable history, through the real hub and
Slurm (issue 12)."""

from __future__ import annotations

from typing import Any

import requests

from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.test_multinode_jobs import JOBS, alice_token, run_to_the_end

__all__ = ["alice_token"]  # the fixture, shared with the multi-node tests

ONE_GPU = {"nodes": 1, "gpus_per_node": 1, "runtime": "00:05:00", "launcher": "srun"}


def test_srun_hostname_runs_once_on_each_of_two_nodes(hub: Hub, alice_token: str) -> None:
    body = {**ONE_GPU, "name": "hostname", "nodes": 2, "command": "hostname"}
    _, detail = run_to_the_end(hub, alice_token, body)
    assert (detail["state"], detail["exit_code"]) == ("COMPLETED", 0), detail
    # Both fake nodes share this machine's host name, so: one line from each of two tasks.
    assert len(detail["output_tail"]) == 2, detail["output_tail"]
    assert detail["nodes"] == "gpu[01-02]"
    assert detail["script"].rstrip().endswith("srun --kill-on-bad-exit=1 hostname")

    body = {**body, "name": "node-names", "command": "printenv SLURMD_NODENAME"}
    _, detail = run_to_the_end(hub, alice_token, body)
    assert sorted(detail["output_tail"]) == ["gpu01", "gpu02"]


def test_an_array_of_four_tasks_reports_each_task(hub: Hub, alice_token: str) -> None:
    body = {**ONE_GPU, "name": "sweep", "command": "printenv SLURM_ARRAY_TASK_ID", "array": "0-3"}
    _, detail = run_to_the_end(hub, alice_token, body)
    assert detail["state"] == "COMPLETED", detail
    assert detail["tasks"] == dict.fromkeys(["0", "1", "2", "3"], "COMPLETED")
    assert "#SBATCH --array=0-3" in detail["script"]
    printed = [line for line in detail["output_tail"] if line and not line.startswith("==>")]
    assert sorted(printed) == ["0", "1", "2", "3"], detail["output_tail"]


def test_history_is_filtered_and_removable_by_its_owner_only(hub: Hub, alice_token: str) -> None:
    headers = {"Authorization": f"token {alice_token}"}
    _, done = run_to_the_end(hub, alice_token, {**ONE_GPU, "name": "done-one", "command": "true"})
    waiting = requests.post(
        f"{hub.url}{JOBS}",
        headers=headers,
        json={**ONE_GPU, "name": "sleeper", "command": "sleep 300"},
        timeout=60,
    ).json()
    listed = requests.get(
        f"{hub.url}{JOBS}", headers=headers, params={"phase": "ended", "q": "done"}, timeout=60
    ).json()
    assert [job["id"] for job in listed] == [done["id"]]

    # A job still alive cannot be forgotten: its record is what cancels it.
    alive = requests.delete(f"{hub.url}{JOBS}/{waiting['id']}/record", headers=headers, timeout=60)
    assert alive.status_code == 409 and "cancel it first" in alive.json()["detail"]
    assert any(line.startswith(waiting["slurm_job_id"]) for line in user_jobs("alice"))

    bob = hub.login("bob")
    bob_token = hub.api(bob, "POST", "/users/bob/tokens", json={"note": "x"}).json()["token"]
    other = requests.delete(
        f"{hub.url}{JOBS}/{done['id']}/record",
        headers={"Authorization": f"token {bob_token}"},
        timeout=60,
    )
    assert other.status_code == 404

    removed = requests.delete(f"{hub.url}{JOBS}/{done['id']}/record", headers=headers, timeout=60)
    assert removed.status_code == 204
    assert (
        requests.get(f"{hub.url}{JOBS}/{done['id']}", headers=headers, timeout=60).status_code
        == 404
    )


def test_sessions_join_the_history_and_stay_after_they_end(
    hub: Hub, clean: None, alice_token: str
) -> None:
    headers = {"Authorization": f"token {alice_token}"}

    def sessions() -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = requests.get(
            f"{hub.url}{JOBS}", headers=headers, params={"kind": "session"}, timeout=60
        ).json()
        return listed

    alice = hub.login("alice")
    body = {"user_options": {"profile": "gpu-1"}}
    assert hub.api(alice, "POST", "/users/alice/server", json=body).status_code in (201, 202)
    hub.wait_ready(alice, "alice")
    cards = alice.get(f"{hub.url}/hub/gpuportal/sessions", timeout=60).json()["sessions"]
    job_id = cards[0]["job_id"]

    def this_one() -> dict[str, Any] | None:
        # Other tests' sessions (and other hubs' with the same hub id) are in the history too.
        return next((s for s in sessions() if s["slurm_job_id"] == job_id), None)

    wait_for(lambda: (this_one() or {}).get("state") == "RUNNING", 60, "the session's record")
    record = this_one()
    assert record is not None
    assert (record["launcher"], record["name"], record["nodes"]) == (
        "jupyterlab",
        "default",
        "gpu01",
    )
    assert record["request"]["time_limit"] == "08:00:00"  # HH:MM:SS on every page
    # Batch jobs only: the session is not among them.
    jobs = requests.get(f"{hub.url}{JOBS}", headers=headers, params={"kind": "job"}, timeout=60)
    assert all(job["launcher"] != "jupyterlab" for job in jobs.json())
    # A session is stopped on the hub, not cancelled here.
    cancel = requests.delete(f"{hub.url}{JOBS}/{record['id']}", headers=headers, timeout=60)
    assert cancel.status_code == 409 and "stop it on the hub" in cancel.json()["detail"]

    hub.stop_server(alice, "alice")
    ended = {"CANCELLED", "COMPLETED", "ENDED"}
    wait_for(lambda: (this_one() or {}).get("state") in ended, 90, "the record to say it ended")
    stopped = this_one() or {}
    assert stopped["started_at"] and stopped["ended_at"] >= stopped["started_at"], stopped
    removed = requests.delete(f"{hub.url}{JOBS}/{record['id']}/record", headers=headers, timeout=60)
    assert removed.status_code == 204 and this_one() is None
