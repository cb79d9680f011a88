"""A TensorBoard shared with a team (issue 12, 5): alice shares her runs folder with her group
ds; bob (ds) opens it through the hub and sees the scalars; dave (group vision) gets 403; bob
cannot reach alice's JupyterLab through it; it runs as alice inside her session's job and ends
when she stops sharing or her session ends. Real Slurm, LDAP, hub and Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Hub, squeue, wait_for
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_live_profiles import log_in
from tests.integration.test_tensorboard_folder import start_with_runs

pytestmark = pytest.mark.integration

BOARD = "/user/alice/tb-runs/"


def board_steps() -> list[str]:
    """Steps named tb-runs in Slurm, as "JOB.STEP USER"."""
    lines = squeue("--steps", "--noheader", "--format=%i %j %u").splitlines()
    return [f"{line.split()[0]} {line.split()[2]}" for line in lines if " tb-runs " in line]


def test_a_shared_tensorboard_is_the_groups_and_nothing_more(
    hub: Hub, clean: None, browser: Any, tmp_path: Path
) -> None:
    # The browser logs in first: with a running server, the login goes on to JupyterLab.
    alice = log_in(browser, hub, "alice", "alice-demo")
    alice_api = hub.login("alice")
    start_with_runs(hub, alice_api)

    alice.goto(f"{hub.url}/hub/home?share=/home/alice/runs")
    assert alice.input_value("#gp-share-folder") == "/home/alice/runs"
    alice.select_option("#gp-share-group", "ds")
    alice.click("#gp-share button[type=submit]")
    alice.wait_for_selector("[data-board='tb-runs'][data-state='running']", timeout=120_000)
    assert "Shared with ds" in alice.inner_text("[data-board='tb-runs']")
    # A shared board is not a session: no session card for it.
    assert alice.locator(".gp-card[data-server='tb-runs']").count() == 0
    # It runs as alice, as a step of her session's job.
    steps = board_steps()
    assert len(steps) == 1 and steps[0].endswith(" alice"), steps

    # bob, in ds, finds it on his home page (issue 20, item 7), opens it through the hub and
    # sees alice's scalars.
    bob_home = log_in(browser, hub, "bob", "bob-demo")
    bob_home.goto(f"{hub.url}/hub/home")
    shared = bob_home.locator("[data-shared-board='alice/tb-runs']")
    shared.wait_for()
    assert "alice: /home/alice/runs" in shared.inner_text()
    with bob_home.context.expect_page() as opened:
        shared.locator("a:has-text('Open')").click()
    bob = opened.value
    # The hub asks once whether bob lets alice's board know who he is (JupyterHub's own
    # confirmation for a server shared by someone else), in words that say what it is.
    bob.wait_for_selector("#oauth-allow")
    assert bob.inner_text("h1") == "Open alice's shared TensorBoard"
    said = bob.inner_text("form ul")
    assert "Identify the owner of the requesting entity" not in said, said  # issue 34, item 16
    assert "Know your user name and groups." in said, said
    # Truthful while boards share the hub's origin (issue 68): not "it gets no access".
    why = bob.inner_text("#oauth-why")
    assert "a page alice put there could act as you at the hub and the portal" in why, why
    bob.screenshot(path=str(folder(tmp_path) / "issue68-board-consent-light.png"))
    bob.click("#oauth-allow")
    bob.wait_for_url("**" + BOARD + "**")
    bob.wait_for_selector("text=demo/loss", timeout=60_000)
    tags = bob.request.get(hub.url + BOARD + "data/plugin/scalars/tags").json()
    assert tags == {"exp1": {"demo/loss": {"displayName": "demo/loss", "description": ""}}}
    # ...and nothing else of alice's: not her JupyterLab, not Jupyter's API through the board.
    lab = bob.goto(f"{hub.url}/user/alice/lab")
    assert lab is not None and lab.status == 403
    contents = bob.request.get(hub.url + BOARD + "api/contents")
    assert contents.status == 404 and "Untitled" not in contents.text()

    # dave, outside ds, is refused by the hub.
    dave = log_in(browser, hub, "dave", "dave-demo")
    refused = dave.goto(hub.url + BOARD)
    assert refused is not None and refused.status == 403

    # alice stops sharing: the step ends, and bob's link leads nowhere.
    # It asks first, as a session's Stop does (issue 54, item 13); nothing ends until then.
    alice.click("[data-board='tb-runs'] button.gp-unshare")
    asked = alice.inner_text("[data-board='tb-runs'] .gp-confirm")
    assert asked == "Stop sharing it? ds loses it at once.", asked
    assert board_steps()
    alice.click("[data-board='tb-runs'] button.gp-unshare-confirm")
    wait_for(lambda: not board_steps(), 60, "the board's step to end")
    alice.wait_for_selector("[data-board='tb-runs']", state="detached")
    gone = bob.request.get(hub.url + BOARD + "data/plugin/scalars/tags")
    assert gone.status in (404, 503), gone.status

    # Shared again, it ends with alice's session.
    alice.click("#gp-share button[type=submit]")
    alice.wait_for_selector("[data-board='tb-runs'][data-state='running']", timeout=120_000)
    hub.stop_server(alice_api, "alice")
    wait_for(lambda: not board_steps(), 60, "the board to end with the session")
    # Her open home page says so by itself, without a reload.
    alice.wait_for_selector("[data-board='tb-runs'][data-state='stopped']", timeout=60_000)

    # Issue 54, item 6: its link now says the board has ended, to bob and to alice; neither is
    # offered JupyterHub's "Launch Server tb-runs", nor the GPU spawn form behind it.
    bob.goto(hub.url + BOARD)
    bob.wait_for_selector("#board-ended")
    shots = folder(tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for mode in ("light", "dark"):
        bob.emulate_media(color_scheme=mode)
        bob.reload()
        bob.wait_for_selector("#board-ended")
        bob.screenshot(path=str(shots / f"issue54-board-ended-{mode}.png"))
    said = "alice's board “tb-runs” ran inside their session, which has stopped"
    assert said in bob.inner_text(".gp-error-page")
    assert bob.query_selector("#start") is None
    alice.goto(f"{hub.url}/hub/spawn/alice/tb-runs")
    alice.wait_for_selector("#board-ended")
    assert "can share the folder again from the Sessions page" in alice.inner_text(".gp-error-page")
    assert alice.query_selector("#spawn_form") is None


def test_sharing_needs_a_session_and_one_of_your_groups(hub: Hub, clean: None) -> None:
    bob = hub.login("bob")
    url = f"{hub.url}/hub/gpuportal/tensorboards"
    listed = bob.get(url, timeout=30).json()
    assert listed["groups"] == ["ds"] and listed["boards"] == []
    other = bob.post(url, json={"folder": "/home/bob/runs", "group": "vision"})
    assert other.status_code == 400 and "only with your own groups (ds)" in other.json()["error"]
    bad = bob.post(url, json={"folder": "/home/bob/../alice", "group": "ds"})
    assert bad.status_code == 400 and "'..'" in bad.json()["error"]
    idle = bob.post(url, json={"folder": "/home/bob/runs", "group": "ds"})
    assert idle.status_code == 409 and "start one first" in idle.json()["error"]
