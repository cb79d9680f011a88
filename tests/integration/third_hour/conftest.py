"""The third hour's tests (issue 54: what a newcomer meets after the first sessions) run on the
second lane (tests/integration/second_lane.py): its hub, users (erin, frank, grace) and nodes
(lane-01, lane-02), beside the first lane's longer list. The fixtures are the fault tests'."""

from __future__ import annotations

from tests.integration.faults.conftest import clean, hub

__all__ = ["clean", "hub"]

USER = "erin"  # a data scientist of team vision
ADMIN = "grace"
