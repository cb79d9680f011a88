"""The profile REST API on SQLite and PostgreSQL, with real hub tokens and the real Slurm."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

pytestmark = pytest.mark.integration

API = "/services/portal/api"


def as_user(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"}


def profile(client: TestClient, token: str, slug: str) -> dict[str, Any]:
    response = client.get(f"{API}/profiles/{slug}", headers=as_user(token))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_seeded_profiles_and_their_audit_record(portal: TestClient, tokens: dict[str, str]) -> None:
    listed = portal.get(f"{API}/profiles", headers=as_user(tokens["carol"])).json()
    assert [(p["slug"], p["gpus"], p["cores_per_gpu"], p["mem_per_gpu_gb"]) for p in listed] == [
        ("gpu-1", 1, 8, 48),
        ("gpu-2", 2, 8, 48),
        ("gpu-4", 4, 8, 48),
    ]
    assert {p["default_runtime"] for p in listed} == {"08:00:00"}
    audit = portal.get(f"{API}/audit", headers=as_user(tokens["carol"])).json()
    assert audit[-1]["actor"] == "(seeded)"


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"gpus": 0}, "gpus", "greater than or equal to 1"),
        ({"gpus": 8}, "gpus", "must be at most 4: the nodes of partition gpu have at most 4 GPUs"),
        ({"max_runtime": "-01:00:00"}, "max_runtime", "must be HH:MM:SS"),
        ({"default_runtime": "8h"}, "default_runtime", "must be HH:MM:SS"),
        ({"max_runtime": "36:00:00"}, "max_runtime", "over partition gpu's MaxTime of 24:00:00"),
        (
            {"default_runtime": "20:00:00", "max_runtime": "12:00:00"},
            "default_runtime",
            "must not be over max_runtime",
        ),
        ({"partition": "nope"}, "partition", "no partition 'nope' on the cluster; known: gpu"),
        ({"partition": "gpu\n#SBATCH"}, "partition", "must be a Slurm name"),
        ({"sbatch_options": {"wrap": "id"}}, "sbatch_options", "'wrap' is not allowed"),
        ({"sbatch_options": {"account": "ml\n#SBATCH --uid=0"}}, "sbatch_options", "account value"),
        ({"title": "two\nlines"}, "title", "must be one line"),
        ({"groups": ["ds\nroot"]}, "groups", "is not a group name"),
        # 4 x 130 GB: more than gpu01's 195 GB and gpu02's 488 GB; said at the memory (issue
        # 54, item 9: it was said at the cores).
        ({"mem_per_gpu_gb": 130}, "mem_per_gpu_gb", "do not fit on one node of partition gpu"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_nothing_changes(
    portal: TestClient, tokens: dict[str, str], change: dict[str, Any], field: str, rule: str
) -> None:
    before = profile(portal, tokens["carol"], "gpu-4")
    response = portal.patch(
        f"{API}/profiles/gpu-4",
        headers=as_user(tokens["carol"]),
        json={"version": before["version"], **change},
    )
    assert response.status_code == 422, response.text
    problems = response.json()["detail"]
    assert any(p["loc"][-1] == field and rule in p["msg"] for p in problems), problems
    assert profile(portal, tokens["carol"], "gpu-4") == before


def test_creating_with_bad_input_stores_nothing(portal: TestClient, tokens: dict[str, str]) -> None:
    response = portal.post(
        f"{API}/profiles",
        headers=as_user(tokens["carol"]),
        json={"slug": "gpu-8", "title": "8 GPUs", "gpus": 8},
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "gpus"]
    assert portal.get(f"{API}/profiles/gpu-8", headers=as_user(tokens["carol"])).status_code == 404


def test_non_admins_get_403_on_every_write(portal: TestClient, tokens: dict[str, str]) -> None:
    bob = as_user(tokens["bob"])
    version = profile(portal, tokens["carol"], "gpu-1")["version"]
    attempts = [
        portal.post(f"{API}/profiles", headers=bob, json={"slug": "x", "title": "x", "gpus": 1}),
        portal.patch(f"{API}/profiles/gpu-1", headers=bob, json={"version": version, "gpus": 2}),
        portal.put(
            f"{API}/profiles-order", headers=bob, json={"slugs": ["gpu-4", "gpu-2", "gpu-1"]}
        ),
        portal.get(f"{API}/audit", headers=bob),
        portal.get(f"{API}/profiles?all=true", headers=bob),
    ]
    assert [r.status_code for r in attempts] == [403] * 5
    assert profile(portal, tokens["carol"], "gpu-1")["version"] == version


def test_no_or_unknown_token_is_a_401(portal: TestClient) -> None:
    assert portal.get(f"{API}/profiles").status_code == 401
    assert portal.get(f"{API}/profiles", headers=as_user("not-a-token")).status_code == 401


def test_a_save_from_a_stale_version_is_a_409_with_the_current_values(
    portal: TestClient, tokens: dict[str, str]
) -> None:
    carol = as_user(tokens["carol"])
    seen = profile(portal, tokens["carol"], "gpu-4")["version"]
    first = portal.patch(
        f"{API}/profiles/gpu-4", headers=carol, json={"version": seen, "max_runtime": "12:00:00"}
    )
    assert first.status_code == 200, first.text
    second = portal.patch(
        f"{API}/profiles/gpu-4", headers=carol, json={"version": seen, "max_runtime": "20:00:00"}
    )
    assert second.status_code == 409
    body = second.json()
    assert body["current"]["max_runtime"] == "12:00:00"
    assert body["current"]["version"] == seen + 1
    assert "nothing was saved" in body["detail"]
    assert profile(portal, tokens["carol"], "gpu-4")["max_runtime"] == "12:00:00"


def test_every_change_is_in_the_audit_with_before_and_after(
    portal: TestClient, tokens: dict[str, str]
) -> None:
    carol = as_user(tokens["carol"])
    seen = profile(portal, tokens["carol"], "gpu-4")
    response = portal.patch(
        f"{API}/profiles/gpu-4",
        headers=carol,
        json={"version": seen["version"], "max_runtime": "12:00:00", "title": "4 GPUs"},
    )
    assert response.status_code == 200
    latest = portal.get(f"{API}/audit", headers=carol).json()[0]
    assert latest["actor"] == "carol"
    assert (latest["action"], latest["kind"], latest["subject"]) == ("update", "profile", "gpu-4")
    # Only what changed: the title was resent unchanged.
    assert latest["changes"] == {"max_runtime": ["24:00:00", "12:00:00"]}


def test_groups_decide_who_sees_a_profile(portal: TestClient, tokens: dict[str, str]) -> None:
    carol = as_user(tokens["carol"])
    version = profile(portal, tokens["carol"], "gpu-1")["version"]
    hidden = portal.patch(
        f"{API}/profiles/gpu-1", headers=carol, json={"version": version, "groups": ["hpc-admins"]}
    )
    assert hidden.status_code == 200, hidden.text

    def slugs(token: str) -> list[str]:
        return [p["slug"] for p in portal.get(f"{API}/profiles", headers=as_user(token)).json()]

    assert slugs(tokens["alice"]) == ["gpu-2", "gpu-4"]  # alice is in ds only
    assert slugs(tokens["carol"]) == ["gpu-1", "gpu-2", "gpu-4"]
    assert portal.get(f"{API}/profiles/gpu-1", headers=as_user(tokens["alice"])).status_code == 404
    hub_view = portal.get(
        f"{API}/profiles", headers=as_user(portal.app.state.settings.hub_api_token)
    )
    assert {p["slug"]: p["groups"] for p in hub_view.json()}["gpu-1"] == ["hpc-admins"]


def test_a_disabled_profile_is_offered_to_no_one(
    portal: TestClient, tokens: dict[str, str]
) -> None:
    carol = as_user(tokens["carol"])
    version = profile(portal, tokens["carol"], "gpu-2")["version"]
    portal.patch(
        f"{API}/profiles/gpu-2", headers=carol, json={"version": version, "enabled": False}
    )
    for user in ("alice", "carol"):
        listed = portal.get(f"{API}/profiles", headers=as_user(tokens[user])).json()
        assert "gpu-2" not in [p["slug"] for p in listed]
    every = portal.get(f"{API}/profiles?all=true", headers=carol).json()
    assert [p["slug"] for p in every if not p["enabled"]] == ["gpu-2"]


def test_create_then_reorder(portal: TestClient, tokens: dict[str, str]) -> None:
    carol = as_user(tokens["carol"])
    created = portal.post(
        f"{API}/profiles",
        headers=carol,
        json={
            "slug": "gpu-3",
            "title": "3 GPUs",
            "gpus": 3,
            "max_runtime": "12:00:00",
            "sbatch_options": {"constraint": "fake"},
        },
    )
    assert created.status_code == 201, created.text
    assert created.json()["position"] == 3
    again = portal.post(
        f"{API}/profiles", headers=carol, json={"slug": "gpu-3", "title": "x", "gpus": 1}
    )
    assert again.status_code == 409
    order = ["gpu-4", "gpu-3", "gpu-2", "gpu-1"]
    moved = portal.put(f"{API}/profiles-order", headers=carol, json={"slugs": order})
    assert [p["slug"] for p in moved.json()] == order
    partial = portal.put(f"{API}/profiles-order", headers=carol, json={"slugs": ["gpu-1"]})
    assert partial.status_code == 422
    assert "name every profile once" in partial.json()["detail"][0]["msg"]


def test_the_api_docs_offer_a_hub_token_login(portal: TestClient) -> None:
    # The docs page is behind the hub's login, like every page; the document is open.
    page = portal.get("/services/portal/docs", follow_redirects=False)
    assert page.status_code == 302 and "oauth2/authorize" in page.headers["location"]
    spec = portal.get("/services/portal/openapi.json").json()
    assert "hub token" in spec["components"]["securitySchemes"]
    assert {"/services/portal/api/profiles", "/services/portal/api/environments"} <= set(
        spec["paths"]
    )
