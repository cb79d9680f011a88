"""Issue 54, item 18: the hub's orange buttons (JupyterHub's `btn-jupyter`: Sign in, Start,
Request new API token) meet WCAG 2.1 AA's 4.5:1 contrast for their text, light and dark; they
had 2.9:1. Measured in Chromium from the computed colours, as axe-core computes them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.hubproc import PASSWORDS
from tests.integration.conftest import Hub
from tests.integration.test_live_profiles import log_in
from tests.integration.third_hour.conftest import USER

pytestmark = pytest.mark.integration

RATIOS = """
buttons => buttons.map(b => {
  const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const style = getComputedStyle(b);
  const [hi, lo] = [lum(rgb(style.color)), lum(rgb(style.backgroundColor))].sort((x, y) => y - x);
  return [b.textContent.trim(), (hi + 0.05) / (lo + 0.05)];
})
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_hubs_orange_buttons_are_readable(hub: Hub, browser: Any, scheme: str) -> None:
    page = log_in(browser, hub, USER, PASSWORDS[USER], color_scheme=scheme)
    found: list[tuple[str, float]] = []
    for path in ("/hub/spawn", "/hub/token"):
        page.goto(f"{hub.url}{path}")
        page.wait_for_selector(".btn-jupyter")
        found += page.eval_on_selector_all(".btn-jupyter", RATIOS)
    page.context.close()
    anonymous = browser.new_page(color_scheme=scheme)
    anonymous.goto(f"{hub.url}/hub/login")
    found += anonymous.eval_on_selector_all(".btn-jupyter", RATIOS)
    anonymous.close()
    assert len(found) >= 3, found
    assert all(ratio >= 4.5 for _, ratio in found), found
