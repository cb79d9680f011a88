"""The hub's and the portal's metrics move with real spawns, jobs and logins (issue 13, 2)."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.conftest import Hub, cancel_user_jobs
from tests.integration.test_cli import token_of

pytestmark = pytest.mark.integration

Figures = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(hub: Hub, path: str, token: str) -> Figures:
    answer = requests.get(hub.url + path, headers={"Authorization": f"token {token}"}, timeout=60)
    assert answer.status_code == 200, answer.text[:300]
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def value(figures: Figures, name: str, **labels: str) -> float:
    return figures.get((name, frozenset(labels.items())), 0.0)


def failed_login(hub: Hub, user: str) -> None:
    """A login with a wrong password, as the login form sends it (with its XSRF token)."""
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=30)
    answer = session.post(
        f"{hub.url}/hub/login",
        data={"username": user, "password": "wrong", "_xsrf": session.cookies.get("_xsrf", "")},
        allow_redirects=False,
        timeout=60,
    )
    assert answer.status_code == 403, answer.status_code


def moved(before: Figures, after: Figures, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_figures_move_with_real_spawns_jobs_and_logins(hub: Hub, clean: None) -> None:
    cancel_user_jobs("alice")
    carol = token_of(hub, "carol")
    hub_before = scrape(hub, "/hub/metrics", carol)
    portal_before = scrape(hub, "/services/portal/metrics", carol)

    failed_login(hub, "alice")
    alice = hub.login("alice")
    body = {"user_options": {"profile": "gpu-1"}}
    assert hub.api(alice, "POST", "/users/alice/server", json=body).status_code in (201, 202)
    hub.wait_ready(alice, "alice")
    assert alice.get(f"{hub.url}/hub/gpuportal/capacity", timeout=60).status_code == 200
    alice_token = token_of(hub, "alice")
    job: dict[str, Any] = {
        "name": "counted",
        "launcher": "srun",
        "nodes": 1,
        "gpus_per_node": 1,
        "command": "true",
    }
    submitted = requests.post(
        f"{hub.url}/services/portal/api/jobs",
        headers={"Authorization": f"token {alice_token}"},
        json=job,
        timeout=60,
    )
    assert submitted.status_code == 201

    hub_after = scrape(hub, "/hub/metrics", carol)
    portal_after = scrape(hub, "/services/portal/metrics", carol)
    calls = "gpuportal_slurm_calls_total"
    assert moved(hub_before, hub_after, calls, command="sbatch", outcome="ok") == 1.0
    assert moved(hub_before, hub_after, "gpuportal_queue_wait_seconds_count", profile="gpu-1") == 1
    failures = "gpuportal_login_failures_total"
    assert moved(hub_before, hub_after, failures, why="wrong name or password") == 1.0
    submissions = "gpuportal_job_submissions_total"
    assert (
        moved(portal_before, portal_after, submissions, launcher="srun", outcome="submitted") == 1
    )
    portal_calls = "gpuportal_portal_slurm_calls_total"
    assert moved(portal_before, portal_after, portal_calls, command="sbatch", outcome="ok") == 1
    for kind in ("a100", "h100"):  # gpu01's and gpu02's
        assert value(hub_after, "gpuportal_gpus", partition="gpu", kind=kind, state="total") == 4
        # Free GPUs as of the last look at the cluster (shared, at most capacity_ttl old).
        labels = {"partition": "gpu", "kind": kind, "state": "free"}
        free = hub_after.get(("gpuportal_gpus", frozenset(labels.items())))
        assert free is not None and 0.0 <= free <= 4.0
    assert value(hub_after, "gpuportal_sessions", state="running", profile="gpu-1") >= 1.0
    assert value(hub_after, "gpuportal_slurm_call_seconds_count", command="squeue") > 0

    # Not for users.
    refused = requests.get(
        hub.url + "/services/portal/metrics",
        headers={"Authorization": f"token {alice_token}"},
        timeout=60,
    )
    assert refused.status_code == 403
    cancel_user_jobs("alice")
