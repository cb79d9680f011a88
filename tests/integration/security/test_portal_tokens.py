"""The portal takes only tokens meant for it (issue 10, 3), with real hub tokens."""

from __future__ import annotations

import pytest
import requests

from tests.integration.conftest import Hub, server_environment
from tests.integration.faults.helpers import running_session

pytestmark = pytest.mark.integration

JOBS = "/services/portal/api/jobs"
ACCESS = "access:services!service=portal"


def portal_jobs(hub: Hub, token: str) -> requests.Response:
    return requests.get(f"{hub.url}{JOBS}", headers={"Authorization": f"token {token}"}, timeout=30)


def new_token(hub: Hub, user: str, **body: object) -> str:
    session = hub.login(user)
    made = hub.api(session, "POST", f"/users/{user}/tokens", json={"note": "scopes", **body})
    assert made.status_code == 201, made.text
    token: str = made.json()["token"]
    return token


def test_a_token_narrowed_to_other_scopes_is_refused(hub: Hub) -> None:
    narrow = new_token(hub, "bob", scopes=["read:users:activity!user"])
    answer = portal_jobs(hub, narrow)
    assert answer.status_code == 403, answer.text
    assert ACCESS in answer.json()["detail"]
    assert portal_jobs(hub, new_token(hub, "bob")).status_code == 200


def test_a_jupyterlab_servers_own_token_is_refused(hub: Hub, clean: None) -> None:
    running_session(hub, "bob")
    server_token = server_environment("bob")["JUPYTERHUB_API_TOKEN"]
    answer = portal_jobs(hub, server_token)
    assert answer.status_code == 403, answer.text


def test_an_admins_token_narrowed_to_the_portal_has_her_own_rights_only(hub: Hub) -> None:
    """The token the hub's relay of a session's notebook jobs makes (the portal alone, as
    gpuportal_spawner.notebook_jobs.portal_token asks for it): the hub identifies it as carol
    with her groups, and the portal took her for an admin (issue 68, 3)."""
    relay_like = new_token(hub, "carol", scopes=[ACCESS])
    full = new_token(hub, "carol")

    def status(token: str, path: str) -> int:
        headers = {"Authorization": f"token {token}"}
        return requests.get(f"{hub.url}{path}", headers=headers, timeout=30).status_code

    everyone = "/services/portal/api/profiles?all=true"  # every profile: admins only
    assert status(full, everyone) == 200
    assert status(relay_like, everyone) == 403
    assert status(relay_like, "/services/portal/api/profiles") == 200  # her own offer
    assert status(relay_like, "/services/portal/metrics") == 403
