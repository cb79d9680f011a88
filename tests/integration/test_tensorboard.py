"""TensorBoard from a notebook, through the hub, private to its owner; nothing left behind.

alice runs the shipped TensorBoard notebook in JupyterLab (Chromium); its last cell,
`%tensorboard --logdir runs`, shows TensorBoard in the notebook through the hub, and the
TensorBoard page (the launcher tile) lists it and opens it in a tab of its own.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.test_live_profiles import log_in
from tests.own_processes import HERE

pytestmark = pytest.mark.integration

NOTEBOOK = "templates/05-tensorboard-logging.ipynb"


def alice_boards() -> list[str]:
    return subprocess.run(
        ["pgrep", *HERE, "-u", "alice", "-f", "gpuportal_session.tensorboard_private"],
        capture_output=True,
        text=True,
    ).stdout.split()


ALICE_UID = 10001
# Where an older version put alice's sockets: a fixed name anyone could make first.
SQUAT = Path(f"/tmp/gpuportal-{ALICE_UID}")


def alice_runtime_dirs() -> set[Path]:
    """alice's sessions' private folders for TensorBoard's sockets on the node (its /tmp)."""
    return set(Path("/tmp").glob(f"gpuportal-{ALICE_UID}-*"))


def sweep_as_alice() -> bool:
    """What alice's next session on the node does first: remove her folders no process holds."""
    sweep = (
        "from pathlib import Path; from gpuportal_session.session_tmp import sweep_left_behind; "
        "sweep_left_behind(Path('/tmp'))"
    )
    subprocess.run(["sudo", "-u", "alice", sys.executable, "-c", sweep], check=True, cwd="/")
    return True


@pytest.fixture
def bob_squats() -> Iterator[None]:
    """bob makes alice's old fixed TensorBoard directory before her session starts."""
    subprocess.run(["rm", "-rf", str(SQUAT)], check=True)
    subprocess.run(["sudo", "-u", "bob", "mkdir", "-m", "0777", str(SQUAT)], check=True)
    yield
    subprocess.run(["rm", "-rf", str(SQUAT)], check=True)


