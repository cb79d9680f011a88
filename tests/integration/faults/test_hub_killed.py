"""A hub killed with -9, then started again: every running and queued server is kept, on the
same jobs, and no service of the old hub runs on."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import cancel_user_jobs, user_jobs
from tests.integration.faults.helpers import running_session, spawn, state_of
from tests.integration.second_lane import fill_lane_gpus
from tests.integration.test_hub_restart import queued_message

pytestmark = pytest.mark.integration


def _service_pids(hub_pid: int) -> set[str]:
    """The hub's managed services (portal, spawn-resumer, idle-culler): its children started
    through gpuportal_adapters.hub_service."""
    out = subprocess.run(
        ["pgrep", "-P", str(hub_pid), "-f", r"python3? -m gpuportal_adapters\.hub_service "],
        capture_output=True,
        text=True,
    ).stdout
    return set(out.split())


def _alive(pids: set[str]) -> set[str]:
    return {pid for pid in pids if os.path.exists(f"/proc/{pid}")}


def test_hub_killed_keeps_running_and_queued_servers(hub: Hub, clean: None):
    erin, alice_id, node = running_session(hub, "erin")
    other = "lane-02" if node == "lane-01" else "lane-01"
    try:
        blockers = fill_lane_gpus(node, gpus=3) + fill_lane_gpus(other)
        wait_for(lambda: all(state_of(j) == "RUNNING" for j in blockers), 60, "blockers")
        frank = hub.login("frank")
        assert spawn(hub, frank, "frank").status_code in (201, 202)
        [bob_id] = wait_for(lambda: user_jobs("frank", "%i"), 60, "frank's job")
        wait_for(lambda: state_of(bob_id) == "PENDING", 60, "frank's job to wait")

        assert hub.proc is not None
        old_services = _service_pids(hub.proc.pid)
        assert len(old_services) == 3, "the hub's three services are not running"
        os.kill(hub.proc.pid, signal.SIGKILL)
        hub.proc.wait()
        # The services die with the hub (parent-death signal), not with parent 1 beside the next.
        wait_for(lambda: not _alive(old_services), 30, "the old services to end")
        hub.proc = None
        hub.start()

        erin = hub.login("erin")
        assert hub.server_after_check(erin, "erin").get("ready") is True
        assert user_jobs("erin", "%i|%T") == [f"{alice_id}|RUNNING"]
        frank = hub.login("frank")
        wait_for(lambda: (hub.server(frank, "frank") or {}).get("pending") == "spawn", 90, "resume")
        assert user_jobs("frank", "%i|%T") == [f"{bob_id}|PENDING"]  # none cancelled, none added
        # The resumed spawn has taken the job over (its place in the queue is reported) before
        # the GPUs free: a job that starts before it is taken over started with the token the
        # restart revoked, and is cancelled as serving nobody.
        assert f"Job {bob_id} is queued" in queued_message(hub, frank, "frank", "is queued")

        cancel_user_jobs("grace")
        hub.wait_ready(frank, "frank", timeout=120)
        assert user_jobs("frank", "%i|%T") == [f"{bob_id}|RUNNING"]
    finally:
        cancel_user_jobs("grace")
