"""Issue 54, item 8: the hub's error pages in words: its 404 printed a literal "None", and a
name the hub refuses for a session said "Invalid server_name: 'BAD_NAME'". (The portal's own
404 page: tests/unit/portal/test_page_errors.py.)"""

from __future__ import annotations

import html
import re

import pytest

from tests.integration.conftest import Hub
from tests.integration.third_hour.conftest import USER

pytestmark = pytest.mark.integration


def said(page: str) -> str:
    found = re.search(r'id="error-message">(.*?)</p>', page, re.S)
    assert found, page[:500]
    return html.unescape(" ".join(re.sub(r"<[^>]+>", "", found.group(1)).split()))


def test_the_hubs_error_pages_say_what_happened(hub: Hub, clean: None) -> None:
    user = hub.login(USER)
    missing = user.get(f"{hub.url}/hub/nothing-here", timeout=30)
    assert missing.status_code == 404
    assert said(missing.text) == (
        "No page of the hub is at this address. Check it, or go back to where you came from."
    )
    bad = user.get(f"{hub.url}/hub/spawn/{USER}/BAD_NAME", timeout=30)
    assert bad.status_code == 400
    assert said(bad.text).startswith("'BAD_NAME' cannot be a session's name. A name is 1 to 30")
    assert "training-2" in said(bad.text)
