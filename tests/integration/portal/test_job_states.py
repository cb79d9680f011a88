"""Job states are kept by the portal's one loop, whoever looks (issue 37): with bob's pages
reading his list many times a second, alice's job, and his own, read as ended within one look of
Slurm saying so. Before, a list read in the 2 s after anybody's look applied nothing, and bob's
reads took nearly every look: alice's ended job stayed PENDING for as long as he kept looking."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuportal_core.states import job_state
from tests.integration.conftest import cancel_user_jobs
from tests.integration.jobs import install_job_files
from tests.integration.portal.test_jobs_api import API, WHERE, as_user

pytestmark = pytest.mark.integration

SHORT = {**WHERE, "nodes": 1, "gpus_per_node": 1}
# Slack beyond one look's interval: the step itself (squeue, then scontrol for each ended job)
# on a loaded 2-core machine.
SLACK_S = 5.0


@pytest.fixture
def two_users() -> Iterator[None]:
    for user in ("alice", "bob"):
        install_job_files(user)
    cancel_user_jobs("alice", "bob")
    yield
    cancel_user_jobs("alice", "bob")


def slurm_state(job_id: str) -> str:
    """What scontrol says now, asked by the test itself (not through the portal)."""
    line = subprocess.run(
        ["scontrol", "show", "job", "--oneliner", job_id],
        capture_output=True, text=True, timeout=20, check=False,
    ).stdout  # fmt: skip
    return next((f.split("=", 1)[1] for f in line.split() if f.startswith("JobState=")), "")


def submit(portal: TestClient, token: str, job: dict[str, Any]) -> dict[str, Any]:
    response = portal.post(f"{API}/jobs", headers=as_user(token), json=job)
    assert response.status_code == 201, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_both_users_jobs_reach_their_end_while_one_of_them_polls(
    portal: TestClient, tokens: dict[str, str], two_users: None
) -> None:
    interval = portal.app.state.settings.job_look_seconds  # type: ignore[attr-defined]
    bob, alice = as_user(tokens["bob"]), as_user(tokens["alice"])
    # bob keeps a job running, so that each of his reads has a live job to look at.
    submit(portal, tokens["bob"], {**SHORT, "script": "/home/bob/jobs/wait.sh"})
    stop = threading.Event()
    reads = 0

    def bob_polls() -> None:
        nonlocal reads
        while not stop.is_set():
            assert portal.get(f"{API}/jobs", headers=bob).status_code == 200
            reads += 1
            time.sleep(0.05)

    # Two of bob's tabs, each reading every 50 ms.
    pollers = [threading.Thread(target=bob_polls, daemon=True) for _ in range(2)]
    for poller in pollers:
        poller.start()
    try:
        jobs = {
            "alice": submit(portal, tokens["alice"], SHORT),
            "bob": submit(portal, tokens["bob"], {**SHORT, "script": "/home/bob/jobs/where.sh"}),
        }
        for user, job in jobs.items():
            headers = alice if user == "alice" else bob
            deadline = time.monotonic() + 120
            while not job_state(slurm_state(job["slurm_job_id"])).final:
                assert time.monotonic() < deadline, f"{user}'s job never ended in Slurm"
                time.sleep(0.2)
            ended = time.monotonic()
            while True:
                listed = portal.get(f"{API}/jobs", headers=headers).json()
                (mine,) = [j for j in listed if j["id"] == job["id"]]
                if job_state(mine["state"]).final:
                    break
                waited = time.monotonic() - ended
                assert waited < interval + SLACK_S, (
                    f"{user}'s job ended in Slurm {waited:.1f} s ago and the list still says "
                    f"{mine['state']} (bob read his list {reads} times meanwhile)"
                )
                time.sleep(1.0)  # alice's page: once a second
            assert mine["state"] == "COMPLETED", mine
    finally:
        stop.set()
        for poller in pollers:
            poller.join(10)
    assert reads > 20, "bob's reads did not go on while the jobs ran"
