"""Issue 54, item 10: the audit page's What column keeps an action's name whole; it broke
"profile_edit" into "profile_edi t" where the details beside it were long. In Chromium, as
grace (the second lane's admin), at a laptop's and a phone's width."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.hubproc import PASSWORDS
from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in
from tests.integration.third_hour.conftest import ADMIN

pytestmark = pytest.mark.integration

LONG = "a-folder-name-without-any-space-in-it-" * 6


@pytest.fixture
def long_event(hub: Hub) -> Iterator[None]:
    seeded = hub.state / "audit" / "audit-words.jsonl"
    event = {
        "time": "2030-02-01T10:00:00.000Z", "source": "portal", "action": "profile_edit",
        "user": "words-check", "change": "update", "subject": LONG,
        "changes": {"description": [LONG, LONG + "x"]},
    }  # fmt: skip
    seeded.write_text(json.dumps(event) + "\n")
    yield
    seeded.unlink()


@pytest.mark.parametrize("width", [1280, 600])
def test_an_actions_name_is_never_broken(
    hub: Hub, long_event: None, browser: Any, width: int
) -> None:
    page = log_in(browser, hub, ADMIN, PASSWORDS[ADMIN], viewport={"width": width, "height": 900})
    page.goto(f"{hub.url}/services/portal/admin/audit?user=words-check")
    cell = page.wait_for_selector('#events tr[data-action="profile_edit"] td:nth-child(3)')
    assert cell is not None
    # The action's text on one line: one box for its text node.
    lines = cell.evaluate(
        "td => { const r = document.createRange(); r.selectNodeContents(td.firstChild);"
        " return r.getClientRects().length; }"
    )
    assert cell.inner_text().startswith("profile_edit")
    assert lines == 1, f"'profile_edit' took {lines} lines at {width} px"
    page.context.close()
