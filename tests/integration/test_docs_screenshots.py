"""The docs' screenshots are taken here, in Chromium, from the running product, light and dark,
never by hand. With GPUPORTAL_SCREENSHOTS=docs/_static/screenshots they are written where the
docs and the README read them (look at them, then commit them); otherwise to a temporary
folder. Either way each page is checked to be the one the docs describe before it is taken."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_one_look import open_as

pytestmark = pytest.mark.integration

DOCS_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "_static" / "screenshots"
# name: (who, page, what shows it is that page)
SHOTS = {
    "spawn": ("alice", "/hub/spawn", "[data-profile=gpu-2]"),
    "jobs": ("alice", "/services/portal/jobs", "#job-form"),
    "profiles": ("carol", "/services/portal/admin", "#profiles"),
}


def folder(tmp_path: Path) -> Path:
    chosen = os.environ.get("GPUPORTAL_SCREENSHOTS")
    return Path(chosen) if chosen else tmp_path


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_docs_screenshots(
    hub: Hub, clean: None, browser: Any, tmp_path: Path, dark: bool
) -> None:
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    mode = "dark" if dark else "light"
    for name, (user, path, marker) in SHOTS.items():
        context, page = open_as(browser, hub, user, dark=dark, width=1280)
        page.goto(hub.url + path)
        page.wait_for_selector(marker)
        page.wait_for_timeout(500)  # the pages' own scripts fill in their lists
        assert page.get_attribute("html", "data-bs-theme") == mode
        page.screenshot(path=str(out / f"{name}-{mode}.png"))
        context.close()
        assert (out / f"{name}-{mode}.png").stat().st_size > 10_000


def test_the_docs_show_the_screenshots_this_test_takes() -> None:
    # The committed images are this test's: every one the docs name is one of SHOTS, in both
    # modes, and is there.
    named = {f"{name}-{mode}.png" for name in SHOTS for mode in ("light", "dark")}
    # And a session in a podman image, taken by tests/integration/test_container_session.py.
    named |= {"container-spawn-light.png", "container-lab-light.png"}
    # And single sign-on's, taken by tests/integration/test_sso_login.py.
    named |= {f"sso-{name}-light.png" for name in ("login", "code", "refused", "signed-out")}
    # And a reused code's refusal, taken by tests/integration/security/test_sso_review.py.
    named.add("sso-code-reused-light.png")
    # And the maintenance page's, taken by tests/integration/third_hour/test_maintenance.py.
    named |= {"maintenance-light.png", "maintenance-dark.png"}
    # And JupyterLab's Notebook Jobs, taken by tests/integration/test_notebook_jobs_lab.py.
    named |= {
        f"notebook-jobs-{name}-light.png"
        for name in ("form", "refused", "list", "run", "schedule", "definition")
    }
    # And a notebook job on the portal's Jobs page, by tests/integration/test_notebook_jobs.py.
    named |= {"notebook-jobs-portal-light.png", "notebook-jobs-report-light.png"}
    # And the definitions on that page, by tests/integration/test_notebook_schedules.py.
    named.add("notebook-jobs-schedules-portal-light.png")
    assert {p.name for p in DOCS_SHOTS.glob("*.png")} == named
