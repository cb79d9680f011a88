"""Issue 34, item 5: opening a named session's spawn page, or a refused start of one, leaves
no card on the home page: a named session exists once it was started. In Chromium, as alice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def test_spawn_pages_opened_or_refused_leave_no_card(hub: Hub, clean: None, browser: Any) -> None:
    page = log_in(browser, hub, "alice", "alice-demo")
    page.goto(f"{hub.url}/hub/spawn/alice/walkcheck")
    page.wait_for_selector("#spawn_form")
    refused = page.goto(f"{hub.url}/hub/spawn/alice/walkq?opt-profile=gpu-99")
    assert refused is not None and refused.status < 500
    page.goto(f"{hub.url}/hub/home")
    page.wait_for_selector('#gp-sessions .gp-card[data-server=""]')
    page.wait_for_timeout(500)  # the cards' list is complete once the default's shows
    servers = page.eval_on_selector_all(
        "#gp-sessions .gp-card", "cards => cards.map(c => c.dataset.server)"
    )
    assert servers == [""], servers
    assert "walkcheck" not in page.inner_text("#gp-sessions")
