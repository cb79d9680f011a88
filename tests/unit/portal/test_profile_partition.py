"""A profile made without a partition gets the deployment's (PORTAL_DEFAULT_PARTITION), as the
seeded profiles do, not a name of this demo's cluster."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from gpuportal_core.partitions import NodeShape, Partition
from gpuportal_portal.app import create_app
from gpuportal_portal.deps import get_partitions
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.settings import PortalSettings
from tests.unit.portal.conftest import ADMIN_TOKEN, API, hub_says

A100 = {"a100": Partition("a100", 24 * 3600, (NodeShape(4, 32, 200000),))}


def test_a_new_profile_without_a_partition_gets_the_deployments(tmp_path: Path) -> None:
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}",
        hub_api_token="hub-secret",
        slurm_bin_dir=str(tmp_path / "no-slurm"),
        default_partition="a100",
    )
    app = create_app(settings, identity=HubIdentity(settings, check_token=hub_says))
    app.dependency_overrides[get_partitions] = lambda: A100
    headers = {"Authorization": f"token {ADMIN_TOKEN}"}
    with TestClient(app) as client:
        made = client.post(
            f"{API}/profiles", headers=headers, json={"slug": "one", "title": "One", "gpus": 1}
        )
        assert made.status_code == 201, made.text
        assert made.json()["partition"] == "a100"
        # One named explicitly is kept (and checked against the cluster's).
        named = {"slug": "two", "title": "Two", "gpus": 1, "partition": "gpu"}
        refused = client.post(f"{API}/profiles", headers=headers, json=named)
        assert refused.status_code == 422 and "gpu" in refused.text
        # The admin page's new-profile form starts from it too.
        page = client.get("/services/portal/admin/profiles/new", headers=headers)
        assert page.status_code == 200 and 'value="a100"' in page.text
