"""What a screenshot is checked for: text contrast (WCAG) and no sideways scrolling."""

from __future__ import annotations

from typing import Any

# Each element's text colour and the first opaque background behind it, as the browser
# computed them (rgb(a) strings); read with CDP, which the pages' content policy allows.
_COLOURS = """(selector) => Array.from(document.querySelectorAll(selector)).filter(
  (e) => e.offsetParent !== null && e.textContent.trim()).slice(0, 5).map((e) => {
    let bg = e, colour = 'rgba(0, 0, 0, 0)';
    while (bg) {
      colour = getComputedStyle(bg).backgroundColor;
      if (!colour.startsWith('rgba') || !colour.endsWith(', 0)')) break;
      bg = bg.parentElement;
    }
    if (!bg) colour = getComputedStyle(document.documentElement).backgroundColor;
    return [e.textContent.trim().slice(0, 30), getComputedStyle(e).color, colour];
  })"""


def _rgb(text: str) -> tuple[float, float, float]:
    parts = text[text.index("(") + 1 : text.index(")")].replace("/", ",").split(",")
    red, green, blue = (float(p) for p in parts[:3])
    return red, green, blue


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(foreground: str, background: str) -> float:
    light, dark = sorted((_luminance(_rgb(foreground)), _luminance(_rgb(background))), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def low_contrast(page: Any, selectors: list[str], minimum: float = 4.5) -> list[str]:
    """Text under `selectors` whose contrast with its background is below `minimum`."""
    problems = []
    for selector in selectors:
        for text, colour, background in page.evaluate(_COLOURS, selector):
            ratio = contrast(colour, background)
            if ratio < minimum:
                problems.append(f"{selector} {text!r}: {colour} on {background} = {ratio:.2f}")
    return problems


def scrolls_sideways(page: Any) -> bool:
    width: int = page.evaluate("() => document.documentElement.scrollWidth")
    return width > page.viewport_size["width"]
