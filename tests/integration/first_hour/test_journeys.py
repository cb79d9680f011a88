"""Issue 20: the README's journeys end to end in Chromium, as alice, carol and bob, with every
console error, failed request and 4xx/5xx answer collected: there must be none. Then every
page on a phone in the dark, as dave and carol: none wider than the screen."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub, cancel_user_jobs
from tests.integration.jobs import install_job_files
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


class Trouble:
    """Everything that went wrong on a page, as a reader of the browser's console would see."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def watch(self, page: Any) -> Any:
        page.on(
            "console",
            lambda m: (
                self.seen.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            ),
        )
        page.on("pageerror", lambda e: self.seen.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self._failed(r))
        page.on(
            "response",
            lambda r: (
                self.seen.append(f"{r.status} {r.request.method} {r.url}")
                if r.status >= 400
                else None
            ),
        )
        return page

    def _failed(self, request: Any) -> None:
        failure = request.failure or ""
        # A page left while it still loads (a redirect, a click away) aborts its requests.
        if "ERR_ABORTED" not in failure:
            self.seen.append(f"failed {request.method} {request.url}: {failure}")


def test_the_readme_journeys_have_no_console_error_and_no_failed_request(
    hub: Hub, clean: None, browser: Any
) -> None:
    install_job_files("alice")
    cancel_user_jobs("alice")
    trouble = Trouble()
    alice = trouble.watch(log_in(browser, hub, "alice", "alice-demo"))

    # Start a session from the form, wait, land in JupyterLab.
    alice.goto(f"{hub.url}/hub/spawn")
    alice.check("input[name=profile][value=gpu-1]")
    alice.click("#spawn_form button[type=submit]")
    alice.wait_for_url("**/user/alice/lab**", timeout=120_000)
    alice.wait_for_selector(".jp-LabShell", timeout=60_000)
    # TensorBoard from the launcher's page, then the hub's home with the session's card.
    alice.goto(f"{hub.url}/user/alice/tensorboard/")
    alice.wait_for_selector("#nav-lab")
    alice.goto(f"{hub.url}/hub/home")
    alice.locator('.gp-card[data-server=""] .gp-state', has_text="Running").wait_for()
    # A job from the jobs page, its output; the API docs.
    alice.goto(f"{hub.url}/services/portal/jobs")
    alice.fill("#name", "journey")
    alice.click("#submit")
    alice.wait_for_selector("#detail-title:has-text('completed')", timeout=90_000)
    alice.goto(f"{hub.url}/services/portal/docs")
    alice.wait_for_selector("#swagger-ui .info")
    # Stop the session from its card.
    alice.goto(f"{hub.url}/hub/home")
    card = alice.locator('.gp-card[data-server=""]')
    card.locator(".gp-stop").click()
    card.locator(".gp-stop-confirm").click()
    card.locator(".gp-state", has_text="Not running").wait_for(timeout=60_000)

    # carol: the profiles admin page, the audit; bob: his home.
    carol = trouble.watch(log_in(browser, hub, "carol", "carol-demo"))
    carol.goto(f"{hub.url}/services/portal/admin")
    carol.wait_for_selector("#profiles")
    carol.goto(f"{hub.url}/services/portal/admin/audit")
    carol.wait_for_selector("#events")
    bob = trouble.watch(log_in(browser, hub, "bob", "bob-demo"))
    bob.goto(f"{hub.url}/hub/home")
    bob.wait_for_selector("#gp-sessions .gp-card")

    bob.wait_for_timeout(1000)  # answers still on their way
    assert trouble.seen == []


PHONE = {"viewport": {"width": 390, "height": 844}, "color_scheme": "dark"}
PAGES = {
    "dave": ["/hub/home", "/hub/spawn", "/hub/token", "/services/portal/jobs",
             "/services/portal/docs"],
    "carol": ["/hub/admin", "/services/portal/admin", "/services/portal/admin/audit",
              "/services/portal/admin/profiles/gpu-1", "/services/portal/admin/environments/torch"],
}  # fmt: skip


def test_every_page_fits_a_phone_screen_in_the_dark(hub: Hub, browser: Any) -> None:
    trouble, too_wide = Trouble(), []
    for user, paths in PAGES.items():
        page = trouble.watch(log_in(browser, hub, user, f"{user}-demo", **PHONE))
        for path in paths:
            page.goto(f"{hub.url}{path}")
            page.wait_for_load_state("networkidle")
            # Wide tables scroll inside themselves; the page itself never scrolls sideways.
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                too_wide.append(f"{path} is {width} px wide")
        page.context.close()
    assert too_wide == []
    assert trouble.seen == []
