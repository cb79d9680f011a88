"""The audit stream on real logins, spawns, extends, stops and jobs (issue 13, 3)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub, cancel_user_jobs, wait_for
from tests.integration.test_cli import token_of
from tests.integration.test_live_profiles import log_in
from tests.integration.test_metrics import failed_login

pytestmark = pytest.mark.integration

EVENTS = "/services/portal/api/audit/events"


def events(hub: Hub, token: str, **params: str) -> list[dict[str, Any]]:
    answer = requests.get(
        hub.url + EVENTS, headers={"Authorization": f"token {token}"}, params=params, timeout=60
    )
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()
    return found


def test_who_did_what_is_recorded_and_readable_by_admins_only(
    hub: Hub, clean: None, browser: Any
) -> None:
    cancel_user_jobs("alice")
    carol = token_of(hub, "carol")
    failed_login(hub, "alice")
    alice = hub.login("alice")
    body = {"user_options": {"profile": "gpu-1", "runtime": "01:00:00"}}
    assert hub.api(alice, "POST", "/users/alice/server", json=body).status_code in (201, 202)
    hub.wait_ready(alice, "alice")
    extended = alice.post(f"{hub.url}/hub/gpuportal/extend", json={"server": "", "add": "00:30:00"})
    assert extended.status_code == 200, extended.text
    hub.stop_server(alice, "alice")
    alice_token = token_of(hub, "alice")
    job = requests.post(
        f"{hub.url}/services/portal/api/jobs",
        headers={"Authorization": f"token {alice_token}"},
        json={
            "name": "audited",
            "launcher": "srun",
            "nodes": 1,
            "gpus_per_node": 1,
            "command": "sleep 120",
        },
        timeout=60,
    ).json()
    cancelled = requests.delete(
        f"{hub.url}/services/portal/api/jobs/{job['id']}",
        headers={"Authorization": f"token {alice_token}"},
        timeout=60,
    )
    assert cancelled.status_code == 202

    assert alice.get(f"{hub.url}/hub/logout", timeout=60).status_code == 200

    wait_for(lambda: events(hub, carol, user="alice", action="job_cancel"), 10, "the cancel line")
    seen = events(hub, carol, user="alice")
    actions = [e["action"] for e in seen]
    for action in (
        "login_failed",
        "login",
        "spawn",
        "extend",
        "stop",
        "job_submit",
        "job_cancel",
        "logout",
    ):
        assert action in actions, actions
    spawn = next(e for e in seen if e["action"] == "spawn")
    assert (spawn["profile"], spawn["gpus"], spawn["cores"], spawn["mem_gb"]) == ("gpu-1", 1, 8, 48)
    assert spawn["runtime"] == "01:00:00" and spawn["job"] and spawn["source"] == "hub"
    assert (spawn["by"], spawn["role"]) == ("alice", "owner")  # who started whose server
    stop = next(e for e in seen if e["action"] == "stop")
    assert stop["job"] == spawn["job"] and "stopped on the hub" in stop["why"]
    extend = next(e for e in seen if e["action"] == "extend")
    assert (extend["limit_before"], extend["limit_after"]) == ("01:00:00", "01:30:00")
    failed = next(e for e in seen if e["action"] == "login_failed")
    assert failed["why"] == "wrong name or password"
    submitted = next(e for e in seen if e["action"] == "job_submit")
    assert submitted["job"] == job["slurm_job_id"] and submitted["source"] == "portal"
    # Newest first; filters by action.
    assert seen[0]["time"] >= seen[-1]["time"]
    assert {e["action"] for e in events(hub, carol, action="spawn")} == {"spawn"}

    # Not for users.
    mine = requests.get(
        hub.url + EVENTS, headers={"Authorization": f"token {alice_token}"}, timeout=60
    )
    assert mine.status_code == 403

    # The admin page shows the same, filtered.
    page = log_in(browser, hub, "carol", "carol-demo")
    page.goto(f"{hub.url}/services/portal/admin/audit?user=alice&action=spawn")
    rows = page.locator("#events tr[data-action='spawn']")
    assert rows.count() >= 1 and "gpu-1" in rows.first.inner_text()
    cancel_user_jobs("alice")
