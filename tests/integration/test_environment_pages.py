"""The admin page's environment forms, through the hub's OAuth, as carol (and bob)."""

from __future__ import annotations

import re

import pytest
import requests

from tests.integration.conftest import Hub

pytestmark = pytest.mark.integration

PORTAL = "/services/portal"


def form_token(page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, page[:500]
    return match.group(1)


def errors(page: str) -> dict[str, str]:
    return dict(re.findall(r'class="error" id="error-([\w]+)">([^<]*)<', page))


def test_create_and_edit_an_environment_on_the_admin_page(hub: Hub) -> None:
    carol = hub.login("carol")
    new = carol.get(f"{hub.url}{PORTAL}/admin/environments/new")
    assert new.status_code == 200
    fields = {
        "csrf": form_token(new.text),
        "slug": "cuda-tools",
        "title": "CUDA tools",
        "kind": "modules",
        "modules": "",
        "profiles": "gpu-4",
        "enabled": "on",
    }
    refused = carol.post(f"{hub.url}{PORTAL}/admin/environments/new", data=fields)
    assert refused.status_code == 422
    assert "at least one module" in errors(refused.text)["modules"]

    fields["modules"] = "demo-tools/1.0"
    created = carol.post(f"{hub.url}{PORTAL}/admin/environments/new", data=fields)
    assert created.status_code == 200
    assert created.url.endswith(f"{PORTAL}/admin?saved=environment%3Acuda-tools")
    assert "Saved environment cuda-tools" in created.text
    assert 'data-slug="cuda-tools"' in created.text
    assert "module load demo-tools/1.0" in created.text

    edit = carol.get(f"{hub.url}{PORTAL}/admin/environments/cuda-tools")
    version = re.search(r'name="version" value="(\d+)"', edit.text)
    assert version
    changed = {**fields, "csrf": form_token(edit.text), "version": version.group(1)}
    changed.pop("slug")
    changed.pop("enabled")  # unticked: disabled, so it leaves the other tests' spawn pages alone
    saved = carol.post(f"{hub.url}{PORTAL}/admin/environments/cuda-tools", data=changed)
    assert saved.status_code == 200
    stale = carol.post(f"{hub.url}{PORTAL}/admin/environments/cuda-tools", data=changed)
    assert stale.status_code == 409
    assert "carol saved this environment while you were editing" in stale.text


def test_a_forged_form_without_the_page_token_changes_nothing(hub: Hub) -> None:
    carol = hub.login("carol")
    carol.get(f"{hub.url}{PORTAL}/admin")  # log in to the portal
    forged = carol.post(
        f"{hub.url}{PORTAL}/admin/environments/new",
        data={"csrf": "guess", "slug": "forged", "title": "x", "kind": "modules", "modules": "x"},
    )
    assert forged.status_code == 403
    assert 'data-slug="forged"' not in carol.get(f"{hub.url}{PORTAL}/admin").text


def test_bob_cannot_open_the_environment_forms(hub: Hub) -> None:
    bob = hub.login("bob")
    assert bob.get(f"{hub.url}{PORTAL}/admin/environments/new").status_code == 403
    response: requests.Response = bob.post(
        f"{hub.url}{PORTAL}/admin/environments/new", data={"slug": "x"}
    )
    assert response.status_code == 403
