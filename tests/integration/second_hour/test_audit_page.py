"""Issue 34, item 11: the audit page says when its "since" was not understood, shows events
a page at a time, and shows a notice edit as words (it was JSON with < written \\u003c); a
filtered address opened before the portal's login keeps its filter. In Chromium, as carol,
over events in a file of the audit folder beside the hub's and portal's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

WHO = "paging-check"
AUDIT = "/services/portal/admin/audit"


@pytest.fixture
def many_events(hub: Hub) -> Iterator[None]:
    seeded = hub.state / "audit" / "audit-seeded.jsonl"
    lines = [
        {"time": f"2030-01-01T10:{n // 60:02d}:{n % 60:02d}.000Z", "source": "portal",
         "action": "login", "user": WHO}
        for n in range(120)
    ]  # fmt: skip
    lines.append(
        {"time": "2030-01-01T11:00:00.000Z", "source": "portal", "action": "notice_edit",
         "user": WHO, "change": "create", "subject": "7",
         "changes": {"text": [None, "<b>Down</b> at 18:00"], "groups": [None, ["ds", "vision"]]}}
    )  # fmt: skip
    seeded.write_text("".join(json.dumps(line) + "\n" for line in lines))
    yield
    seeded.unlink()


def test_the_audit_page_pages_says_a_bad_since_and_shows_words(
    hub: Hub, browser: Any, many_events: None
) -> None:
    page = log_in(browser, hub, "carol", "carol-demo")
    page.goto(f"{hub.url}{AUDIT}?user={WHO}")
    # Straight after the hub's login round trip: the filter in the address was kept.
    assert page.inner_text("#audit-count") == "Events 1 to 50 of 121"
    assert page.locator("#events tr[data-action]").count() == 50
    edit = page.inner_text("#events tr[data-action='notice_edit']")
    assert "text: — → <b>Down</b> at 18:00" in edit, edit
    assert "groups: — → ds, vision" in edit, edit
    assert "\\u003c" not in edit and "[null" not in edit
    page.click("#audit-older")
    page.wait_for_selector("#audit-count:has-text('Events 51 to 100 of 121')")
    page.click("#audit-older")
    page.wait_for_selector("#audit-count:has-text('Events 101 to 121 of 121')")
    assert page.locator("#audit-older").count() == 0
    page.click("#audit-newer")
    page.wait_for_selector("#audit-count:has-text('Events 51 to 100 of 121')")

    # A since that is not a time is said at the field; the other filters still apply.
    page.fill("#since", "abc")
    page.click("#audit-filter button[type=submit]")
    page.wait_for_selector("#error-since")
    assert page.inner_text("#error-since") == (
        "'abc' is not a time: write a UTC date and time such as 2026-11-23T07:00, or a date "
        "such as 2026-11-23"
    )
    assert page.inner_text("#audit-count") == "Events 1 to 50 of 121"
    # A date alone is one.
    page.fill("#since", "2030-01-01T11:00")
    page.click("#audit-filter button[type=submit]")
    page.wait_for_selector("#audit-count:has-text('Events 1 to 1 of 1')")
