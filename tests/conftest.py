"""Which lane a test runs on when `make test` runs two at once (tests/lanes.sh, one pytest
process per lane; tests/integration/second_lane.py says why): `--lane=second` keeps the tests
on the second lane's hub and the unit tests, `--lane=first` every other test; without the
option (a test run by hand) every test runs, each on its own lane's hub."""

from __future__ import annotations

import os

import pytest

# docker-compose.yml's stack with podman (tests/compose): a part of make test of its own, after
# the lanes (tests/make_test.sh), never collected with them.
collect_ignore = [] if os.environ.get("PORTAL_COMPOSE_TEST") == "1" else ["compose"]
# The smoke of `make demo` on a machine made from nothing (tests/fresh): run by tests/fresh.sh
# in that machine, against its demo, never with the lanes.
if os.environ.get("PORTAL_FRESH_SMOKE") != "1":
    collect_ignore.append("fresh")
# The Ansible role on roots that stand in for a site's hosts (tests/site): run by tests/site.sh
# beside the lanes, never with them.
if os.environ.get("PORTAL_SITE_TEST") != "1":
    collect_ignore.append("site")

LANES = ("first", "second")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--lane", choices=LANES, help="run only this lane's tests (tests/lanes.sh)")


def lane_of(item: pytest.Item) -> str:
    on_second = "second_lane_hub" in getattr(item, "fixturenames", ()) or bool(
        item.get_closest_marker("second_lane")
    )
    return "second" if on_second or item.nodeid.startswith("tests/unit/") else "first"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    lane = config.getoption("--lane")
    if lane is None:
        return
    kept = [item for item in items if lane_of(item) == lane]
    config.hook.pytest_deselected(items=[item for item in items if lane_of(item) != lane])
    items[:] = kept
