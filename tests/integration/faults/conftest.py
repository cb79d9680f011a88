"""The fault tests run on the second lane (tests/integration/second_lane.py): its hub, users
(erin, frank, grace) and nodes (lane-01, lane-02)."""

from __future__ import annotations

import pytest

from tests.hubproc import Hub


@pytest.fixture
def hub(second_lane_hub: Hub) -> Hub:
    return second_lane_hub


@pytest.fixture
def clean(second_lane_clean: None) -> None:
    return None
