"""A portal app on a temporary SQLite database, with the hub's answer for tokens replaced."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuportal_portal import job_checks
from gpuportal_portal.app import create_app
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.settings import PortalSettings

API = "/services/portal/api"
# bob's token, and a notebook job of his as the API takes it.
BOB = {"Authorization": "token full"}
NOTEBOOK_JOB = {
    "name": "nightly",
    "launcher": "notebook",
    "nodes": 1,
    "gpus_per_node": 1,
    "script": "/home/bob/train.ipynb",
}
ACCESS = "access:services!service=portal"
# The scopes the hub reports for each token bob might present.
TOKENS: dict[str, list[str]] = {
    "full": ["read:users!user=bob", ACCESS],
    "narrow": ["read:users:activity!user=bob"],
    "server": ["access:servers!server=bob/", "users:activity!user=bob"],
    "other-service": ["access:services!service=grafana"],
}


# carol, an admin of the hub, with a token for everything.
ADMIN_TOKEN = "admin"
# carol's token as the hub's relay of a session's notebook jobs makes it: the portal alone.
ADMIN_RELAY_TOKEN = "admin-relay"
# The hub's `prometheus` service (deploy/jupyterhub_config.py).
PROMETHEUS_TOKEN = "prometheus"


async def hub_says(token: str) -> dict[str, Any] | None:
    if token == ADMIN_TOKEN:
        return {
            "kind": "user",
            "name": "carol",
            "groups": ["hpc-admins"],
            "admin": True,
            "scopes": ["admin-ui", "read:users!user=carol", ACCESS],
        }
    if token == ADMIN_RELAY_TOKEN:  # the hub's identify model: name and groups, no `admin`
        return {"kind": "user", "name": "carol", "groups": ["hpc-admins"], "scopes": [ACCESS]}
    if token == PROMETHEUS_TOKEN:
        return {"kind": "service", "name": "prometheus", "scopes": ["read:metrics", ACCESS]}
    if token not in TOKENS:
        return None
    return {"kind": "user", "name": "bob", "groups": [], "admin": False, "scopes": TOKENS[token]}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, HubIdentity]]:
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}",
        hub_api_token="hub-secret",
        slurm_bin_dir=str(tmp_path / "no-slurm"),
        job_look_seconds=0,  # no Slurm here to look at
    )
    identity = HubIdentity(settings, check_token=hub_says)
    with TestClient(create_app(settings, identity=identity)) as test_client:
        # A route that queries on the event loop fails its test (gpuportal_portal.db).
        test_client.app.state.database.on_the_loop = "raise"  # type: ignore[attr-defined]
        yield test_client, identity


@pytest.fixture
def bob_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """bob's home as the cluster's directory would give it (no bob on this host): for the
    requests that get as far as his folders."""
    monkeypatch.setattr(job_checks, "home_of", lambda user: f"/home/{user}")
