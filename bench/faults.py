"""Faults on the live local cluster, and what each cost: jobs cancelled, orphaned, duplicated,
servers lost, and seconds until every server was back.

Each fault starts from alice with a running server and bob with a queued one (the GPUs full of
carol's jobs), on a hub of the bench's own (port 8500). "back after" counts from the moment
the hub (or slurmctld) answers again until alice is ready and bob pending once more. Run after
`make demo` or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/faults.py [--outage 120]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hubproc import REPO, Hub, wait_for
from tests.integration.faults.helpers import fill_gpus, running_session, spawn, state_of

USERS = ("alice", "bob")
SLURMCTLD_PID = Path("/var/lib/portal-local/run/slurmctld.pid")


def live_jobs(user: str) -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-u", user, "-t", "PD,R,CF,S", "-o", "%i"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def cancel(*users: str) -> None:
    for user in users:
        subprocess.run(["scancel", "-u", user], check=False)
    left = {user: live_jobs(user) for user in users}
    wait_for(lambda: not any(live_jobs(u) for u in users), 60, f"jobs to end: {left}")


@dataclass
class Outcome:
    fault: str
    cancelled: int  # jobs of the servers that were lost by the fault (not by anyone's stop)
    orphaned: int  # live jobs whose server the hub no longer has
    duplicated: int  # jobs beyond one per server
    servers_lost: int
    recover_s: float  # from the hub (or slurmctld) answering again
    total_s: float  # from the fault itself (a hub start, an outage included)


def _server(hub: Hub, user: str) -> dict[str, object] | None:
    return hub.server(hub.login("carol"), user)


def _setup(hub: Hub) -> dict[str, str]:
    """alice running, bob queued: their job ids."""
    carol = hub.login("carol")
    for user in USERS:
        if hub.server(carol, user) is not None:
            hub.stop_server(carol, user)
    cancel("alice", "bob", "carol")
    _, _, node = running_session(hub, "alice")
    other = "gpu02" if node == "gpu01" else "gpu01"
    blockers = fill_gpus(node, gpus=3) + fill_gpus(other)
    wait_for(lambda: all(state_of(j) == "RUNNING" for j in blockers), 30, "blockers")
    bob = hub.login("bob")
    assert spawn(hub, bob, "bob").status_code in (201, 202)
    wait_for(lambda: live_jobs("bob"), 20, "bob's job")
    return {user: live_jobs(user)[0] for user in USERS}


def _servers_back(hub: Hub) -> bool:
    alice, bob = _server(hub, "alice"), _server(hub, "bob")
    return bool(alice and alice.get("ready")) and bool(bob and bob.get("pending") == "spawn")


def _measure(name: str, hub: Hub, fault: Callable[[], None]) -> Outcome:
    before = _setup(hub)
    started = time.monotonic()
    fault()
    begun = time.monotonic()
    with contextlib.suppress(AssertionError):  # not back in 2 minutes: counted as lost below
        wait_for(lambda: _servers_back(hub), 120, "the servers to come back", step=0.5)
    recover = time.monotonic() - begun
    total = time.monotonic() - started
    after = {user: live_jobs(user) for user in USERS}
    lost = [user for user in USERS if _server(hub, user) is None]
    outcome = Outcome(
        fault=name,
        cancelled=sum(before[user] not in after[user] for user in USERS),
        orphaned=sum(len(after[user]) for user in lost),
        duplicated=sum(max(0, len(after[user]) - 1) for user in USERS),
        servers_lost=len(lost),
        recover_s=recover,
        total_s=total,
    )
    cancel("carol")
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outage", type=float, default=120, help="slurmctld down, seconds")
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    state.chmod(0o700)
    hub = Hub(state, 8500)
    hub.start()

    def kill_hub() -> None:
        assert hub.proc is not None
        os.kill(hub.proc.pid, signal.SIGKILL)
        hub.proc.wait()
        hub.proc = None
        hub.start()

    def slurmctld_down() -> None:
        subprocess.run(["kill", SLURMCTLD_PID.read_text().strip()], check=True)
        time.sleep(args.outage)
        subprocess.run(
            ["bash", str(REPO / "deploy/local/cluster.sh"), "start"],
            check=True,
            stdout=subprocess.DEVNULL,
        )

    faults = [
        ("hub restarted (SIGTERM, start)", hub.restart),
        ("hub killed (SIGKILL, start)", kill_hub),
        (f"slurmctld down {args.outage:g} s", slurmctld_down),
    ]
    results = []
    try:
        for name, fault in faults:
            results.append(_measure(name, hub, fault))
            print(f"  done: {name}", flush=True)
    finally:
        hub.stop()
        cancel("alice", "bob", "carol")
    print()
    header = ("fault", "cancelled", "orphaned", "duplicated", "lost", "back after s", "total s")
    print(f"{header[0]:34} " + " ".join(f"{h:>{len(h)}}" for h in header[1:]))
    for r in results:
        print(
            f"{r.fault:34} {r.cancelled:9d} {r.orphaned:8d} {r.duplicated:10d} "
            f"{r.servers_lost:4d} {r.recover_s:12.1f} {r.total_s:7.1f}"
        )


if __name__ == "__main__":
    main()
