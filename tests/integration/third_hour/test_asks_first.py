"""Issue 54, item 13: what ends something for others asks first, as a session's Stop does.
Here a notice's Remove on the admin page (Chromium, as grace); a job's Cancel and a shared
board's Stop sharing: tests/integration/second_hour/test_words.py and test_shared_tensorboard.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from tests.hubproc import PASSWORDS
from tests.integration.conftest import Hub
from tests.integration.test_cli import token_of
from tests.integration.test_live_profiles import log_in
from tests.integration.third_hour.conftest import ADMIN

pytestmark = pytest.mark.integration

TEXT = "Asks-first check: the login nodes reboot at 19:00"


def say_no_once(page: Any) -> list[str]:
    """The next dialog's question, answered No; the list it will be in."""
    asked: list[str] = []

    def say_no(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", say_no)
    return asked


def test_removing_a_notice_asks_first(hub: Hub, clean: None, browser: Any) -> None:
    notices = f"{hub.url}/services/portal/api/notices"
    headers = {"Authorization": f"token {token_of(hub, ADMIN)}"}
    ends = datetime.now(UTC) + timedelta(minutes=10)
    posted = requests.post(
        notices, headers=headers, json={"text": TEXT, "ends_at": ends.isoformat()}, timeout=30
    )
    assert posted.status_code == 201, posted.text
    row = f"tr[data-notice='{posted.json()['id']}']"
    page = log_in(browser, hub, ADMIN, PASSWORDS[ADMIN])
    page.goto(f"{hub.url}/services/portal/admin")
    asked = say_no_once(page)
    page.click(f"{row} button:has-text('Remove')")
    page.wait_for_timeout(500)
    assert asked == ["Remove this notice? Nobody sees it any more."]
    assert page.query_selector(row) is not None  # kept
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f"{row} button:has-text('Remove')")
    page.wait_for_selector(row, state="detached")
    left = requests.get(notices, headers=headers, timeout=30).json()
    assert TEXT not in [notice["text"] for notice in left]
    page.context.close()


def test_an_admin_deletes_a_profile_from_its_page_after_saying_yes(
    hub: Hub, clean: None, browser: Any
) -> None:
    """Item 7: profiles can be deleted (there was no Delete on the pages, no DELETE in the API)."""
    profiles = f"{hub.url}/services/portal/api/profiles"
    headers = {"Authorization": f"token {token_of(hub, ADMIN)}"}
    made = requests.post(
        profiles,
        headers=headers,
        json={"slug": "to-delete", "title": "To delete", "gpus": 1},
        timeout=30,
    )
    assert made.status_code == 201, made.text
    page = log_in(browser, hub, ADMIN, PASSWORDS[ADMIN])
    page.goto(f"{hub.url}/services/portal/admin/profiles/to-delete")
    asked = say_no_once(page)
    page.click("#delete-profile button")
    page.wait_for_timeout(500)
    assert asked and asked[0].startswith("Delete profile to-delete?"), asked
    assert requests.get(f"{profiles}/to-delete", headers=headers, timeout=30).status_code == 200
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-profile button")
    page.wait_for_url("**/admin?saved=deleted*")
    assert "Deleted profile to-delete" in page.inner_text("body")
    assert requests.get(f"{profiles}/to-delete", headers=headers, timeout=30).status_code == 404
    page.context.close()
