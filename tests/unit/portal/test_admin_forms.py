"""The admin pages' form flow (gpuportal_portal.admin_forms), through the environment pages:
saved and back to the list, a taken slug, a field refused, someone else's save in between, a
stale form. The profile pages take the same path (and need Slurm: integration tests)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from gpuportal_core.profiles import culling_fields
from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from gpuportal_portal.routers import admin_pages
from tests.unit.portal.conftest import ADMIN_TOKEN

PAGES = "/services/portal/admin/environments"
TOOLS = {"slug": "tools", "title": "Tools", "kind": "modules", "modules": "cuda/12 gcc/12"}


@pytest.fixture
def admin(client: tuple[TestClient, HubIdentity]) -> TestClient:
    test_client = client[0]
    test_client.cookies.set(COOKIE_NAME, ADMIN_TOKEN)
    return test_client


def form_token(admin: TestClient, path: str) -> dict[str, str]:
    page = admin.get(path)
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, "the form carries no CSRF token"
    return {"csrf": found.group(1), **version_of(page.text)}


def version_of(page: str) -> dict[str, str]:
    found = re.search(r'name="version" value="(\d+)"', page)
    return {"version": found.group(1)} if found else {}


def test_a_new_environment_is_saved_and_the_list_says_so(admin: TestClient) -> None:
    saved = admin.post(
        f"{PAGES}/new", data={**form_token(admin, f"{PAGES}/new"), **TOOLS, "enabled": "on"},
        follow_redirects=False,
    )  # fmt: skip
    assert saved.status_code == 303, saved.text
    listed = admin.get(saved.headers["location"])
    assert "tools" in listed.text


def test_a_taken_slug_and_a_bad_field_are_said_beside_their_fields(admin: TestClient) -> None:
    token = form_token(admin, f"{PAGES}/new")
    assert admin.post(f"{PAGES}/new", data={**token, **TOOLS}).status_code in (200, 303)
    again = admin.post(f"{PAGES}/new", data={**token, **TOOLS, "title": "Typed again"})
    assert again.status_code == 422
    assert "this slug is taken by another environment; choose another" in again.text
    assert 'value="Typed again"' in again.text  # what the admin typed is kept
    bad = admin.post(f"{PAGES}/new", data={**token, **TOOLS, "slug": "x", "kind": "vm"})
    assert bad.status_code == 422
    assert "must be one of &#39;venv&#39;, &#39;conda&#39;" in bad.text
    # And listed at the top, with a link to the field (issue 34, item 9).
    assert "The environment was not saved: 1 field needs fixing." in bad.text
    assert '<a href="#kind">Kind</a>' in bad.text


def test_a_save_in_between_shows_what_is_stored_and_what_was_typed(admin: TestClient) -> None:
    new = form_token(admin, f"{PAGES}/new")
    admin.post(f"{PAGES}/new", data={**new, **TOOLS})
    opened = form_token(admin, f"{PAGES}/tools")  # two admins open the same form
    first = admin.post(f"{PAGES}/tools", data={**opened, **TOOLS, "title": "First"})
    assert first.status_code in (200, 303), first.text
    second = admin.post(f"{PAGES}/tools", data={**opened, **TOOLS, "title": "Second"})
    assert second.status_code == 409
    assert 'value="First"' in second.text  # the stored one, to save against
    assert "Second" in second.text  # and what this admin typed
    assert version_of(second.text) != {"version": opened["version"]}


def test_a_form_without_its_token_is_refused(admin: TestClient) -> None:
    refused = admin.post(f"{PAGES}/new", data={**TOOLS, "csrf": "forged"})
    assert refused.status_code == 403
    assert admin.get(f"{PAGES}/nothing").status_code == 404


def test_the_profiles_culling_column_follows_the_spec(
    admin: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 56, item 5: the column is drawn from the spec's culling fields, each with its
    word, not written out per limit in the template: other words, in another order, show."""
    fields = dict(reversed(culling_fields().items()))
    fields["idle"] = ("idle_limit", "unused")
    monkeypatch.setattr(admin_pages, "culling_fields", lambda: fields)
    page = admin.get("/services/portal/admin")
    assert page.status_code == 200, page.text
    columns = re.findall(r'<td class="cull">(.*?)</td>', page.text)
    assert columns, "no profile listed"
    assert all(re.fullmatch(r"queued \S+<br>GPUs idle \S+<br>unused \S+", c) for c in columns)
