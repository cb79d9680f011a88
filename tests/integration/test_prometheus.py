"""A real Prometheus (Debian's, started by deploy/local/prometheus.sh) scrapes the first lane's
hub and portal with the hub's `prometheus` service token, and the GPU nodes' node exporters on
their own hosts; every query of the Grafana dashboard then returns data (issue 24, 4)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.hubproc import REPO, Hub
from tests.integration.conftest import wait_for
from tests.integration.faults.helpers import running_session

pytestmark = pytest.mark.integration

SCRIPT = REPO / "deploy" / "local" / "prometheus.sh"
DASHBOARD = REPO / "deploy" / "grafana" / "gpuportal-dashboard.json"
PORT = 9491  # not the demo's 9490


@pytest.fixture
def prometheus(hub: Hub) -> Iterator[str]:
    token = hub.state / "prometheus-api-token"
    env = {**os.environ, "PORTAL_SCRAPE_INTERVAL": "2s"}
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", hub.url, str(token), str(PORT)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield f"http://127.0.0.1:{PORT}"
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(PORT)], capture_output=True, timeout=60)


def _query(url: str, expr: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert answer["status"] == "success", answer
    return list(answer["data"]["result"])


def test_every_dashboard_query_returns_data(hub: Hub, clean: None, prometheus: str) -> None:
    # A session started and stopped while Prometheus watches: spawn duration, queue wait, the
    # sessions gauge and (once the portal has read its use) the week's GPU-hours move.
    session, _, _ = running_session(hub, "alice")
    running = 'gpuportal_sessions{state="running", profile="gpu-1"}'
    wait_for(lambda: _query(prometheus, running), 60, "Prometheus to see alice's session")
    hub.stop_server(session, "alice")
    # Ended, it reads 0 rather than vanishing.
    wait_for(
        lambda: [r for r in _query(prometheus, running) if r["value"][1] == "0"],
        60,
        "the sessions gauge to fall to 0",
    )

    def all_up() -> Any:
        targets = requests.get(f"{prometheus}/api/v1/targets", timeout=10).json()
        active = targets["data"]["activeTargets"]
        health = {(t["labels"]["job"], t["labels"]["instance"]): t["health"] for t in active}
        return health if health and set(health.values()) == {"up"} else None

    health = wait_for(all_up, 60, "every target to be scraped")
    assert sorted({job for job, _ in health}) == ["hub", "nodes", "portal"]
    assert len([job for job, _ in health if job == "nodes"]) == 2  # gpu01 and gpu02

    board = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for panel in board["panels"] for t in panel["targets"]]

    missing = queries

    def all_answer() -> bool:
        nonlocal missing
        missing = [expr for expr in queries if not _query(prometheus, expr)]
        return not missing

    # Rates need two scrapes; the week's GPU-hours need the session's use read (sacct).
    with contextlib.suppress(AssertionError):  # said below, with the queries that have none
        wait_for(all_answer, 150, "every dashboard query to return data", step=2)
    assert not missing, f"no data for: {missing}"
    # The nodes are told apart, each on its own address.
    busy = _query(prometheus, 'node_uname_info{job="nodes"}')
    assert sorted(r["metric"]["nodename"] for r in busy) == ["gpu01", "gpu02"]
