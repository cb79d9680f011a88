"""Issue 34, item 1: `%tensorboard` works in a later session after an earlier one was killed,
and a killed session's private /tmp folder is gone once the next session of its user starts.

On the second lane (erin, nodes of their own): TensorBoard records each instance in
<temporary folder>/.tensorboard-info and reused a dead one's record (port 1, 404) from the node's
shared /tmp. Now the session's TensorBoards record themselves in its private folder, dead records
are dropped, and a killed session's folder (its lock free) is removed by the next one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.hubproc import SECOND_LANE_USERS
from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.integration.test_live_profiles import log_in
from tests.own_processes import HERE

pytestmark = pytest.mark.integration

USER = "erin"
UID = 10005
NOTEBOOK = "templates/05-tensorboard-logging.ipynb"


def folders() -> set[Path]:
    return set(Path("/tmp").glob(f"gpuportal-{UID}-*"))


def shared_records() -> list[Path]:
    """erin's TensorBoard records in the node's shared /tmp, where TensorBoard puts them."""
    shared = Path("/tmp/.tensorboard-info")
    return [p for p in shared.glob("pid-*.info") if p.stat().st_uid == UID]


def run_board(page: Any, hub: Hub, *, train: bool = True) -> str:
    """Start a session from the form, run the TensorBoard notebook (all of it, or with
    train=False only its last cell, the board on the runs a first session wrote); the frame's
    address, once its scalars show."""
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.check("input[name=environment][value=session]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url(f"**/user/{USER}/lab**")
    page.goto(f"{hub.url}/user/{USER}/lab/tree/{NOTEBOOK}")
    page.wait_for_selector("#jp-main-statusbar :text('PyTorch | Idle')")
    board_cell = page.locator(".jp-CodeCell", has_text="%tensorboard").first
    if train:
        page.click("text=Run")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
    else:
        board_cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")  # this cell only (Shift+Enter adds one below)
    # The board cell's output: the board's frame, or the words saying why there is none.
    last = board_cell.locator(".jp-OutputArea-output")

    def said() -> str:
        text = last.first.inner_text() if last.count() else ""
        return "" if text.startswith("Starting TensorBoard") else text

    # The notebook trains a small model on the CPU first: under make test's load (both lanes,
    # the Debian 13 install) that took over 240 s once, where it takes seconds alone.
    try:
        wait_for(said, 480, "the last cell's output")
    except AssertionError as timed_out:
        raise AssertionError(f"{timed_out}; the cells then: {cells_now(page)}") from None
    frames = last.locator("iframe")
    assert frames.count() == 1, last.first.inner_text()
    page.frame_locator(".jp-OutputArea-output iframe").locator("text=train/loss").first.wait_for()
    return frames.get_attribute("src") or ""


def cells_now(page: Any) -> list[tuple[str, str]]:
    """Each code cell's prompt ([n], [*] while it runs) and the end of its output, and the
    kernel's status: where a notebook stands when it does not finish."""
    cells = page.locator(".jp-CodeCell")
    status = page.locator("#jp-main-statusbar").inner_text().replace("\n", " ")
    shown = [("status bar", status)]
    for index in range(cells.count()):
        cell = cells.nth(index)
        prompt = cell.locator(".jp-InputPrompt").first.inner_text()
        output = cell.locator(".jp-OutputArea").first
        shown.append((prompt, output.inner_text()[-300:] if output.count() else ""))
    return shown


def test_tensorboard_works_again_after_a_killed_session(
    second_lane_hub: Hub, second_lane_clean: None, browser: Any
) -> None:
    hub = second_lane_hub
    before = folders()
    page = log_in(browser, hub, USER, SECOND_LANE_USERS[USER])
    page.set_default_timeout(180_000)
    first = run_board(page, hub)
    made = folders() - before
    assert len(made) == 1, made
    assert not shared_records(), "TensorBoard's records stay in the session's folder"
    (folder,) = made
    assert list((folder / "tmp" / ".tensorboard-info").glob("pid-*.info"))

    # Every process of the session killed at once, as by a node failure or the time limit's
    # SIGKILL: nothing of the job can clean up after itself.
    subprocess.run(["pkill", *HERE, "-KILL", "-u", USER], check=True, timeout=20)
    wait_for(lambda: not user_jobs(USER), 60, "the killed job to end")
    assert folder.is_dir(), "a killed session cannot remove its folder"
    hub.stop_server(hub.login(USER), USER)

    # The next session on the node: the same notebook shows its board, the old folder is gone.
    # Its board shows the runs the first session wrote (training again only loads the machine).
    second = run_board(page, hub, train=False)
    assert second == first  # same "instance number": only a live board could answer
    assert not folder.exists()
    assert len(folders() - before) == 1
