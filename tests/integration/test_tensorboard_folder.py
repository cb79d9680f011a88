"""TensorBoard where the user is (issue 12, 4): right-click a folder in JupyterLab's file
browser, "Open in TensorBoard", and its scalars show in a new tab, private to its owner.
Real Slurm, hub, JupyterLab (the @gpuportal/session extension) and Chromium."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from tests.hubproc import VENV_BIN
from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in
from tests.integration.test_tensorboard import alice_boards

pytestmark = pytest.mark.integration

WRITE_SCALARS = """
import sys, time
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter
writer = EventFileWriter(sys.argv[1])
for step in range(5):
    value = Summary.Value(tag="demo/loss", simple_value=1.0 / (step + 1))
    writer.add_event(Event(step=step, wall_time=time.time(), summary=Summary(value=[value])))
writer.close()
"""

POST = """async ([path, withToken]) => {
  const token = decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/) || ["", ""])[1]);
  const response = await fetch("/user/alice/gpuportal/tensorboard", {
    method: "POST", body: JSON.stringify({path}),
    headers: withToken ? {"X-XSRFToken": token} : {},
  });
  return [response.status, await response.text()];
}"""


def start_with_runs(hub: Hub, alice: Any) -> None:
    """alice's session on gpu-1, and one run of scalars in /home/alice/runs/exp1."""
    body = {"user_options": {"profile": "gpu-1"}}
    assert hub.api(alice, "POST", "/users/alice/server", json=body).status_code in (201, 202)
    hub.wait_ready(alice, "alice")
    subprocess.run(
        [
            "sudo",
            "-u",
            "alice",
            str(VENV_BIN / "python"),
            "-c",
            WRITE_SCALARS,
            "/home/alice/runs/exp1",
        ],
        check=True,
        cwd="/tmp",
    )


def test_open_in_tensorboard_from_a_folders_context_menu(
    hub: Hub, clean: None, browser: Any
) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    start_with_runs(hub, alice)

    # A plain file beside the folder, for the file's context menu below.
    subprocess.run(["sudo", "-u", "alice", "touch", "/home/alice/notes.txt"], check=True)
    # ?reset: the home listed, whatever folder an earlier test left the workspace in.
    page.goto(f"{hub.url}/user/alice/lab?reset")
    folder = page.locator(".jp-DirListing-item[data-isdir='true']", has_text="runs")
    folder.click(button="right")
    with page.context.expect_page() as opened:
        page.click(".lm-Menu-itemLabel:text-is('Open in TensorBoard')")
    board = opened.value
    board.wait_for_url("**/user/alice/tensorboard/tb/*/", timeout=60_000)
    board.wait_for_selector("text=demo/loss", timeout=60_000)
    base = board.url.split("#")[0]  # TensorBoard adds its dashboard as a fragment
    tags = board.request.get(base + "data/plugin/scalars/tags").json()
    assert tags == {"exp1": {"demo/loss": {"displayName": "demo/loss", "description": ""}}}
    assert len(alice_boards()) == 1

    # A file has no such entry; the TensorBoard page lists the board opened from the menu.
    page.keyboard.press("Escape")
    page.locator(".jp-DirListing-item[data-isdir='false']").first.click(button="right")
    assert page.locator(".lm-Menu-itemLabel:text-is('Open in TensorBoard')").count() == 0
    page.keyboard.press("Escape")
    listing = page.context.new_page()
    listing.goto(f"{hub.url}/user/alice/tensorboard/")
    assert "/home/alice/runs" in listing.inner_text("#boards")
    # ...and offers the runs folder in its picker, with its one run.
    assert "runs\n1 run · updated" in listing.inner_text("#folders")

    # JupyterLab's Portal menu opens the jobs page in a tab of its own.
    page.click(".lm-MenuBar-itemLabel:text-is('Portal')")
    with page.context.expect_page() as opened_jobs:
        page.click(".lm-Menu-itemLabel:text-is('Jobs')")
    opened_jobs.value.wait_for_url("**/services/portal/jobs")
    opened_jobs.value.close()

    # The endpoint: folders under the user's files only, and never without the XSRF token.
    assert page.evaluate(POST, ["../bob", True]) == [
        400,
        '{"message": "that folder is outside your files", "reason": null}',
    ]
    status, text = page.evaluate(POST, ["runs", False])
    assert status == 403, text
    assert len(alice_boards()) == 1
