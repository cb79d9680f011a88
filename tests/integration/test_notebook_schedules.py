"""Notebook job definitions on a schedule, through the portal's API on the local cluster: the
next run waits in Slurm's queue for its time (sbatch --begin), runs with no session, and the
one after it is queued; pausing cancels the waiting run, deleting forgets the definition."""

from __future__ import annotations

import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_live_profiles import log_in
from tests.integration.test_multinode_jobs import JOBS, alice_token
from tests.integration.test_notebook_jobs import _job, _runs

pytestmark = pytest.mark.integration
__all__ = ["alice_token"]  # the fixture, used by name below

SCHEDULES = "/services/portal/api/schedules"


def _ask(hub: Hub, token: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"token {token}"}
    return requests.request(method, f"{hub.url}{path}", headers=headers, timeout=60, **kwargs)


def _no_session(user: str) -> None:
    sessions = subprocess.run(
        ["squeue", "-h", "-u", user, "-o", "%j"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert not [name for name in sessions if name.startswith("gpuportal:session")], sessions


def test_a_scheduled_notebook_runs_twice_from_slurms_queue_with_no_session(
    hub: Hub, alice_token: str
) -> None:
    runs = _runs("train_params")
    body = {
        "job": _job("nightly", "train_params.ipynb", "lr=0.25"),
        "schedule": "* * * * *",
        "timezone": "Europe/Paris",
    }
    made = _ask(hub, alice_token, "POST", SCHEDULES, json=body)
    assert made.status_code == 201, made.text
    definition = made.json()
    try:
        _no_session("alice")
        # The first run is in Slurm's queue, held until the next minute begins.
        first = _ask(hub, alice_token, "GET", f"{JOBS}/{definition['next_job']}").json()
        assert first["state"] == "PENDING" and first["schedule_id"] == definition["id"]
        begin = datetime.fromisoformat(definition["next_run"])
        assert begin.second == 0 and 0 < (begin - datetime.now(begin.tzinfo)).total_seconds() <= 60
        assert "--begin=" in first["script"]
        # Two runs complete, each queued by the one before it leaving the queue.
        deadline = time.monotonic() + 200
        done: list[dict[str, Any]] = []
        while time.monotonic() < deadline and len(done) < 2:
            time.sleep(5)
            jobs = _ask(hub, alice_token, "GET", f"{JOBS}?mine=true&kind=job").json()
            mine = [j for j in jobs if j["schedule_id"] == definition["id"]]
            done = [j for j in mine if j["state"] == "COMPLETED"]
        assert len(done) >= 2, mine
        # A minute apart, not at once: each run was queued for its own minute and started no
        # earlier. (Not their starts' gap: under load Slurm may place the first run late, the
        # clean-clone CI of 2a00c38 saw 37 s between two starts on time.)
        runs_of = sorted(done[:2], key=lambda j: j["request"]["begin"])
        begins = [datetime.fromisoformat(j["request"]["begin"]) for j in runs_of]
        assert (begins[1] - begins[0]).total_seconds() == 60, begins
        for run, begun in zip(runs_of, begins, strict=True):
            assert datetime.fromisoformat(run["started_at"]) >= begun, (run["started_at"], begun)
        assert len(list(runs.iterdir())) >= 2  # each run's executed notebook, in a folder
        _no_session("alice")
        # Paused: the waiting run is cancelled and gone; resumed: one is queued again.
        paused = _ask(
            hub, alice_token, "PATCH", f"{SCHEDULES}/{definition['id']}", json={"active": False}
        ).json()
        assert (paused["active"], paused["next_job"], paused["next_run"]) == (False, None, "")
        waiting = subprocess.run(
            ["squeue", "-h", "-u", "alice", "-n", "nightly", "-t", "PENDING", "-o", "%i"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert waiting == []
        # A schedule that does not parse is refused at its field; nothing changes.
        bad = _ask(
            hub,
            alice_token,
            "PATCH",
            f"{SCHEDULES}/{definition['id']}",
            json={"schedule": "every night"},
        )
        assert bad.status_code == 422
        assert "not a cron schedule" in bad.text and "schedule" in bad.text
    finally:
        gone = _ask(hub, alice_token, "DELETE", f"{SCHEDULES}/{definition['id']}")
        assert gone.status_code == 204
    assert _ask(hub, alice_token, "GET", f"{SCHEDULES}/{definition['id']}").status_code == 404
    # Its runs stay, as jobs of their own: a later definition that gets its number (SQLite
    # reuses a deleted row's) does not take them.
    jobs = _ask(hub, alice_token, "GET", f"{JOBS}?mine=true&kind=job").json()
    assert [j for j in jobs if j["name"] == "nightly" and j["state"] == "COMPLETED"]
    assert not [j for j in jobs if j["schedule_id"] == definition["id"]]


def test_definitions_on_the_portals_jobs_page(
    hub: Hub, browser: Any, tmp_path: Path, alice_token: str
) -> None:
    """The Jobs page lists the user's definitions: pause, resume and delete them there."""
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    body = {
        "job": _job("nightly-page", "train_params.ipynb", "lr=0.25"),
        "schedule": "0 3 * * *",
        "timezone": "UTC",
    }
    made = _ask(hub, alice_token, "POST", SCHEDULES, json=body)
    assert made.status_code == 201, made.text
    definition = made.json()
    page = log_in(browser, hub, "alice", "alice-demo", viewport={"width": 1400, "height": 900})
    page.goto(f"{hub.url}/services/portal/jobs")
    row = "#schedule-list tr[data-schedule]:has-text('nightly-page')"
    page.wait_for_selector(row)
    shown = page.inner_text(row)
    assert "0 3 * * *" in shown and "train_params.ipynb · 1 GPU" in shown
    assert "03:00" in shown or "04:00" in shown  # the reader's zone: 03:00 UTC
    # The queued run is in the list of jobs too, waiting for its time.
    queued = f"#jobs tbody tr[data-job='{definition['next_job']}']"
    assert "on a schedule" in page.inner_text(queued)
    # The queued run's row, then the definitions (what the tutorial shows).
    top = page.locator(queued).bounding_box()
    end = page.locator("#schedules-box").bounding_box()
    assert top and end
    # Boxes are the viewport's, the clip the page's: add how far the page is scrolled.
    scrolled = page.evaluate("window.scrollY")
    top["y"] += scrolled
    end["y"] += scrolled
    clip = {
        "x": 0,
        "y": top["y"] - 8,
        "width": 1400,
        "height": end["y"] + end["height"] - top["y"] + 24,
    }
    page.screenshot(
        path=str(out / "notebook-jobs-schedules-portal-light.png"), full_page=True, clip=clip
    )

    # Resubmit on the waiting run's row runs it now, as a job of its own (not at 03:00).
    page.click(f"{queued} button:has-text('Resubmit')")
    page.wait_for_selector("#form-note:has-text('Resubmitted as Slurm job')")
    newest = _ask(hub, alice_token, "GET", f"{JOBS}?mine=true&limit=1").json()[0]
    assert newest["id"] != definition["next_job"] and newest["schedule_id"] is None
    assert "begin" not in newest["request"] or not newest["request"]["begin"], newest["request"]
    _ask(hub, alice_token, "DELETE", f"{JOBS}/{newest['id']}")

    page.click(f"{row} button:has-text('Pause')")
    page.wait_for_selector(f"{row}:has-text('paused')")
    assert "paused: its waiting run is cancelled" in page.inner_text("#schedule-note")
    paused = _ask(hub, alice_token, "GET", f"{SCHEDULES}/{definition['id']}").json()
    assert paused["active"] is False and paused["next_job"] is None
    page.click(f"{row} button:has-text('Resume')")
    page.wait_for_selector(f"{row} button:has-text('Pause')")
    resumed = _ask(hub, alice_token, "GET", f"{SCHEDULES}/{definition['id']}").json()
    assert resumed["active"] is True and resumed["next_job"]

    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f"{row} button:has-text('Delete')")
    page.wait_for_selector("#schedules-box", state="hidden")
    assert _ask(hub, alice_token, "GET", f"{SCHEDULES}/{definition['id']}").status_code == 404
