"""Issue 34, item 15: in the dark, the logo's "jupyter" is light on the dark bar (it was dark
grey) and the API docs are a dark panel (they stayed white). In Chromium with the dark scheme,
as dave, measured on the screenshots' pixels."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration


def luminances(png: bytes) -> list[float]:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return [0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in image.getdata()]


def test_the_logo_and_the_api_docs_are_readable_in_the_dark(hub: Hub, browser: Any) -> None:
    page = log_in(browser, hub, "dave", "dave-demo", color_scheme="dark")
    for path in ("/hub/home", "/services/portal/jobs"):
        page.goto(hub.url + path)
        assert page.evaluate("document.documentElement.dataset.bsTheme") == "dark"
        logo = page.locator(".jpy-logo")
        logo.wait_for()
        pixels = luminances(logo.screenshot())
        # "jupyter" in light letters (0.2 % of the logo was light before: dark grey letters).
        light = sum(1 for value in pixels if value > 150) / len(pixels)
        assert light > 0.03, f"{path}: {light:.1%} of the logo is light"

    page.goto(f"{hub.url}/services/portal/docs")
    panel = page.locator("#swagger-ui .information-container")
    panel.wait_for()
    pixels = luminances(panel.screenshot())
    mean = sum(pixels) / len(pixels)
    assert mean < 80, f"the API docs' panel is light in the dark: mean luminance {mean:.0f}"
