"""Who may call the portal, and how: token scopes and the CSRF rule (issue 10, 3 and 4).

The hub's answer for a token is replaced here (a boundary); tests/integration/security tries
the same with real hub tokens.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from gpuportal_portal.models import JobRecord
from tests.unit.portal.conftest import (
    ACCESS,
    ADMIN_RELAY_TOKEN,
    ADMIN_TOKEN,
    API,
    PROMETHEUS_TOKEN,
)


@pytest.mark.parametrize("token", ["narrow", "server", "other-service"])
def test_a_token_without_the_portal_scope_is_refused_saying_which_scope(
    client: tuple[TestClient, HubIdentity], token: str
) -> None:
    answer = client[0].get(f"{API}/profiles", headers={"Authorization": f"token {token}"})
    assert answer.status_code == 403
    assert ACCESS in answer.json()["detail"]


def test_a_token_with_the_portal_scope_is_let_in(client: tuple[TestClient, HubIdentity]) -> None:
    answer = client[0].get(f"{API}/profiles", headers={"Authorization": "Bearer full"})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("header", ["", "Basic Ym9iOnB3", "token", "token   "])
def test_a_header_that_is_not_a_token_never_falls_back_to_the_cookie(
    client: tuple[TestClient, HubIdentity], header: str
) -> None:
    """Before, any Authorization header skipped the CSRF check and the cookie then logged in."""
    test_client = client[0]
    test_client.cookies.set(COOKIE_NAME, "full")
    answer = test_client.delete(f"{API}/jobs/1", headers={"Authorization": header})
    assert answer.status_code == 401
    assert "token <hub API token>" in answer.json()["detail"]


def test_a_cookie_caller_must_send_the_pages_csrf_token(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client, identity = client
    test_client.cookies.set(COOKIE_NAME, "full")
    assert test_client.delete(f"{API}/jobs/1").status_code == 403
    wrong = test_client.delete(f"{API}/jobs/1", headers={"X-CSRF-Token": "guess"})
    assert wrong.status_code == 403
    right = test_client.delete(
        f"{API}/jobs/1", headers={"X-CSRF-Token": identity.csrf_token("full")}
    )
    assert right.status_code == 404  # past the check: there is no job 1


def test_a_header_token_needs_no_csrf_token(client: tuple[TestClient, HubIdentity]) -> None:
    answer = client[0].delete(f"{API}/jobs/1", headers={"Authorization": "token full"})
    assert answer.status_code == 404


def test_the_metrics_are_for_admins_and_the_prometheus_service_which_reads_nothing_else(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]

    def metrics(token: str) -> int:
        headers = {"Authorization": f"token {token}"}
        return test_client.get("/services/portal/metrics", headers=headers).status_code

    assert metrics(PROMETHEUS_TOKEN) == 200
    assert metrics(ADMIN_TOKEN) == 200
    assert metrics("full") == 403  # bob, no admin
    served = test_client.get(f"{API}/jobs", headers={"Authorization": f"token {PROMETHEUS_TOKEN}"})
    assert served.status_code == 403 and "/metrics" in served.json()["detail"]


def test_an_admins_token_narrowed_to_the_portal_is_no_admin(
    client: tuple[TestClient, HubIdentity],
) -> None:
    """The hub's relay of a session's notebook jobs asks the portal with a token of the user
    that may use the portal alone; the hub identifies it as carol with her groups. It was an
    admin here: code in carol's job could read and cancel everyone's jobs."""
    test_client = client[0]
    app: Any = test_client.app
    with app.state.database.sessions() as session:
        bobs = JobRecord(user="bob", name="train", launcher="torchrun", script="", output="")
        session.add(bobs)
        session.commit()
        job_id = bobs.id

    def as_carol(token: str, method: str, path: str) -> int:
        headers = {"Authorization": f"token {token}"}
        return test_client.request(method, f"{API}{path}", headers=headers).status_code

    assert as_carol(ADMIN_TOKEN, "GET", f"/jobs/{job_id}") == 200  # her browser's, or CLI's
    assert as_carol(ADMIN_RELAY_TOKEN, "GET", f"/jobs/{job_id}") == 404
    assert as_carol(ADMIN_RELAY_TOKEN, "DELETE", f"/jobs/{job_id}") == 404
    everyone = test_client.get(
        f"{API}/jobs?mine=false", headers={"Authorization": f"token {ADMIN_RELAY_TOKEN}"}
    )
    assert everyone.status_code == 200 and everyone.json() == []
    assert as_carol(ADMIN_RELAY_TOKEN, "GET", "/profiles?all=true") == 403
    headers = {"Authorization": f"token {ADMIN_RELAY_TOKEN}"}
    assert test_client.get("/services/portal/metrics", headers=headers).status_code == 403
