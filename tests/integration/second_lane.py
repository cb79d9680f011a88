"""The tests' second lane: integration tests that run beside the others, not after them.

Most of the integration tests' time is spent waiting on clocks: Slurm's (a node set down after
SlurmdTimeout, a job's time limit), the hub's (its polls, the culler's limits). `make test` runs
them in two lanes at once (tests/lanes.sh: a pytest process per lane; tests/conftest.py says
which test goes where): the first lane has the demo's users alice, bob (team ds) and carol
(admin) on gpu01 and gpu02, a hub on port 8200; the second lane the fault and culling tests with
users of their own in the same roles, erin, frank (team vision) and grace (admin), on nodes of
their own (lane-01 and lane-02, partition `lane`, which `cluster.sh grow` adds for the run and
`shrink` removes), and a hub of their own on port 8500 with its own hub id, so that neither
lane sees, adopts, counts or cancels the other's servers, jobs and GPUs.

What both lanes share is the controller, the directory and the login host. A test that takes
one of those down is marked `whole_cluster`: it waits until no other test runs, and no test
starts until it has ended (a file lock, which every integration test holds shared and those
hold exclusive: `turn`). Growing and shrinking the partition restarts slurmctld, so they take the
lock exclusively too.
"""

from __future__ import annotations

import fcntl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from tests.hubproc import REPO, SECOND_LANE_USERS
from tests.integration.faults.helpers import fill_gpus

PARTITION = "lane"
NODES = ("lane-01", "lane-02")
GPUS_PER_NODE = 4  # as gpu01 and gpu02: the tests count on the same shapes
PORT = 8500
HUB_ID = "test-b"
USERS = tuple(SECOND_LANE_USERS)
ADMIN = "grace"
HUB_ENV = {"PORTAL_PARTITION": PARTITION, "PORTAL_HUB_ID": HUB_ID}
CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
LOCK = Path("/run/gpuportal-tests.lock")
GATE = Path("/run/gpuportal-tests.gate")


# The lock this process holds now, if any: (its open file, whether exclusive).
_held: list[tuple[TextIO, bool]] = []


@contextmanager
def turn(exclusive: bool) -> Iterator[None]:
    """Hold the cluster shared (any test) or alone (a test that takes a shared part down).

    Held from the first fixture a test sets up to the last it tears down (the hook in
    tests/integration/conftest.py), since session fixtures use the cluster too: the first
    lane's logins for its portal tokens once met the second lane's hung directory. Nested
    (growing the partition inside a test's turn), a shared hold becomes exclusive for the
    while. Every request passes a gate first, so that a test waiting to be alone is not
    starved by the other lane's tests taking shared turns one after the other.
    """
    if _held:
        handle, alone = _held[-1]
        if alone or not exclusive:
            yield
            return
        # Let go of the shared hold before queueing: two processes each holding shared while
        # waiting for exclusive would wait for each other for ever.
        fcntl.flock(handle, fcntl.LOCK_UN)
        _acquire(handle, exclusive=True)
        _held.append((handle, True))
        try:
            yield
        finally:
            _held.pop()
            fcntl.flock(handle, fcntl.LOCK_SH)  # from exclusive: nobody else holds it
        return
    with LOCK.open("a") as handle:  # closing the file releases the lock
        _acquire(handle, exclusive)
        _held.append((handle, exclusive))
        try:
            yield
        finally:
            _held.pop()


def _acquire(handle: TextIO, exclusive: bool) -> None:
    with GATE.open("a") as gate:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def grow() -> None:
    """The lane's nodes, added to the local cluster (made once; restarts slurmctld then)."""
    with turn(exclusive=True):
        subprocess.run(
            ["bash", str(CLUSTER_SH), "grow", PARTITION, str(len(NODES)), str(GPUS_PER_NODE)],
            check=True,
            capture_output=True,
            timeout=180,
        )


def shrink() -> None:
    with turn(exclusive=True):
        subprocess.run(
            ["bash", str(CLUSTER_SH), "shrink", PARTITION],
            check=True,
            capture_output=True,
            timeout=180,
        )


def fill_lane_gpus(*nodes: str, gpus: int = GPUS_PER_NODE) -> list[str]:
    """faults.helpers.fill_gpus on the lane's nodes, as its admin."""
    return fill_gpus(*nodes, gpus=gpus, user=ADMIN, partition=PARTITION)
