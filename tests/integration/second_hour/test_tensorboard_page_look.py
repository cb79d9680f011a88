"""Issue 34, item 13: the session's TensorBoard page on a phone: its menu button shows its
icon (the page's policy blocked Bootstrap's data: image), and it shows the cluster team's
notice as every other page does. In Chromium, as alice, 390 px wide, no console error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub, wait_for
from tests.integration.first_hour.test_journeys import Trouble
from tests.integration.test_cli import token_of
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

TEXT = "TensorBoard page notice (test)"
NOTICES = "/services/portal/api/notices"


def test_the_tensorboard_page_on_a_phone_has_its_menu_icon_and_the_notice(
    hub: Hub, clean: None, browser: Any
) -> None:
    admin = {"Authorization": f"token {token_of(hub, 'carol')}"}
    ends = datetime.now(UTC) + timedelta(minutes=10)
    posted = requests.post(
        hub.url + NOTICES, headers=admin, timeout=30,
        json={"text": TEXT, "level": "warning", "ends_at": ends.isoformat()},
    )  # fmt: skip
    assert posted.status_code == 201, posted.text
    try:
        trouble = Trouble()
        # The browser logs in first: with a running server, the login goes on to JupyterLab.
        page = trouble.watch(
            log_in(browser, hub, "alice", "alice-demo", viewport={"width": 390, "height": 844})
        )
        alice = hub.login("alice")
        body = {"user_options": {"profile": "gpu-1"}}
        assert hub.api(alice, "POST", "/users/alice/server", json=body).status_code in (201, 202)
        hub.wait_ready(alice, "alice")

        def shown() -> bool:
            # The hub reads the portal's notices at most every 15 s; the page asks at load.
            page.goto(f"{hub.url}/user/alice/tensorboard/")
            page.wait_for_selector("#gp-notices", state="attached")
            page.wait_for_timeout(1000)
            return TEXT in page.inner_text("#gp-notices")

        wait_for(shown, 60, "the notice on the TensorBoard page")
        icon = page.locator(".navbar-toggler-icon")
        assert icon.is_visible()
        image = icon.evaluate("e => getComputedStyle(e).backgroundImage")
        assert image.startswith('url("data:image/svg+xml'), image
        assert trouble.seen == [], trouble.seen  # the policy refused nothing
        page.context.close()
    finally:
        requests.delete(f"{hub.url}{NOTICES}/{posted.json()['id']}", headers=admin, timeout=30)
