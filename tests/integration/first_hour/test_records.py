"""Issue 20, item 13: records do what was asked. A cancelled job can be removed at once (no
invented "CANCELLING" state, no "cancel it first"); a removed session record stays removed
although Slurm still lists its ended job. In Chromium, as alice."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub, cancel_user_jobs, user_jobs, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

JOBS = "/services/portal/api/jobs"


def test_a_cancelled_job_is_removed_at_once(hub: Hub, browser: Any) -> None:
    cancel_user_jobs("alice")
    alice = hub.login("alice")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={}).json()["token"]
    body = {
        "name": "to-cancel",
        "launcher": "srun",
        "nodes": 1,
        "gpus_per_node": 1,
        "command": "sleep 600",
    }
    answer = requests.post(
        f"{hub.url}{JOBS}", headers={"Authorization": f"token {token}"}, json=body, timeout=60
    )
    assert answer.status_code == 201, answer.text
    job = answer.json()["id"]
    page = log_in(browser, hub, "alice", "alice-demo")
    page.on("dialog", lambda dialog: dialog.accept())  # Remove asks first
    page.goto(f"{hub.url}/services/portal/jobs")
    row = page.locator(f'#jobs tbody tr[data-job="{job}"]')
    row.locator(".gp-state", has_text="Running").wait_for(timeout=60_000)
    row.locator("button:has-text('Cancel')").click()
    row.locator(".gp-state", has_text="Cancelled").wait_for(timeout=20_000)
    row.locator("button:has-text('Remove')").click()
    row.wait_for(state="detached", timeout=20_000)
    assert page.inner_text("#form-note") == ""
    assert user_jobs("alice") == []


def test_a_removed_session_record_stays_removed(hub: Hub, clean: None, browser: Any) -> None:
    alice = hub.login("alice")
    body = {"user_options": {"profile": "gpu-1"}}
    assert hub.api(alice, "POST", "/users/alice/server", json=body).ok
    hub.wait_ready(alice, "alice")
    [job_id] = [line.split("|")[0] for line in user_jobs("alice")]
    hub.stop_server(alice, "alice")
    page = log_in(browser, hub, "alice", "alice-demo")
    page.on("dialog", lambda dialog: dialog.accept())
    row = page.locator("#jobs tbody tr[data-kind=session]", has_text=f"Slurm job {job_id}")

    def listed() -> bool:
        page.goto(f"{hub.url}/services/portal/jobs")
        page.wait_for_selector("#jobs-count:has-text('job')")
        return row.count() == 1 and "Stopped" in row.inner_text()

    wait_for(listed, 90, "the stopped session in the history", step=3)
    row.locator("button:has-text('Remove')").click()
    row.wait_for(state="detached", timeout=20_000)
    # Slurm still lists the ended job (MinJobAge), and the job watcher's looks (every 5 s)
    # come and go: the record does not come back.
    assert job_id in user_jobs("alice", "%i", "--states=all")
    time.sleep(12)
    page.goto(f"{hub.url}/services/portal/jobs")
    page.wait_for_selector("#jobs-count:has-text('job')")
    assert row.count() == 0
