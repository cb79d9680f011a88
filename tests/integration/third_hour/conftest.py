"""The third hour's tests (issue 54: what a newcomer meets after the first sessions) run on the
second lane (tests/integration/second_lane.py): its hub, users (erin, frank, grace) and nodes
(lane-01, lane-02), beside the first lane's longer list."""

from __future__ import annotations

import pytest

from tests.hubproc import Hub

USER = "erin"  # a data scientist of team vision
ADMIN = "grace"


@pytest.fixture
def hub(second_lane_hub: Hub) -> Hub:
    return second_lane_hub


@pytest.fixture
def clean(second_lane_clean: None) -> None:
    return None
