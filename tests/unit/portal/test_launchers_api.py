"""The API serves the launcher registry (gpuportal_core.launchers), and its job schema names
the registry's launchers: no copy of the list to keep in step."""

from __future__ import annotations

from fastapi.testclient import TestClient

from gpuportal_core.launchers import LAUNCHERS
from gpuportal_portal.identity import HubIdentity
from tests.unit.portal.conftest import API


def test_the_api_serves_the_registry_and_its_schema_names_it(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]
    listed = test_client.get(f"{API}/launchers", headers={"Authorization": "token full"})
    assert listed.status_code == 200, listed.text
    assert [entry["name"] for entry in listed.json()] == list(LAUNCHERS)
    torchrun = listed.json()[0]
    assert torchrun["one_task_per_node"] is True and "c10d" in torchrun["about"]
    schema = test_client.get("/services/portal/openapi.json").json()
    launcher = schema["components"]["schemas"]["JobCreate"]["properties"]["launcher"]
    assert launcher["enum"] == list(LAUNCHERS)
