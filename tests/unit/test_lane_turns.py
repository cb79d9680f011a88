"""The two test lanes' turns on the cluster (tests/integration/second_lane.py: `turn`): a test
that must be alone waits for the other lane's test, is not starved by the tests after it, and
a shared turn that becomes exclusive inside (growing the partition) waits for the other lane
without deadlocking."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from tests.integration import second_lane

context = multiprocessing.get_context("fork")


@pytest.fixture(autouse=True)
def own_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(second_lane, "LOCK", tmp_path / "tests.lock")
    monkeypatch.setattr(second_lane, "GATE", tmp_path / "tests.gate")


def _hold(exclusive: bool, seconds: float, started: multiprocessing.synchronize.Event) -> None:
    with second_lane.turn(exclusive):
        started.set()
        time.sleep(seconds)


def _other_lane(exclusive: bool, seconds: float) -> multiprocessing.process.BaseProcess:
    started = context.Event()
    other = context.Process(target=_hold, args=(exclusive, seconds, started))
    other.start()
    assert started.wait(10)
    return other


def test_a_turn_made_exclusive_inside_waits_for_the_other_lanes_turn() -> None:
    other = _other_lane(exclusive=False, seconds=1.0)
    begun = time.monotonic()
    with second_lane.turn(False):
        assert time.monotonic() - begun < 0.5  # shared beside the other lane's shared turn
        with second_lane.turn(True):
            waited = time.monotonic() - begun
        with second_lane.turn(True):  # again: the shared hold came back, not a second lock
            pass
    other.join(10)
    assert 0.8 < waited < 5, waited


def test_a_test_waiting_to_be_alone_goes_before_shared_turns_asked_after_it() -> None:
    first = _other_lane(exclusive=False, seconds=1.0)
    alone = context.Process(target=_hold, args=(True, 1.0, context.Event()))
    alone.start()
    time.sleep(0.3)  # the exclusive request queues behind the first shared turn
    begun = time.monotonic()
    with second_lane.turn(False):
        waited = time.monotonic() - begun
    first.join(10)
    alone.join(10)
    # Through the gate: after the exclusive turn (about 0.7 s + 1 s), not beside the first.
    assert waited > 1.4, waited
