"""The Grafana dashboard (deploy/grafana/gpuportal-dashboard.json): the fields Grafana needs to
import it, a panel for every figure the hub and the portal export, and Grafana's own dashboard
schema (@grafana/schema, checked with tsc by deploy/grafana/check_dashboard.sh)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import gpuportal_spawner.metrics
from gpuportal_portal import metrics as portal_metrics

# Builds or starts processes: make test runs it, make check leaves it out (issue 53).
pytestmark = pytest.mark.builds

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
    "gpuportal_week_gpu_hours",
    "gpuportal_week_core_hours",
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
    assert gpuportal_spawner.metrics.QUEUE_WAIT._name == "gpuportal_queue_wait_seconds"


def _schema_check(dashboard: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (deploy/local/install.sh installs it)")
    script = DASHBOARD.parent / "check_dashboard.sh"
    return subprocess.run(
        ["bash", str(script), str(dashboard)], capture_output=True, text=True, timeout=300
    )


def test_grafana_schema_accepts_the_dashboard() -> None:
    result = _schema_check(DASHBOARD)
    assert result.returncode == 0, result.stdout + result.stderr


def test_grafana_schema_refuses_a_broken_dashboard(tmp_path: Path) -> None:
    board = json.loads(DASHBOARD.read_text())
    wrong_type = {**board, "panels": [{**board["panels"][0], "gridPos": {"h": "tall"}}]}
    unknown_field = {**board, "refreshEvery": "5s"}
    expected = {
        "wrong-type": (wrong_type, "is not assignable to type 'number'"),
        "unknown-field": (unknown_field, "'\"refreshEvery\"' does not exist in type 'Dashboard'"),
    }
    for name, (broken, error) in expected.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(broken))
        result = _schema_check(path)
        assert result.returncode != 0, name
        assert error in result.stdout, result.stdout
