"""Issue 20, item 5: a user name is checked (length, characters) before anything else sees it, so
failed logins with absurd names cannot wreck the audit page. In Chromium, as carol."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_a_5000_character_login_is_refused_and_the_audit_page_keeps_its_width(
    hub: Hub, browser: Any
) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", "x" * 5000)
    page.fill("#password_input", "whatever")
    page.click("#login_submit")
    page.wait_for_selector("#login_submit")
    assert "/hub/login" in page.url
    context.close()

    carol = log_in(browser, hub, "carol", "carol-demo")
    carol.set_viewport_size({"width": 1280, "height": 900})
    carol.goto(f"{hub.url}/services/portal/admin/audit?action=login_failed")
    row = carol.locator("#events tr", has_text="not a user name").first
    row.wait_for()
    assert "xxxxxxxx... (5000 characters)" in row.inner_text()
    assert "x" * 33 not in carol.content()
    box = carol.locator("#events").bounding_box()
    assert box is not None and box["width"] <= 1280, f"the table is {box} wide"
