"""Issue 54, item 7: an admin deletes a profile (the API offered GET and PATCH only, the pages
no Delete): on the version read, with its audit record; others may not."""

from __future__ import annotations

from fastapi.testclient import TestClient

from gpuportal_portal.identity import HubIdentity
from tests.unit.portal.conftest import ADMIN_TOKEN, API

ADMIN = {"Authorization": f"token {ADMIN_TOKEN}"}


def test_an_admin_deletes_a_profile_on_the_version_read(
    client: tuple[TestClient, HubIdentity],
) -> None:
    test_client = client[0]
    profile = test_client.get(f"{API}/profiles/gpu-4", headers=ADMIN).json()
    version = profile["version"]
    # A user may not; a stale version is a conflict; nothing is deleted by either.
    refused = test_client.delete(
        f"{API}/profiles/gpu-4",
        params={"version": version},
        headers={"Authorization": "token full"},
    )
    assert refused.status_code == 403
    stale = test_client.delete(
        f"{API}/profiles/gpu-4", params={"version": version + 1}, headers=ADMIN
    )
    assert stale.status_code == 409
    assert test_client.get(f"{API}/profiles/gpu-4", headers=ADMIN).status_code == 200

    gone = test_client.delete(f"{API}/profiles/gpu-4", params={"version": version}, headers=ADMIN)
    assert gone.status_code == 204
    assert test_client.get(f"{API}/profiles/gpu-4", headers=ADMIN).status_code == 404
    listed = [p["slug"] for p in test_client.get(f"{API}/profiles?all=true", headers=ADMIN).json()]
    assert "gpu-4" not in listed and "gpu-1" in listed
    again = test_client.delete(f"{API}/profiles/gpu-4", params={"version": version}, headers=ADMIN)
    assert again.status_code == 404
