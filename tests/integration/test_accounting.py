"""Slurm accounting on the local cluster (issue 13, 5): slurmdbd and MariaDB as deploy/local
runs them, group ds's GPU limit (6, GrpTRES on its account) enforced by Slurm and shown on the
spawn page, and a finished job's history read from sacct once squeue has forgotten it.

One test, because the wait for Slurm to forget a job (MinJobAge, 60 s here) is long: the limit is
checked while it runs.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
import requests

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import spawn
from tests.integration.test_multinode_jobs import JOBS, alice_token

pytestmark = pytest.mark.integration
__all__ = ["alice_token"]


def _known_to_the_controller(job_id: str) -> bool:
    shown = subprocess.run(
        ["scontrol", "show", "job", job_id], capture_output=True, text=True, timeout=20
    )
    return shown.returncode == 0


def _card(hub: Hub, session: requests.Session) -> dict[str, Any]:
    cards: list[dict[str, Any]] = session.get(
        f"{hub.url}/hub/gpuportal/sessions", timeout=30
    ).json()["sessions"]
    return cards[0]


def test_group_limit_and_history_after_squeue_forgot(
    hub: Hub, clean: None, alice_token: str
) -> None:
    headers = {"Authorization": f"token {alice_token}"}
    body = {
        "name": "hostname-2",
        "launcher": "srun",
        "nodes": 2,
        "gpus_per_node": 1,
        "runtime": "00:05:00",
        "command": "hostname",
    }
    submitted = requests.post(f"{hub.url}{JOBS}", headers=headers, json=body, timeout=60)
    assert submitted.status_code == 201, submitted.text
    record_id = submitted.json()["id"]
    # Nobody looks at the job list until the controller has forgotten the job: only sacct can
    # tell the portal how it ended.
    [slurm_id] = wait_for(lambda: user_jobs("alice", "%i"), 30, "the job in squeue")
    wait_for(lambda: user_jobs("alice") == [], 120, "the job to end")

    # Group ds (alice, bob) may hold 6 GPUs at once: alice takes 4.
    alice, bob = hub.login("alice"), hub.login("bob")
    assert spawn(hub, alice, "alice", profile="gpu-4").status_code in (201, 202)
    hub.wait_ready(alice, "alice")

    def bob_sees_it() -> dict[str, Any] | None:
        view: dict[str, Any] = bob.get(f"{hub.url}/hub/gpuportal/capacity", timeout=30).json()
        return view if "uses 4 of its 6 GPUs" in view["group"] else None

    view = wait_for(bob_sees_it, 90, "bob's spawn page to show his group's use")
    assert view["group"].startswith("Your group ds uses 4 of its 6 GPUs (you: 0)")
    # gpu02 has four free GPUs, but bob's group may take only two more.
    assert view["profiles"]["gpu-1"]["now"] is True
    assert view["profiles"]["gpu-4"]["text"].startswith("Waits for your group's GPU limit")
    form = bob.get(f"{hub.url}/hub/spawn", timeout=30).text
    assert "Your group ds uses 4 of its 6 GPUs" in form

    # Slurm holds bob's 4-GPU session, and the hub says why in words.
    assert spawn(hub, bob, "bob", profile="gpu-4").status_code in (201, 202)
    wait_for(lambda: user_jobs("bob", "%T|%r") == ["PENDING|AssocGrpGRES"], 30, "Slurm to hold it")
    wait_for(
        lambda: "your group is at its GPU limit" in _card(hub, bob)["words"],
        30,
        "the card to say why",
    )
    hub.stop_all(hub.login("carol"), "bob")
    hub.stop_all(hub.login("carol"), "alice")
    cancel_user_jobs("alice", "bob")

    # MinJobAge (60 s here) after its end, the controller forgets the job.
    wait_for(lambda: not _known_to_the_controller(slurm_id), 300, "Slurm to forget the job", step=3)
    detail = requests.get(f"{hub.url}{JOBS}/{record_id}", headers=headers, timeout=60).json()
    assert (detail["state"], detail["exit_code"], detail["nodes"]) == (
        "COMPLETED",
        0,
        "gpu[01-02]",
    ), detail
    assert detail["ended_at"], detail
