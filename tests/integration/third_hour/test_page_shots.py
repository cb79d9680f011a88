"""The pages issue 54 changed, in Chromium, light and dark, as the issue's Show asks: each is
checked to be that page, then taken (GPUPORTAL_SCREENSHOTS=DIR keeps them; see
tests/integration/test_docs_screenshots.py). The maintenance page's are taken in
test_maintenance.py, the single sign-on's Try again in test_sso_login.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.hubproc import PASSWORDS
from tests.integration.conftest import Hub
from tests.integration.test_docs_screenshots import folder
from tests.integration.test_live_profiles import log_in
from tests.integration.third_hour.conftest import ADMIN, USER

pytestmark = pytest.mark.integration

# name: (who, address, what shows it is that page)
PAGES = {
    "hub-404": (USER, "/hub/nothing-here", "#error-message"),
    "bad-session-name": (USER, f"/hub/spawn/{USER}/BAD_NAME", "#error-message"),
    "portal-404": (USER, "/services/portal/jobs/99999", "h1:has-text('There is nothing here')"),
    "jobs-form": (USER, "/services/portal/jobs", "#job-form select#partition"),
    "profile-delete": (ADMIN, "/services/portal/admin/profiles/gpu-1", "#delete-profile"),
    "audit": (ADMIN, "/services/portal/admin/audit", "#audit-filter"),
}


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_changed_pages(hub: Hub, clean: None, browser: Any, tmp_path: Path, dark: bool) -> None:
    out = folder(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    mode = "dark" if dark else "light"
    for name, (user, path, marker) in PAGES.items():
        page = log_in(
            browser,
            hub,
            user,
            PASSWORDS[user],
            viewport={"width": 1280, "height": 844},
            color_scheme=mode,
        )
        if path.startswith("/services/portal/"):
            page.goto(
                f"{hub.url}/services/portal/jobs"
            )  # signed in to the portal (the hub's OAuth)
        page.goto(hub.url + path)
        page.wait_for_selector(marker)
        page.wait_for_selector("#thenavbar a.nav-link")  # the shared navigation, filled in
        page.screenshot(path=str(out / f"issue54-{name}-{mode}.png"), full_page=True)
        page.context.close()
