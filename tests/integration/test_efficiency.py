"""What a job used of what it asked for (issue 24, 1), from Slurm's real accounting: a job that
burns one core of four reads about 25 %; a portal job's use through the API and the CLI."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest
import requests

from gpuportal_core.slurm import SlurmClient
from tests.hubproc import VENV_BIN
from tests.integration.conftest import Hub, wait_for
from tests.integration.test_cli import token_of
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

BURN = "timeout 20 sh -c 'while :; do :; done'"  # one core, flat out, for 20 s


def accounted(job_id: str) -> Any:
    """The job's use once it has ended and slurmdbd has its steps (None until then)."""
    use = asyncio.run(SlurmClient().use(job_id))
    return use if use is not None and use.max_rss_bytes is not None else None


def test_one_core_of_four_reads_about_a_quarter(cluster: None) -> None:
    asks = ["-p", "gpu", "--gres=gpu:1", "--cpus-per-task=4", "--mem=8G", "-t", "00:05:00"]
    asks += ["--chdir=/tmp", "--output=/dev/null"]  # nothing to keep, nowhere it cannot write
    submitted = subprocess.run(
        ["runuser", "-u", "alice", "--", "sbatch", "--parsable", *asks, f"--wrap={BURN}"],
        capture_output=True,
        text=True,
        check=True,
    )
    job_id = submitted.stdout.strip().split(";")[0]
    use = wait_for(lambda: accounted(job_id), 120, "the job's accounting")
    assert use.cores == 4
    assert 15 <= use.cpu_percent <= 35, use
    assert use.requested_bytes == 8 * 1024**3 and 0 < use.memory_percent < 5
    assert use.summary().startswith(f"Used {use.cpu_percent:.0f} % of its 4 cores")


def test_a_portal_jobs_use_through_the_api_and_the_cli(hub: Hub, clean: None) -> None:
    token = token_of(hub, "alice")
    api = f"{hub.url}/services/portal/api/jobs"
    mine = {"Authorization": f"token {token}"}
    body = {"name": "burn", "launcher": "srun", "nodes": 1, "gpus_per_node": 1}
    job = requests.post(
        api, headers=mine, json={**body, "runtime": "00:05:00", "command": BURN}, timeout=60
    ).json()
    running = requests.get(f"{api}/{job['id']}/use", headers=mine, timeout=30)
    assert running.status_code == 409 and "has not ended" in running.json()["detail"]

    def use() -> Any:
        state = requests.get(f"{api}/{job['id']}", headers=mine, timeout=30).json()
        if not state["final"]:
            return None
        answer = requests.get(f"{api}/{job['id']}/use", headers=mine, timeout=30)
        return answer.json() if answer.ok and answer.json()["max_rss_bytes"] else None

    got = wait_for(use, 150, "the portal job's use")
    # One GPU's share is 8 cores: one busy core is an eighth.
    assert got["cores"] == 8 and 7 <= got["cpu_percent"] <= 20, got
    as_alice = ["--url", hub.url, "--token", token]
    shown = subprocess.run(
        [str(VENV_BIN / "gpuportal"), *as_alice, "jobs", "show", str(job["id"])],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    assert f"use: {got['summary']}" in shown.stdout


def test_my_usage_counts_gpu_hours_for_me_and_my_group(hub: Hub, clean: None, browser: Any) -> None:
    """Item 5: a 1-GPU job of alice's shows in her GPU-hours and her group's (ds), with the fair
    share said in words (this cluster's priority plugin keeps none)."""
    token = token_of(hub, "alice")
    mine = {"Authorization": f"token {token}"}
    before = requests.get(f"{hub.url}/services/portal/api/usage", headers=mine, timeout=60).json()
    asks = ["-p", "gpu", "--gres=gpu:1", "-t", "00:05:00", "--chdir=/tmp", "--output=/dev/null"]
    subprocess.run(
        ["runuser", "-u", "alice", "--", "sbatch", "--parsable", *asks, "--wrap=sleep 30"],
        check=True,
        capture_output=True,
    )

    def grown() -> Any:
        now = requests.get(f"{hub.url}/services/portal/api/usage", headers=mine, timeout=60)
        got = now.json()
        return got if got["gpu_hours"]["week"] >= before["gpu_hours"]["week"] + 0.006 else None

    # 30 s of 1 GPU: 0.0083 h (the API gives 3 decimals); Slurm may queue it behind others.
    after = wait_for(grown, 240, "alice's GPU-hours to grow")
    ds = next(group for group in after["groups"] if group["account"] == "ds")
    assert ds["gpu_hours"]["week"] >= after["gpu_hours"]["week"]
    assert ds["fair_share"] is None and "no fair share" in ds["standing"]
    shown = subprocess.run(
        [str(VENV_BIN / "gpuportal"), "--url", hub.url, "--token", token, "usage"],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0 and "GPU-hours this week" in shown.stdout, shown.stderr
    assert "group ds:" in shown.stdout
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/services/portal/jobs")
    page.wait_for_selector("#my-usage:not(:empty)")
    assert page.inner_text("#my-usage").startswith("Your GPU use: ")
