"""Issue 34, item 9: the admin forms say what is wrong at the field, in one voice, with a
summary at the top of a refused form; a refused notice keeps the admin page's address. In
Chromium, as carol."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

PORTAL = "/services/portal"


def test_a_notice_that_ends_before_it_starts_is_refused_at_its_end(hub: Hub, browser: Any) -> None:
    carol = log_in(browser, hub, "carol", "carol-demo")
    carol.goto(f"{hub.url}{PORTAL}/admin")
    before = carol.locator("#notice-list tr[data-notice]").count()
    carol.fill("#notice-text", "Backwards notice (test)")
    carol.fill("#notice-starts", "2030-01-02T10:00")
    carol.fill("#notice-ends", "2030-01-02T09:00")
    carol.click("#notice-post")
    carol.wait_for_selector("#error-ends_at")
    assert carol.inner_text("#error-ends_at") == "must be after the start"
    assert carol.url == f"{hub.url}{PORTAL}/admin#notice-form"
    assert carol.input_value("#notice-text") == "Backwards notice (test)"  # kept
    assert carol.locator("#notice-list tr[data-notice]").count() == before
    assert carol.locator(".alert-danger").count() == 0  # no banner above the table


def test_a_refused_profile_save_is_summed_up_at_the_top_in_one_voice(
    hub: Hub, browser: Any
) -> None:
    carol = log_in(browser, hub, "carol", "carol-demo", viewport={"width": 1280, "height": 700})
    for typed, said in (
        ("999", "GPUs: must be at most 64"),
        ("8", "GPUs: must be at most 4: the nodes of partition gpu have at most 4 GPUs each"),
    ):
        carol.goto(f"{hub.url}{PORTAL}/admin/profiles/gpu-2")
        carol.fill("#gpus", typed)
        carol.click("button[type=submit]")
        summary = carol.locator("#error-summary")
        summary.wait_for()
        assert summary.is_visible()
        box = summary.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 700, box  # in view, not below
        text = summary.inner_text()
        assert text.startswith("The profile was not saved: 1 field needs fixing."), text
        assert said in text, text
        assert carol.inner_text("#error-gpus") == said.removeprefix("GPUs: ")
    # Its link goes to the field.
    carol.click("#error-summary a[href='#gpus']")
    assert carol.evaluate("location.hash") == "#gpus"
