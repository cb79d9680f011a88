"""bench/scale.py at a small size (issue 22): correctness only, not time. 40 bench users log in
through the form, ask for a session at once on 4 bench nodes where 10 fit; each loads their
pages, the running ones run `5 * 4` in a kernel; two nodes' GPUs are freed in turn and the
queued sessions that then fit start; all stop. Nothing may go wrong and nothing may be left."""

from __future__ import annotations

import subprocess
from collections import Counter

import pytest

from bench.bench_nodes import PARTITION
from bench.scale import Shape, scale_run
from bench.scale_state import Run, live_jobs
from tests.integration import second_lane

pytestmark = [
    pytest.mark.integration,
    pytest.mark.second_lane,
]

# The admin is the second lane's: the first lane's tests cancel all of carol's jobs, and once
# (CI20) cancelled the run's GPU holders mid-run, so that six queued sessions started early and
# nothing was left to promote.
SHAPE = Shape(
    users=40,
    db="postgresql",
    nodes=4,
    gpus=4,
    running=10,
    rest=30,
    period=30,
    quiet=0,
    promote=2,
    admin=second_lane.ADMIN,
)


@pytest.fixture(scope="module")
def reduced_run(cluster: None) -> Run:
    """The whole run, before the test's own turn on the cluster: growing the bench nodes takes
    the cluster alone (second_lane.turn), which a test holding its shared turn could not."""
    return scale_run(SHAPE, hold=second_lane.turn)


def test_a_reduced_scale_run_loses_nothing_and_leaves_nothing(reduced_run: Run) -> None:
    assert reduced_run.problems == Counter(), reduced_run.problems
    assert len(reduced_run.ready_after_burst) == SHAPE.running
    # The admin's jobs held 4 GPUs of the first node and 2 of the second: freed one by one,
    # as many queued sessions started each time.
    assert reduced_run.promoted == [4, 2]
    # Every running session's kernel answered 20 once, every user's pages loaded once.
    assert len(reduced_run.seconds["rest: kernel 5 * 4"]) == SHAPE.running
    assert len(reduced_run.seconds["rest: home"]) == SHAPE.users
    # What stop left is among the problems; and what the bench made is gone after it.
    assert not live_jobs(reduced_run.users)
    assert subprocess.run(["id", reduced_run.users[0]], capture_output=True).returncode != 0
    assert not subprocess.run(
        ["sinfo", "-h", "-p", PARTITION], capture_output=True, text=True
    ).stdout.strip()
