"""The scheduler misbehaving: slurmctld down, a node set down, an sbatch that answers too late.

None of them loses a server or duplicates a job; a spawn that cannot reach Slurm is told so.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hubproc import REPO, Hub, state_dir, wait_for
from tests.integration.conftest import user_jobs
from tests.integration.faults.helpers import (
    LATE_SLEEP,
    failed_spawn_message,
    home_page,
    late_sbatch_hub,
    running_session,
    scontrol,
    spawn,
    state_of,
)
from tests.integration.second_lane import HUB_ENV

pytestmark = pytest.mark.integration

SLURMCTLD_PID = Path("/var/lib/portal-local/run/slurmctld.pid")
OUTAGE_S = 30  # ten polls; every other test waits meanwhile (whole_cluster)


def _start_cluster() -> None:
    subprocess.run(["bash", str(REPO / "deploy/local/cluster.sh"), "start"], check=True)


@pytest.mark.whole_cluster  # slurmctld is both lanes'
def test_slurmctld_down_removes_no_server_and_a_spawn_is_told(hub: Hub, clean: None):
    erin, job_id, _ = running_session(hub, "erin")
    frank = hub.login("frank")
    subprocess.run(["kill", SLURMCTLD_PID.read_text().strip()], check=True)
    try:
        wait_for(
            lambda: subprocess.run(["squeue"], capture_output=True).returncode != 0, 20, "down"
        )
        response = spawn(hub, frank, "frank")
        assert response.status_code in (201, 202, 503), response.text
        message = failed_spawn_message(hub, frank, "frank", response)
        assert "The scheduler is not answering" in message, message
        assert "try again in a minute" in message
        # Ten polls of the hub (every 3 s here) to a silent Slurm: the server stays.
        deadline = time.monotonic() + OUTAGE_S
        while time.monotonic() < deadline:
            assert hub.server(erin, "erin")["ready"] is True
            time.sleep(5)
    finally:
        _start_cluster()
    assert user_jobs("erin", "%i|%T") == [f"{job_id}|RUNNING"]
    assert hub.server(erin, "erin")["ready"] is True
    assert user_jobs("frank") == []


def test_a_node_set_down_requeues_the_session_which_is_kept(hub: Hub, clean: None):
    erin, job_id, node = running_session(hub, "erin")
    try:
        scontrol("update", f"nodename={node}", "state=down", "reason=fault-test")
        # Slurm kills the job on the node and puts it back in the queue (JobRequeue=1).
        wait_for(lambda: state_of(job_id) == "PENDING", 20, "the job to be requeued")
        note = f"Your session (job {job_id}) was put back in the queue by Slurm."
        wait_for(lambda: note in home_page(hub, erin), 20, "the home page to say so")
        assert hub.server(erin, "erin") is not None
    finally:
        # Back in service if it is still down (the node itself never went away).
        subprocess.run(
            ["scontrol", "update", f"nodename={node}", "state=resume"],
            capture_output=True,
            timeout=20,
        )


@pytest.fixture
def late_hub() -> Iterator[Hub]:
    """A hub of its own whose sbatch submits, then answers only after the spawner gave up."""
    with late_sbatch_hub(
        state_dir(), {**HUB_ENV, "PORTAL_HUB_ID": "test-late"}, slurm_timeout=3
    ) as instance:
        yield instance


def test_an_sbatch_that_times_out_after_submitting_gives_one_job(hub: Hub, clean, late_hub):
    frank = late_hub.login("frank")
    assert spawn(late_hub, frank, "frank").status_code in (201, 202)
    late_hub.wait_ready(frank, "frank", timeout=60)
    assert len(user_jobs("frank")) == 1  # found by its tag and taken over: not submitted twice
    assert "sbatch for frank gave no answer" in late_hub.log_tail(200)
    # Its late sbatch was ended with the spawn's timeout (the other lane may have one of its own).
    own_sleep = f"{late_hub.extra_env['PORTAL_SLURM_BIN_DIR']}/{LATE_SLEEP}"
    assert subprocess.run(["pgrep", "-f", own_sleep]).returncode != 0