def test_tensorboard_from_the_notebook_is_alices_only(
    hub: Hub, clean: None, browser: Any, bob_squats: None
) -> None:
    earlier = alice_runtime_dirs()
    page = log_in(browser, hub, "alice", "alice-demo")
    page.set_default_timeout(180_000)
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.check("input[name=environment][value=session]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url("**/user/alice/lab**")

    page.goto(f"{hub.url}/user/alice/lab/tree/{NOTEBOOK}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_selector("#jp-main-statusbar :text('PyTorch | Idle')")
    page.click("text=Run")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
    frame = page.wait_for_selector(".jp-OutputArea-output iframe")
    src = frame.get_attribute("src") or ""
    assert src.startswith("/user/alice/tensorboard/tb/"), src
    board_url = hub.url + src
    # The line above it names the folder and says it is private; no "port" (issue 12).
    said = page.inner_text(".jp-OutputArea-output:has(iframe)")
    assert "TensorBoard on /home/alice/templates/runs, private to you" in said, said
    assert not re.search(r"\bport\b", said), said

    # The scalars page of that TensorBoard shows the notebook's tags.
    board = page.context.new_page()
    board.set_default_timeout(60_000)
    opened = board.goto(board_url + "#scalars")
    board.wait_for_selector("text=train/loss")
    # Framed by the session's own pages only, with TensorBoard's own policy kept.
    assert opened is not None
    policy = opened.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'self'" in policy, policy
    tags = board.request.get(board_url + "data/plugin/scalars/tags").json()
    assert {"train/loss", "train/accuracy"} <= set(tags["digits"])

    # The TensorBoard page (the launcher tile) lists it, and a missing folder is a clear error.
    listing = page.context.new_page()
    shown = listing.goto(f"{hub.url}/user/alice/tensorboard/")
    assert shown is not None
    assert "frame-ancestors 'none'" in shown.headers["content-security-policy"]
    assert shown.headers["x-content-type-options"] == "nosniff"
    assert "runs" in listing.inner_text("#boards")
    listing.fill("#logdir", "/home/alice/no-such-folder")
    listing.click("#open")
    assert "there is no folder '/home/alice/no-such-folder'" in listing.inner_text("#error")

    # Every cookie of the hub's and of alice's server is SameSite=Lax.
    cookies = [c for c in page.context.cookies() if c["name"].startswith("jupyterhub-")]
    assert any(c["name"].startswith("jupyterhub-user-alice") for c in cookies), cookies
    assert {c["sameSite"] for c in cookies} == {"Lax"}, cookies

    # A POST with alice's cookies but not from her page (no form token), as another site's
    # page would send it: refused, and nothing opened.
    forged = listing.request.post(
        f"{hub.url}/user/alice/tensorboard/open", form={"logdir": "/home/alice/templates"}
    )
    assert forged.status == 403 and "not sent from this page" in forged.text()
    assert len(alice_boards()) == 1
    # The generic /proxy/<port>/ is closed: the hub's API port is not reachable through it.
    generic = listing.request.get(f"{hub.url}/user/alice/proxy/{hub.port}/hub/api")
    assert generic.status == 404 and "does not serve a session's ports" in generic.text()

    # bob, logged in to the hub, gets 403 on alice's TensorBoard.
    bob = log_in(browser, hub, "bob", "bob-demo")
    response = bob.goto(board_url)
    assert response is not None and response.status == 403
    # ...and a process of bob's on the node cannot reach it either: the socket is alice's only.
    # ...in a directory of alice's own, made with a random name (bob's squat did not matter).
    sockets = sorted(Path("/tmp").glob(f"gpuportal-{ALICE_UID}-*/tensorboard/*.sock"))
    assert sockets and all(sock.parent.parent.stat().st_uid == ALICE_UID for sock in sockets)
    for sock in sockets:
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(sock)!r})"
        attempt = subprocess.run(
            ["sudo", "-u", "bob", "python3", "-c", connect], capture_output=True, text=True
        )
        assert attempt.returncode != 0 and "PermissionError" in attempt.stderr, attempt
    # No TCP port of TensorBoard's anywhere: every listener of alice's is a unix socket.
    listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    for pid in alice_boards():
        assert f"pid={pid}," not in listening

    # Closing it on the TensorBoard page ends its process.
    assert len(alice_boards()) == 1
    listing.goto(f"{hub.url}/user/alice/tensorboard/")
    listing.click("#boards button:text('Close')")
    wait_for(lambda: not alice_boards(), 30, "the closed TensorBoard to end")
    assert "None yet" in listing.inner_text("#boards")

    # The launcher has the TensorBoard tile, and the terminal.
    page.goto(f"{hub.url}/user/alice/lab?reset")
    page.wait_for_selector(".jp-LauncherCard")
    titles = page.eval_on_selector_all(".jp-LauncherCard", "cards => cards.map(c => c.title)")
    assert any("TensorBoard" in title for title in titles), titles
    assert any("terminal" in title.lower() for title in titles), titles

    # Stopping the server leaves no TensorBoard behind (this one from the page).
    listing.goto(f"{hub.url}/user/alice/tensorboard/")
    listing.fill("#logdir", "/home/alice/templates/runs")
    listing.click("#open")
    # It opens inside the product's page, with the way back to the list.
    listing.wait_for_url("**/tensorboard/view/*")
    assert listing.inner_text("#board-folder") == "/home/alice/templates/runs"
    listing.frame_locator("#board").locator("text=train/loss").first.wait_for()
    listing.click("#back")
    listing.wait_for_selector("#boards a:has-text('TensorBoard')")
    assert alice_boards()
    assert alice_runtime_dirs() - earlier, "the session made its private folder"
    alice = hub.login("alice")
    hub.stop_server(alice, "alice")
    wait_for(lambda: not alice_boards(), 30, "alice's TensorBoards to end")
    # Nor its private folder: Slurm leaves the node's /tmp as the job left it. The session
    # removes it as it ends; one killed first (SIGKILL past Slurm's KillWait on a loaded node:
    # the clean-clone run of e32c053 saw it) leaves it unlocked, and the user's next session on
    # the node sweeps it (gpuportal_session.session_tmp). Nothing of the session stays in use.
    wait_for(
        lambda: sweep_as_alice() and not alice_runtime_dirs() - earlier,
        30,
        "the session's /tmp folder to go (or to be free for the next session's sweep)",
    )
