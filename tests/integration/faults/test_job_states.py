"""A running session through the states Slurm can put its job in: the server is kept while the
job comes back by itself, and ends with a message saying why when it does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import requests

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import (
    failed_spawn_message,
    home_page,
    running_session,
    scontrol,
    skip_requeue_hold,
    spawn,
    state_of,
)
from tests.integration.second_lane import NODES, fill_lane_gpus

pytestmark = pytest.mark.integration


def _lab_answers(hub: Hub, session: requests.Session, user: str) -> bool:
    token = hub.api(session, "POST", f"/users/{user}/tokens", json={"note": "t"}).json()["token"]
    url = f"{hub.url}/user/{user}/api/status"
    try:
        response = requests.get(url, headers={"Authorization": f"token {token}"}, timeout=5)
    except requests.RequestException:
        return False
    return response.status_code == 200


def test_suspended_then_requeued_session_is_kept_and_comes_back(hub: Hub, clean: None):
    erin, job_id, _ = running_session(hub, "erin")

    scontrol("suspend", job_id)
    note = "was suspended by an administrator. It goes on where it was when it is resumed."
    wait_for(lambda: note in home_page(hub, erin), 20, "the home page to say so")
    assert hub.server(erin, "erin")["ready"] is True
    scontrol("resume", job_id)
    wait_for(lambda: note not in home_page(hub, erin), 20, "the note to go")
    wait_for(lambda: _lab_answers(hub, erin, "erin"), 30, "JupyterLab to answer again")

    scontrol("requeue", job_id)
    note = "was put back in the queue by Slurm. JupyterLab starts again when it runs"
    wait_for(lambda: note in home_page(hub, erin), 30, "the home page to say so")
    assert hub.server(erin, "erin") is not None
    # Slurm starts the same job again (its requeue delay lifted); the route follows JupyterLab.
    skip_requeue_hold(job_id)
    wait_for(lambda: state_of(job_id) == "RUNNING", 60, "the requeued job to run", step=2)
    wait_for(lambda: _lab_answers(hub, erin, "erin"), 60, "JupyterLab to answer again")
    wait_for(lambda: note not in home_page(hub, erin), 20, "the note to go")
    assert user_jobs("erin", "%i") == [job_id]


def test_session_at_its_time_limit_ends_with_a_message(hub: Hub, clean: None):
    erin, _, _ = running_session(hub, "erin", runtime="00:01:00")
    wait_for(lambda: hub.server(erin, "erin") is None, 180, "the time limit", step=2)
    page = home_page(hub, erin)
    # One read of the page, and the note itself in a failure (not the whole page).
    note = page[page.find('id="session-note"') :].split("</div>", 1)[0]
    assert "Your session (job" in note and "reached its 1 min time limit." in note, note
    assert user_jobs("erin") == []


def test_a_queued_job_whose_log_folder_became_unwritable_says_so(hub: Hub, clean: None):
    log_dir = Path("/home/frank/.jupyterhub-logs")
    try:
        blockers = fill_lane_gpus(*NODES)
        frank = hub.login("frank")
        response = spawn(hub, frank, "frank")
        assert response.status_code in (201, 202)
        [job_id] = wait_for(lambda: user_jobs("frank", "%i"), 20, "frank's job")
        wait_for(lambda: state_of(job_id) == "PENDING", 20, "frank's job to wait")
        log_dir.chmod(0o500)  # while it waits, the folder of its log becomes read-only
        subprocess.run(["scancel", *blockers], check=True)
        message = failed_spawn_message(hub, frank, "frank", response)
        assert f"The JupyterLab job {job_id} failed while starting (FAILED)" in message, message
        assert f"Slurm could not write its log: {log_dir} is not a folder you can write" in message
    finally:
        log_dir.chmod(0o700)
        cancel_user_jobs("grace")
