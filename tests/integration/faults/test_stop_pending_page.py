"""Stop Server on the spawn-pending page, in Chromium, while the job waits for GPUs: the job
leaves the queue within 5 s and neither it nor the server comes back (watched for 2 minutes)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import state_of
from tests.integration.second_lane import NODES, fill_lane_gpus

pytestmark = pytest.mark.integration


def test_stop_on_the_pending_page_ends_the_queued_job_for_good(
    hub: Hub, clean: None, browser, tmp_path: Path
):
    page = browser.new_page()  # type: ignore[attr-defined]
    page.set_default_timeout(60_000)
    try:
        fill_lane_gpus(*NODES)
        page.goto(f"{hub.url}/hub/login")
        page.fill("#username_input", "frank")
        page.fill("#password_input", "frank-test")
        page.click("#login_submit")
        page.wait_for_url("**/hub/spawn**")
        page.check("input[name=profile][value=gpu-1]")
        page.click("#spawn_form button[type=submit]")
        page.wait_for_url("**/spawn-pending/**")
        # The page says why it waits, in words, before anything is stopped.
        page.wait_for_function(
            "document.body.innerText.includes('waiting for GPUs to become free')"
        )
        [job_id] = user_jobs("frank", "%i")
        page.screenshot(path=str(tmp_path / "pending.png"))

        page.click("#stop-server-btn")
        begun = time.monotonic()
        wait_for(lambda: state_of(job_id) in ("", "CANCELLED"), 5, "the job to leave the queue")
        left_after = time.monotonic() - begun
        assert left_after < 5, f"the job left after {left_after:.1f} s"
        # The hub's stop ends once Slurm says the job has (a look or two after it left).
        grace = hub.login("grace")
        wait_for(lambda: hub.server(grace, "frank") is None, 10, "the hub's stop to end")

        deadline = time.monotonic() + 60  # 20 polls of the hub and the resumer (3 s here)
        while time.monotonic() < deadline:
            assert user_jobs("frank") == [], "a job of frank's came back"
            server = hub.server(grace, "frank")
            assert server is None, f"frank's server came back: {server}"
            time.sleep(5)
    finally:
        page.close()
        cancel_user_jobs("grace")
