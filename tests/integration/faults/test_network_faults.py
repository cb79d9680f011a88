"""Faults only a network has, on the real hosts (deploy/local/hosts.sh): a node cut off for
longer than Slurm's SlurmdTimeout, the hub cut off from a node whose job still runs, and the
controller unreachable from the login host. Each cut drops packets silently, as a broken
network does, rather than refusing connections."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import requests

from tests.cluster import HOSTS_SH, host_of_process
from tests.hubproc import Hub, wait_for
from tests.integration.conftest import user_jobs
from tests.integration.faults.helpers import (
    failed_spawn_message,
    home_page,
    running_session,
    skip_requeue_hold,
    spawn,
    state_of,
)
from tests.integration.second_lane import NODES
from tests.own_processes import HERE

pytestmark = pytest.mark.integration


@contextmanager
def cut(host: str, other: str = "") -> Iterator[None]:
    """HOST off the network (or only off OTHER) for the block, then back."""
    where = [host, other] if other else [host]
    subprocess.run(["bash", str(HOSTS_SH), "cut", *where], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["bash", str(HOSTS_SH), "mend", *where], check=True, capture_output=True)


def stays_ready(hub: Hub, session: requests.Session, user: str, seconds: float) -> None:
    """The user's server is there and ready at every look (every 5 s) for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        server = hub.server(session, user)
        assert server is not None and server["ready"] is True
        time.sleep(5)


def slurm_setting(name: str) -> str:
    config = subprocess.run(
        ["scontrol", "show", "config"], capture_output=True, text=True, check=True, timeout=20
    ).stdout
    line = next(line for line in config.splitlines() if line.startswith(name))
    return line.split("=", 1)[1].strip()


def node_state(node: str, fields: str = "%T") -> str:
    return subprocess.run(
        ["sinfo", "-h", "-n", node, "-o", fields], capture_output=True, text=True, timeout=20
    ).stdout.strip()


def processes_of(user: str, host: str) -> list[str]:
    pids = subprocess.run(
        ["pgrep", *HERE, "-u", user], capture_output=True, text=True
    ).stdout.split()
    return [pid for pid in pids if _on(pid, host)]


def _on(pid: str, host: str) -> bool:
    try:
        return host_of_process(pid) == host
    except OSError:
        return False  # it ended meanwhile


def test_a_node_cut_off_past_slurmd_timeout_is_set_down_and_its_session_moves(
    hub: Hub, clean: None
):
    erin, job_id, node = running_session(hub, "erin")
    (other,) = set(NODES) - {node}
    timeout = int(slurm_setting("SlurmdTimeout").split()[0])
    with cut(node):
        # Slurm marks the node down and puts the session's job back in the queue; the user is
        # told so in words, and the server is kept.
        # Slurm's own clock: pings every SlurmdTimeout/3, DOWN after SlurmdTimeout without an
        # answer. sinfo's state word alone does not show it: a DOWN node whose job's CPUs are
        # still held (the node never confirmed the kill) prints as "mixed*" (CI, twice, while
        # slurmctld had logged "lane-01 not responding, setting DOWN" 50 s after the cut). The
        # reason Slurm gives the node when it sets it down is plain, so it is read too.
        said: list[str] = []

        def set_down() -> bool:
            state, _, reason = node_state(node, "%T|%E").partition("|")
            said.append(f"{state} ({reason})")
            return "down" in state or reason == "Not responding"

        try:
            wait_for(set_down, timeout + 90, f"{node} to be set down")
        except AssertionError as error:
            raise AssertionError(f"{error}; sinfo said {sorted(set(said))}") from None
        note = f"Your session (job {job_id}) was put back in the queue by Slurm."
        wait_for(lambda: note in home_page(hub, erin), 60, "the home page to say so")
        assert hub.server(erin, "erin") is not None
        # It starts again on the other node, where the hub reaches it (Slurm's requeue delay,
        # reason BeginTime, lifted: helpers.skip_requeue_hold).
        skip_requeue_hold(job_id)
        wait_for(
            lambda: user_jobs("erin", "%i|%T|%N") == [f"{job_id}|RUNNING|{other}"],
            60,
            f"the job to run again on {other}",
        )
        hub.wait_ready(erin, "erin", timeout=120)
        wait_for(lambda: note not in home_page(hub, erin), 60, "the note to go")
    # Back on the network: the node returns to service, and erin's JupyterLab that was left
    # running on it is ended by Slurm (nothing orphaned).
    # (slurmctld asks a down node again only now and then: 2 min 20 s here once)
    wait_for(lambda: node_state(node) in ("idle", "mixed"), 240, f"{node} back in service")
    wait_for(lambda: not processes_of("erin", node), 120, f"nothing of erin's left on {node}")
    assert processes_of("erin", other), f"erin's session runs on {other}"
    assert state_of(job_id) == "RUNNING"


def test_the_hub_cut_off_from_a_node_keeps_the_session_and_says_so(hub: Hub, clean: None):
    erin, job_id, node = running_session(hub, "erin")
    with cut(node, "hub"):
        unreachable = f"The hub cannot reach {node}"
        wait_for(lambda: unreachable in home_page(hub, erin), 45, "the card to say so")
        # A minute without the node: the server is not dropped, and Slurm still runs the job.
        stays_ready(hub, erin, "erin", 60)
    assert state_of(job_id) == "RUNNING"
    # The link back: the session answers through the proxy again and the words go.
    token = hub.api(erin, "POST", "/users/erin/tokens", json={}).json()["token"]

    def answers() -> bool:
        url = f"{hub.url}/user/erin/api/status"
        headers = {"Authorization": f"token {token}"}
        return erin.get(url, headers=headers, timeout=30).status_code == 200

    wait_for(answers, 60, "the session to answer again")
    wait_for(lambda: unreachable not in home_page(hub, erin), 45, "the words to go")


@pytest.mark.whole_cluster  # both lanes' hubs run on the login host
def test_the_controller_unreachable_from_the_login_host(hub: Hub, clean: None):
    erin, job_id, _ = running_session(hub, "erin")
    frank = hub.login("frank")
    with cut("slurmctld", "hub"):
        asked = time.monotonic()
        response = spawn(hub, frank, "frank")
        message = failed_spawn_message(hub, frank, "frank", response)
        told_after = time.monotonic() - asked
        assert "The scheduler is not answering" in message, message
        assert told_after < 15, f"told after {told_after:.0f} s"
        # Ten polls of the hub (every 3 s here) to a controller it cannot reach. Every other
        # test waits meanwhile (whole_cluster): half a minute, not more.
        stays_ready(hub, erin, "erin", 30)
    assert state_of(job_id) == "RUNNING"
    assert hub.server(erin, "erin")["ready"] is True
    assert user_jobs("frank") == []
