"""An admin edits profiles in the portal's web page; users see it on their next page load.

All real: the hub-managed portal, its OAuth through the hub, LDAP groups, Chromium, Slurm.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.integration.conftest import Hub

pytestmark = pytest.mark.integration

PORTAL = "/services/portal"
SEEDED = {
    "gpu-1": {"max_runtime": "24:00:00", "groups": []},
    "gpu-4": {"max_runtime": "24:00:00", "groups": []},
}


def carol_token(hub: Hub) -> str:
    session = hub.login("carol")
    response = hub.api(session, "POST", "/users/carol/tokens", json={"note": "live profiles"})
    token: str = response.json()["token"]
    return token


def put_back(hub: Hub, token: str, slug: str, values: dict[str, Any]) -> None:
    headers = {"Authorization": f"token {token}"}
    current = requests.get(f"{hub.url}{PORTAL}/api/profiles/{slug}", headers=headers, timeout=10)
    response = requests.patch(
        f"{hub.url}{PORTAL}/api/profiles/{slug}",
        headers=headers,
        json={"version": current.json()["version"], **values},
        timeout=10,
    )
    assert response.status_code == 200, response.text


@pytest.fixture
def seeded_profiles(hub: Hub) -> Iterator[None]:
    """The hub's portal keeps its store across tests: start and end with the seeded values."""
    token = carol_token(hub)
    for slug, values in SEEDED.items():
        put_back(hub, token, slug, values)
    yield
    for slug, values in SEEDED.items():
        put_back(hub, token, slug, values)


def log_in(browser: Any, hub: Hub, user: str, password: str, **context_options: Any) -> Any:
    """A page of a fresh context, logged in; context_options: a viewport, a color_scheme..."""
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.wait_for_url("**/hub/**")
    return page


def open_lab(
    page: Any, hub: Hub, user: str, profile: str = "gpu-1", environment: str = "session"
) -> None:
    """Start a session from the spawn form, as a user does, and wait for JupyterLab."""
    page.goto(f"{hub.url}/hub/spawn")
    page.check(f"input[name=profile][value={profile}]")
    page.check(f"input[name=environment][value={environment}]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url(f"**/user/{user}/lab**")


def test_admin_edits_show_on_the_next_spawn_page(
    hub: Hub, clean: None, seeded_profiles: None, browser: Any
) -> None:
    carol = log_in(browser, hub, "carol", "carol-demo")
    carol.goto(f"{hub.url}{PORTAL}/admin")  # through the hub's OAuth, no second login
    carol.click("#profiles a:has-text('4 GPUs')")
    carol.fill("#max_runtime", "12:00:00")
    carol.click("button[type=submit]")
    carol.wait_for_url(f"**{PORTAL}/admin**")
    assert "max 12:00:00" in carol.inner_text("tr[data-slug=gpu-4]")
    # The page says the save happened (issue 20, item 10).
    assert carol.inner_text("#saved") == (
        "Saved profile gpu-4; users see it on their next spawn page."
    )

    carol.click("#profiles a:has-text('1 GPU')")
    carol.fill("#groups", "hpc-admins")
    carol.click("button[type=submit]")
    carol.wait_for_url(f"**{PORTAL}/admin**")
    assert "hpc-admins" in carol.inner_text("tr[data-slug=gpu-1]")
    history = carol.inner_text("#audit")
    assert "carol\tupdate profile gpu-4" in history
    assert 'max_runtime: "24:00:00" → "12:00:00"' in history

    # A bad value is refused next to its field, and nothing is saved.
    carol.click("#profiles a:has-text('2 GPUs')")
    carol.fill("#gpus", "8")
    carol.click("button[type=submit]")
    assert carol.inner_text("#error-gpus") == (
        "must be at most 4: the nodes of partition gpu have at most 4 GPUs each"
    )
    carol.goto(f"{hub.url}{PORTAL}/admin")
    assert "2 · 16 · 96 GB" in carol.inner_text("tr[data-slug=gpu-2]")

    # alice (group ds), with no restart of anything: the new limit, and no gpu-1.
    alice = log_in(browser, hub, "alice", "alice-demo")
    alice.goto(f"{hub.url}/hub/spawn")
    assert "up to 12 h" in alice.inner_text("[data-profile=gpu-4]")
    assert alice.locator("[data-profile=gpu-1]").count() == 0
    assert alice.locator("[data-profile=gpu-2]").count() == 1

    session = hub.login("alice")
    refused = hub.api(
        session, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert refused.status_code == 400
    assert "unknown profile 'gpu-1'; choose one of: gpu-2, gpu-4" in refused.json()["message"]
    too_long = hub.api(
        session,
        "POST",
        "/users/alice/server",
        json={"user_options": {"profile": "gpu-4", "runtime": "13:00:00"}},
    )
    assert too_long.status_code == 400
    assert "over the maximum of 12:00:00" in too_long.json()["message"]


def test_a_non_admin_gets_403_on_the_admin_page(hub: Hub, browser: Any) -> None:
    bob = log_in(browser, hub, "bob", "bob-demo")
    response = bob.goto(f"{hub.url}{PORTAL}/admin")
    assert response.status == 403
    assert "Admins only" in bob.inner_text("h1")
    # His own page works: the profiles open to him.
    bob.goto(f"{hub.url}{PORTAL}/")
    assert "gpu-2" in bob.inner_text("main")


def test_two_admins_saving_from_stale_pages_never_overwrite_each_other(
    hub: Hub, seeded_profiles: None, browser: Any
) -> None:
    first = log_in(browser, hub, "carol", "carol-demo")
    second = first.context.new_page()  # the same admin in a second tab, or a colleague
    for page in (first, second):
        page.goto(f"{hub.url}{PORTAL}/admin/profiles/gpu-4")
    first.fill("#max_runtime", "10:00:00")
    first.click("button[type=submit]")
    first.wait_for_url(f"**{PORTAL}/admin**")

    second.fill("#max_runtime", "20:00:00")
    response_status = []
    second.on("response", lambda r: response_status.append(r.status))
    second.click("button[type=submit]")
    second.wait_for_selector("#conflict")
    assert 409 in response_status
    assert "carol saved this profile while you were editing" in second.inner_text("#conflict")
    # The form now holds what is stored, ready to save against the new version.
    assert second.input_value("#max_runtime") == "10:00:00"
    second.goto(f"{hub.url}{PORTAL}/admin")
    assert "max 10:00:00" in second.inner_text("tr[data-slug=gpu-4]")
