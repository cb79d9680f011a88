"""One product in one look (issue 12): the same navigation on hub and portal pages, dark mode
and phone width on every page, and API docs that need no internet. Real hub, real Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.integration.conftest import Hub
from tests.integration.page_checks import low_contrast, scrolls_sideways

pytestmark = pytest.mark.integration

PAGES = {
    "sessions": "/hub/home",
    "spawn": "/hub/spawn",
    "jobs": "/services/portal/jobs",
    "profiles": "/services/portal/admin",
    "api": "/services/portal/docs",
}
# Text that must read well in both modes: navigation, headings, body text, tables, forms.
TEXT = ["#thenavbar a.nav-link", "h1", "main p", "main td", "main label", "#who", ".gp-card h2"]


def open_as(
    browser: Any, hub: Hub, user: str, *, dark: bool = False, width: int = 1280
) -> tuple[Any, Any]:
    context = browser.new_context(
        viewport={"width": width, "height": 844}, color_scheme="dark" if dark else "light"
    )
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", f"{user}-demo")
    page.click("#login_submit")
    page.wait_for_url("**/hub/**")
    return context, page


def nav_entries(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#thenavbar .navbar-nav a.nav-link").all_inner_texts()]


def active_entry(page: Any) -> str:
    return str(page.inner_text("#thenavbar a.nav-link.active")).strip()


def test_the_same_navigation_from_hub_to_jobs_to_profiles_and_back(hub: Hub, browser: Any) -> None:
    context, page = open_as(browser, hub, "carol")
    page.goto(f"{hub.url}/hub/home")
    entries = ["Sessions", "Jobs", "Profiles", "API", "Docs", "Token", "Users"]
    assert nav_entries(page) == entries and active_entry(page) == "Sessions"

    page.click("#nav-jobs")
    page.wait_for_url("**/services/portal/jobs")
    assert nav_entries(page) == entries and active_entry(page) == "Jobs"
    assert page.inner_text("#who") == "carol"
    assert page.get_attribute("#logout", "href") == "/hub/logout"

    page.click("#nav-profiles")
    page.wait_for_url("**/services/portal/admin**")
    assert active_entry(page) == "Profiles"
    page.click("#nav-sessions")
    page.wait_for_url("**/hub/home")
    context.close()

    # A data scientist: no Profiles and no Users, on hub and portal pages alike.
    context, page = open_as(browser, hub, "alice")
    for path in ("/hub/home", "/services/portal/jobs"):
        page.goto(hub.url + path)
        assert nav_entries(page) == ["Sessions", "Jobs", "API", "Docs", "Token"], path
    # Docs: the docs site this hub serves (make test builds it, as make demo does), and back.
    page.click("#nav-manual")
    page.wait_for_url("**/services/portal/manual/")
    assert page.title().endswith("GPU portal"), page.title()
    page.click("article a[href='reference/index.html']")
    page.click("article >> text=Settings: the PORTAL_* variables")
    page.wait_for_selector("text=PORTAL_DOCS_DIR")
    page.click("text=Back to the portal")
    page.wait_for_url("**/hub/home")
    page.goto(hub.url + "/services/portal/jobs")
    # Logout from a portal page ends the hub session.
    page.click("#logout")
    page.wait_for_url("**/hub/login**")
    context.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_reads_well_in_both_modes_and_at_phone_width(
    hub: Hub, browser: Any, dark: bool, width: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shots = Path(tmp_path_factory.mktemp("screenshots"))
    context, page = open_as(browser, hub, "carol", dark=dark, width=width)
    problems: list[str] = []
    for name, path in PAGES.items():
        page.goto(hub.url + path)
        page.wait_for_selector("#thenavbar", state="attached")
        page.wait_for_timeout(300)  # the pages' own scripts fill in their lists
        theme = page.get_attribute("html", "data-bs-theme")
        assert theme == ("dark" if dark else "light"), (name, theme)
        page.screenshot(path=str(shots / f"{name}-{width}-{theme}.png"), full_page=True)
        if scrolls_sideways(page):
            problems.append(f"{name} scrolls sideways at {width} px")
        problems += [f"{name}: {p}" for p in low_contrast(page, TEXT)]
    context.close()
    assert not problems, "\n".join(problems)


def test_the_dark_mode_choice_carries_from_hub_to_portal(hub: Hub, browser: Any) -> None:
    context, page = open_as(browser, hub, "alice")
    page.goto(f"{hub.url}/hub/home")
    assert page.get_attribute("html", "data-bs-theme") == "light"
    page.click("#dark-theme-toggle")
    page.goto(f"{hub.url}/services/portal/jobs")
    assert page.get_attribute("html", "data-bs-theme") == "dark"
    context.close()


def test_api_docs_render_with_no_network_beyond_this_machine(hub: Hub, browser: Any) -> None:
    context, page = open_as(browser, hub, "alice")
    blocked: list[str] = []

    def only_local(route: Any) -> None:
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_local)
    page.goto(f"{hub.url}/services/portal/docs")
    page.wait_for_selector(".swagger-ui .info .title:has-text('GPU portal')")
    page.wait_for_selector(".opblock-tag:has-text('jobs')")
    assert active_entry(page) == "API"
    assert blocked == []
    context.close()
