"""Issue 20, item 8: a job's output opens right under its row, in view, not below the whole list.
In Chromium, as alice, with a list longer than the screen."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub, cancel_user_jobs, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

JOBS = "/services/portal/api/jobs"


def test_the_output_opens_under_its_row_in_view(hub: Hub, browser: Any) -> None:
    cancel_user_jobs("alice")
    alice = hub.login("alice")
    token = hub.api(alice, "POST", "/users/alice/tokens", json={}).json()["token"]
    headers = {"Authorization": f"token {token}"}
    body = {"launcher": "srun", "nodes": 1, "gpus_per_node": 1, "command": "hostname"}
    ids = []
    for number in range(12):  # a list longer than the screen
        answer = requests.post(
            f"{hub.url}{JOBS}", headers=headers, json={**body, "name": f"out-{number}"}, timeout=60
        )
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["id"])

    page = log_in(browser, hub, "alice", "alice-demo")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{hub.url}/services/portal/jobs")
    row = page.locator(f'#jobs tbody tr[data-job="{ids[-1]}"]')
    row.scroll_into_view_if_needed()
    wait_for(lambda: "Completed" in row.inner_text(), 90, "the job to complete")
    row.locator("button:has-text('Output')").click()
    # The box is the next row of the table, and in view with the job's output.
    below = page.locator(f'#jobs tbody tr[data-job="{ids[-1]}"] + tr.gp-detail-row #detail-box')
    below.wait_for()
    wait_for(lambda: "gpu0" in page.inner_text("#job-detail"), 15, "the output")
    # The page scrolls to it smoothly: give the animation its time (under load, the clean-clone
    # run caught it on its way, at y 831 of 800).

    def in_view() -> bool:
        box = below.bounding_box()
        return box is not None and 0 <= box["y"] < 800

    wait_for(in_view, 5, f"the output box in view (at {below.bounding_box()})")
    cancel_user_jobs("alice")
