"""A second portal app (FastAPI TestClient) on a database of the test's choice: SQLite or the
local PostgreSQL. It authenticates callers with the real test hub and checks profiles against
the real Slurm, exactly as the hub-managed portal does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient

from gpuportal_portal.app import create_app
from gpuportal_portal.settings import PortalSettings
from tests.hubproc import Hub
from tests.integration.conftest import _need
from tests.postgres import fresh_database

DATABASES = ["sqlite", "postgresql"]


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind; a PostgreSQL one is created for the test and dropped."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'portal.db'}"
        return
    with ExitStack() as stack:
        try:
            url = stack.enter_context(fresh_database("portal_t"))
        except psycopg.OperationalError as error:
            _need("PostgreSQL", str(error).strip())
        yield url


@pytest.fixture
def portal(hub: Hub, database_url: str) -> Iterator[TestClient]:
    """The portal app on database_url, talking to the test hub with the hub's portal token."""
    settings = PortalSettings(
        database_url=database_url,
        hub_api_token=(hub.state / "portal-api-token").read_text().strip(),
        hub_api_url=hub.api_url,
        **hub.client_tls,
        oauth_client_id="service-portal",
    )
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture(scope="session")
def tokens(hub: Hub) -> dict[str, str]:
    """A hub API token for each demo user, made through the hub's REST API."""
    made = {}
    for user in ("alice", "bob", "carol"):
        session = hub.login(user)
        response = hub.api(session, "POST", f"/users/{user}/tokens", json={"note": "portal tests"})
        assert response.status_code == 201, response.text
        made[user] = response.json()["token"]
    return made
