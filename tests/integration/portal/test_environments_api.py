"""Software environments through the REST API, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

pytestmark = pytest.mark.integration

API = "/services/portal/api"
TOOLS = {"slug": "tools", "title": "Tools", "kind": "modules", "modules": ["demo-tools/1.0"]}


def as_user(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"}


def test_create_list_and_audit(portal: TestClient, tokens: dict[str, str]) -> None:
    carol = as_user(tokens["carol"])
    created = portal.post(
        f"{API}/environments", headers=carol, json={**TOOLS, "profiles": ["gpu-4"]}
    )
    assert created.status_code == 201, created.text
    listed = portal.get(f"{API}/environments", headers=as_user(tokens["alice"])).json()
    assert [(e["slug"], e["profiles"]) for e in listed] == [("tools", ["gpu-4"])]
    latest = portal.get(f"{API}/audit", headers=carol).json()[0]
    assert (latest["action"], latest["kind"], latest["subject"]) == (
        "create",
        "environment",
        "tools",
    )


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"kind": "venv", "prefix": "opt/envs/x"}, "prefix", "absolute path"),
        # An admin's own folder, or one anyone may write: code of hers in others' sessions.
        ({"kind": "venv", "prefix": "/home/carol"}, "prefix", "belongs to carol, not root"),
        ({"kind": "conda", "prefix": "/tmp"}, "prefix", "can be written by others than root"),
        ({"kind": "venv", "prefix": "/opt/nowhere"}, "prefix", "does not exist on the login"),
        ({"kind": "modules", "modules": []}, "modules", "at least one module"),
        ({"kind": "modules", "modules": ["a\nb"]}, "modules", "use letters, digits"),
        ({"kind": "container", "image": "ubuntu:22.04"}, "image", "docker://"),
        ({"kind": "nix"}, "kind", "Input should be"),
        (
            {"kind": "modules", "modules": ["x"], "profiles": ["gpu-9"]},
            "profiles",
            "no such profile: gpu-9",
        ),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    portal: TestClient, tokens: dict[str, str], body: dict[str, Any], field: str, rule: str
) -> None:
    response = portal.post(
        f"{API}/environments",
        headers=as_user(tokens["carol"]),
        json={"slug": "bad", "title": "Bad", **body},
    )
    assert response.status_code == 422, response.text
    problems = response.json()["detail"]
    assert any(p["loc"][-1] == field and rule in p["msg"] for p in problems), problems
    assert portal.get(f"{API}/environments", headers=as_user(tokens["carol"])).json() == []


def test_writes_are_for_admins_and_stale_saves_are_409(
    portal: TestClient, tokens: dict[str, str]
) -> None:
    carol, bob = as_user(tokens["carol"]), as_user(tokens["bob"])
    assert portal.post(f"{API}/environments", headers=bob, json=TOOLS).status_code == 403
    version = portal.post(f"{API}/environments", headers=carol, json=TOOLS).json()["version"]
    assert (
        portal.patch(
            f"{API}/environments/tools", headers=bob, json={"version": version}
        ).status_code
        == 403
    )
    first = portal.patch(
        f"{API}/environments/tools", headers=carol, json={"version": version, "title": "Tools 1"}
    )
    assert first.status_code == 200
    second = portal.patch(
        f"{API}/environments/tools", headers=carol, json={"version": version, "title": "Tools 2"}
    )
    assert second.status_code == 409
    assert second.json()["current"]["title"] == "Tools 1"


def test_a_taken_slug_is_a_409_that_says_what_holds_it(
    portal: TestClient, tokens: dict[str, str]
) -> None:
    carol = as_user(tokens["carol"])
    assert portal.post(f"{API}/environments", headers=carol, json=TOOLS).status_code == 201
    again = portal.post(f"{API}/environments", headers=carol, json=TOOLS)
    assert again.status_code == 409
    assert (
        again.json()["detail"] == "The slug tools is taken by another environment; choose another."
    )
