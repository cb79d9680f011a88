"""The file browser lists its folder as soon as JupyterLab has started (issue 59): it does not
wait for the workspace's save, and it still opens on the folder the user left, or on the one a
/lab/tree/ URL names. Real Slurm, hub, JupyterLab (the @gpuportal/session extension) and
Chromium.

Stock JupyterLab 4 keeps the listing hidden (`jp-mod-restoring`) until its router has run
every command of the route, the last of which awaits the workspace's save (a PUT of
lab/api/workspaces): with that PUT held, its listing never shows."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

FOLDER = "/home/alice/listing-test"
ITEM = ".jp-DirListing-content .jp-DirListing-item"


def as_alice(*command: str) -> None:
    subprocess.run(["sudo", "-u", "alice", *command], check=True, cwd="/tmp")


def wait_for_saved_cwd(page: Any, hub: Hub, path: str) -> None:
    """Until the workspace on the server remembers the file browser in `path`."""
    url = f"{hub.url}/user/alice/lab/api/workspaces/default"
    saved = None
    for _ in range(60):
        data = page.request.get(url).json().get("data", {})
        saved = data.get("file-browser-filebrowser:cwd", {}).get("path")
        if saved == path:
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"the workspace remembers {saved!r}, not {path!r}")


def test_the_listing_shows_before_the_workspace_is_saved_and_opens_where_the_user_was(
    hub: Hub, clean: None, browser: Any
) -> None:
    as_alice("mkdir", "-p", f"{FOLDER}/alpha")
    as_alice("touch", f"{FOLDER}/alpha/remembered.txt")
    try:
        page = log_in(browser, hub, "alice", "alice-demo")
        alice = hub.login("alice")
        body = {"user_options": {"profile": "gpu-1"}}
        assert hub.api(alice, "POST", "/users/alice/server", json=body).status_code in (201, 202)
        hub.wait_ready(alice, "alice")
        lab = f"{hub.url}/user/alice/lab"

        # Every save of the workspace is held, unanswered, while the lab loads.
        held: list[Any] = []

        def hold(route: Any) -> None:
            if route.request.method == "PUT":
                held.append(route)
            else:
                route.continue_()

        page.route("**/lab/api/workspaces/**", hold)
        page.goto(lab)
        page.wait_for_selector(ITEM, timeout=20_000)
        for _ in range(40):  # the save is debounced: it may come after the listing
            if held:
                break
            page.wait_for_timeout(250)
        assert held, "the lab saved no workspace while it loaded: the test holds nothing"
        assert page.locator(ITEM).first.is_visible()
        for route in held:
            route.continue_()
        page.unroute("**/lab/api/workspaces/**")

        # The user goes into a folder; the lab loaded again lists that folder, not the home.
        page.locator(ITEM, has_text="listing-test").dblclick()
        page.locator(ITEM, has_text="alpha").dblclick()
        page.wait_for_selector(f"{ITEM}:has-text('remembered.txt')")
        wait_for_saved_cwd(page, hub, "listing-test/alpha")
        page.goto(lab)
        page.wait_for_selector(f"{ITEM}:has-text('remembered.txt')", timeout=20_000)
        crumbs = page.inner_text(".jp-FileBrowser .jp-BreadCrumbs")
        assert "alpha" in crumbs, crumbs

        # A URL that names a folder opens that folder, not the remembered one.
        page.goto(f"{hub.url}/user/alice/lab/tree/listing-test")
        page.wait_for_selector(f"{ITEM}:has-text('alpha')", timeout=20_000)
        page.wait_for_timeout(1_000)  # past the restore, which must not move the browser
        names = page.locator(ITEM).all_inner_texts()
        assert any("alpha" in name for name in names), names
        assert not any("remembered.txt" in name for name in names), names

        # Back home, so that the next tests' labs open there.
        page.click(".jp-FileBrowser .jp-BreadCrumbs-home")
        wait_for_saved_cwd(page, hub, "")
    finally:
        as_alice("rm", "-rf", FOLDER)
