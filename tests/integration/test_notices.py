"""Notices (issue 24, 3): carol posts one through the portal's API; it reaches alice on the hub's
home, the portal's jobs page, JupyterLab and the command line, is not shown to a group it is not
for, and goes at its end time. Real hub, portal and Chromium."""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from tests.hubproc import VENV_BIN
from tests.integration.conftest import Hub, wait_for
from tests.integration.test_cli import token_of
from tests.integration.test_environment_spawn import spawn
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

TEXT = "Maintenance tonight 18:00-20:00: save your work (test notice)"


def test_a_notice_reaches_every_page_and_the_cli_and_goes_at_its_end(
    hub: Hub, clean: None, browser: Any
) -> None:
    carol = token_of(hub, "carol")
    portal = f"{hub.url}/services/portal/api/notices"
    ends = datetime.now(UTC) + timedelta(seconds=75)
    posted = requests.post(
        portal,
        headers={"Authorization": f"token {carol}"},
        json={"text": TEXT, "level": "warning", "ends_at": ends.isoformat()},
        timeout=30,
    )
    assert posted.status_code == 201, posted.text
    for_vision = requests.post(
        portal,
        headers={"Authorization": f"token {carol}"},
        json={"text": "For team vision only", "groups": ["vision"], "ends_at": ends.isoformat()},
        timeout=30,
    )
    assert for_vision.status_code == 201
    alice_token = token_of(hub, "alice")

    def on_the_hub() -> bool:
        # The hub reads the portal's notices at most every 15 s (NOTICES_TTL_S) for all pages;
        # a page loaded before that would show it at its next look, a minute later.
        shown = requests.get(
            f"{hub.url}/hub/gpuportal/notices",
            headers={"Authorization": f"token {alice_token}"},
            timeout=30,
        ).json()
        return any(notice["text"] == TEXT for notice in shown)

    wait_for(on_the_hub, 30, "the hub to read the new notice")
    try:
        page = log_in(browser, hub, "alice", "alice-demo")
        page.goto(f"{hub.url}/hub/home")
        banner = page.wait_for_selector(".gp-notice")
        assert banner is not None and banner.inner_text() == TEXT
        assert "alert-warning" in (banner.get_attribute("class") or "")
        assert "For team vision only" not in page.inner_text("#gp-notices")
        page.goto(f"{hub.url}/services/portal/jobs")
        assert page.wait_for_selector(f".gp-notice:text-is('{TEXT}')") is not None

        # JupyterLab: a notification that stays.
        spawn(hub, hub.login("alice"), "session")
        page.goto(f"{hub.url}/user/alice/lab")
        assert page.wait_for_selector(f".Toastify__toast:has-text('{TEXT}')", timeout=120_000)

        # The command line says it on stderr, before its own output.
        as_alice = ["--url", hub.url, "--token", alice_token]
        cli = subprocess.run(
            [str(VENV_BIN / "gpuportal"), *as_alice, "--json", "jobs", "list"],
            capture_output=True,
            text=True,
        )
        assert cli.returncode == 0, cli.stderr
        assert f"Notice (warning): {TEXT}" in cli.stderr
        assert cli.stdout.lstrip().startswith("[")  # --json output unchanged

        # At its end time it goes, without a reload of the page (each page asks every minute).
        time.sleep(max(0.0, (ends - datetime.now(UTC)).total_seconds()))
        page.goto(f"{hub.url}/hub/home")
        page.wait_for_selector("#gp-notices", state="attached")
        wait_for(lambda: page.query_selector(".gp-notice") is None, 30, "the notice to go")
    finally:
        hub.stop_server(hub.login("alice"), "alice")
