"""Issue 34, item 8: the API docs' "Try it out" works with the login the page was opened with
(it answered 403 "Send a hub token" for every admin call and every POST). In Chromium, as
carol (an admin)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def try_it(page: Any, method: str, path: str) -> tuple[str, str]:
    """Open an operation, Try it out, Execute: the status and the body Swagger UI shows."""
    block = page.locator(f".opblock-{method.lower()}").filter(
        has=page.locator(f".opblock-summary-path[data-path='/services/portal{path}']")
    )
    block.locator(".opblock-summary").click()
    block.locator("button.try-out__btn").click()
    block.locator("button.execute").click()
    live = block.locator(".live-responses-table tbody .response-col_status").first
    live.wait_for()
    body = block.locator(".live-responses-table .response-col_description pre").first
    return live.inner_text().strip(), body.inner_text()


def test_try_it_out_runs_as_the_logged_in_admin(hub: Hub, browser: Any) -> None:
    page = log_in(browser, hub, "carol", "carol-demo")
    page.goto(f"{hub.url}/services/portal/docs")
    page.wait_for_selector("#swagger-ui .opblock")

    status, body = try_it(page, "GET", "/api/usage/waste")
    assert status == "200", body
    status, body = try_it(page, "GET", "/api/audit/events")
    assert status == "200", body
    # A POST: Swagger's example job is checked like any other (not refused for its login).
    status, body = try_it(page, "POST", "/api/jobs/preview")
    assert status != "403" and "hub token" not in body, body
    assert "runs as you, with this page's login" in page.inner_text("#docs-auth")
