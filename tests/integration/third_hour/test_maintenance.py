"""Issue 54, item 19: a maintenance window has a page. grace (an admin) plans one for a node of
the second lane in Chromium, three weeks ahead (no test's job runs into it): real Slurm then has
a MAINT reservation for root on that node, users read its notice, and Cancel window (after a
yes) removes both. A node Slurm does not know is refused at the field."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.hubproc import PASSWORDS
from tests.integration.conftest import Hub
from tests.integration.test_cli import token_of
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_live_profiles import log_in
from tests.integration.third_hour.conftest import ADMIN, USER

pytestmark = pytest.mark.integration

PAGE = "/services/portal/admin/maintenance"
NODE = "lane-02"


def reservation(name: str) -> str:
    shown = subprocess.run(
        ["scontrol", "show", "reservation", name, "--oneliner"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return shown.stdout if shown.returncode == 0 else ""


def test_grace_plans_a_window_users_read_of_it_and_she_cancels_it(
    hub: Hub, clean: None, browser: Any, tmp_path: Path
) -> None:
    start = (datetime.now() + timedelta(days=21)).replace(hour=8, minute=0, second=0, microsecond=0)
    end = start + timedelta(hours=4)
    name = f"maint-{start:%Y%m%d-%H%M}"
    page = log_in(browser, hub, ADMIN, PASSWORDS[ADMIN], viewport={"width": 1280, "height": 900})
    page.goto(f"{hub.url}/services/portal/admin")
    page.click("a:has-text('Maintenance windows')")
    page.wait_for_selector("#maintenance-form")

    # A node Slurm does not know: said at the field, with the nodes it has; nothing made.
    page.fill("#starts_at", start.strftime("%Y-%m-%dT%H:%M"))
    page.fill("#ends_at", end.strftime("%Y-%m-%dT%H:%M"))
    page.fill("#nodes", "lane-09")
    page.click("#maintenance-plan")
    said = page.inner_text("#error-nodes")
    assert "lane-09, which Slurm does not know" in said and "lane-[01-02]" in said, said
    assert reservation(name) == ""

    page.fill("#nodes", NODE)
    page.click("#maintenance-plan")
    page.wait_for_selector(f"tr[data-window='{name}']")
    assert f"Planned {name}" in page.inner_text("#saved")
    made = reservation(name)
    assert f"Nodes={NODE} " in made and "Users=root" in made, made
    assert "MAINT" in made.split("Flags=")[1].split()[0], made
    # Its notice on the page itself, as on every page: the hub reads the portal's notices every
    # 15 s, a page asks the hub every minute; a reload asks at once.
    banner = f"#gp-notices :text('Maintenance of {NODE}')"
    for _ in range(12):
        page.wait_for_timeout(5000)
        page.reload()
        page.wait_for_selector("#thenavbar a.nav-link")
        if page.query_selector(banner) is not None:
            break
    page.wait_for_selector(banner, timeout=10_000)
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / "maintenance-light.png"), full_page=True)
    page.emulate_media(color_scheme="dark")
    page.reload()  # the page takes its mode as it loads
    page.wait_for_selector(banner)
    page.screenshot(path=str(out / "maintenance-dark.png"), full_page=True)
    page.emulate_media(color_scheme="light")
    page.reload()

    # erin reads of it on every page (the portal's notices, which the hub's pages show).
    notices = f"{hub.url}/services/portal/api/notices"
    erin = {"Authorization": f"token {token_of(hub, USER)}"}
    texts = [n["text"] for n in requests.get(notices, headers=erin, timeout=30).json()]
    assert f"Maintenance of {NODE} from {start:%a %d %b %H:%M} to 12:00" in " ".join(texts), texts

    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.click(f"tr[data-window='{name}'] button:has-text('Cancel window')")
    page.wait_for_selector(f"tr[data-window='{name}']", state="detached")
    assert asked and asked[0].startswith(f"Cancel maintenance {name}?"), asked
    assert reservation(name) == ""
    texts = [n["text"] for n in requests.get(notices, headers=erin, timeout=30).json()]
    assert not any(text.startswith(f"Maintenance of {NODE}") for text in texts), texts
    page.context.close()


def test_a_window_from_now_through_the_api(hub: Hub, clean: None) -> None:
    """No start: Slurm's own "now" (the minute asked for began a moment ago)."""
    api = f"{hub.url}/services/portal/api/maintenance"
    grace = {"Authorization": f"token {token_of(hub, ADMIN)}"}
    ends = (datetime.now() + timedelta(hours=1)).isoformat(timespec="minutes")
    body = {"ends_at": ends, "nodes": NODE, "notice": False}
    made = requests.post(api, headers=grace, json=body, timeout=60)
    assert made.status_code == 201, made.text
    window = made.json()
    assert window["running_now"] and window["nodes"] == [NODE], window
    assert "State=ACTIVE" in reservation(window["name"])
    erin = {"Authorization": f"token {token_of(hub, USER)}"}
    assert requests.get(api, headers=erin, timeout=30).status_code == 403
    gone = requests.delete(f"{api}/{window['name']}", headers=grace, timeout=60)
    assert gone.status_code == 204, gone.text
    assert reservation(window["name"]) == ""


@pytest.fixture(autouse=True)
def no_window_left() -> Any:
    """A failed run leaves no reservation behind for the tests after it."""
    yield
    listed = subprocess.run(
        ["scontrol", "show", "reservation", "--oneliner"], capture_output=True, text=True
    ).stdout
    for line in listed.splitlines():
        if line.startswith("ReservationName=maint-") and f"Nodes={NODE} " in line:
            found = line.split()[0].split("=", 1)[1]
            subprocess.run(["scontrol", "delete", f"ReservationName={found}"], check=False)
