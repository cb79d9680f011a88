"""The Grafana dashboard (deploy/grafana/gpuportal-dashboard.json): the fields Grafana needs to
import it, and a panel for every figure the hub and the portal export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import spawner.metrics
from portal import metrics as portal_metrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "gpuportal-dashboard.json"
EXPORTED = {
    "gpuportal_slurm_calls_total",
    "gpuportal_slurm_call_seconds_bucket",
    "gpuportal_queue_wait_seconds_bucket",
    "gpuportal_gpus",
    "gpuportal_sessions",
    "gpuportal_login_failures_total",
    "gpuportal_culls_total",
    "gpuportal_portal_slurm_calls_total",
    "gpuportal_portal_slurm_call_seconds_bucket",
    "gpuportal_job_submissions_total",
}


def test_the_dashboard_has_what_grafana_imports() -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    assert board["templating"]["list"][0]["type"] == "datasource"
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert panel["type"] in {"timeseries", "stat", "gauge", "bargauge", "table"}
        assert (
            set(panel["gridPos"]) == {"x", "y", "w", "h"}
            and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        )
        assert panel["datasource"]["uid"] == "${datasource}"
        refs = [target["refId"] for target in panel["targets"]]
        assert refs and len(refs) == len(set(refs)) and all(t["expr"] for t in panel["targets"])


def test_every_exported_figure_has_a_panel() -> None:
    board = json.loads(DASHBOARD.read_text())
    used = {
        name
        for panel in board["panels"]
        for target in panel["targets"]
        for name in re.findall(r"gpuportal_[a-z_]+", target["expr"])
    }
    assert used == EXPORTED
    # ...and those names are the ones the code defines (a renamed metric fails here).
    assert portal_metrics.JOB_SUBMISSIONS._name == "gpuportal_job_submissions"
    assert spawner.metrics.QUEUE_WAIT._name == "gpuportal_queue_wait_seconds"
