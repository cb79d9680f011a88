"""Profiles of one GPU kind: what the admin form offers per kind, the site's figures winning
over the nodes', and a kind the cluster does not carry refused at its field."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from gpuportal_core.partitions import NodeShape, Partition
from gpuportal_portal.app import create_app
from gpuportal_portal.deps import get_partitions
from gpuportal_portal.identity import HubIdentity
from gpuportal_portal.profile_form import KindOffer, kind_offers
from gpuportal_portal.settings import PortalSettings
from tests.unit.portal.conftest import ADMIN_TOKEN, API, hub_says

# A100 and H100 nodes, and a node of MIG slices (16 cores, 117 GB over its six slices).
KINDS = {
    "gpu": Partition(
        "gpu",
        24 * 3600,
        (
            NodeShape(4, 32, 200000, 2, (("a100", 4),)),
            NodeShape(4, 112, 1000000, 1, (("h100", 4),)),
            NodeShape(6, 16, 120000, 1, (("1g.10gb", 4), ("3g.40gb", 2))),
        ),
    )
}
SITE = {"1g.10gb": (2, 12)}


def test_each_kind_is_offered_with_the_sites_figures_or_its_nodes() -> None:
    assert kind_offers(KINDS, SITE) == [
        KindOffer("1g.10gb", ("gpu",), 2, 12, site=True),
        KindOffer("3g.40gb", ("gpu",), 2, 19, site=False),
        KindOffer("a100", ("gpu",), 8, 48, site=False),
        KindOffer("h100", ("gpu",), 28, 244, site=False),
    ]
    assert kind_offers(KINDS, {})[0].said == (
        "1g.10gb (gpu): 2 cores and 19 GB per GPU, what its nodes give"
    )


def test_profiles_of_a_kind_through_the_api_and_the_admin_form(tmp_path: Path) -> None:
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}",
        hub_api_token="hub-secret",
        slurm_bin_dir=str(tmp_path / "no-slurm"),
        gpu_kinds=SITE,
    )
    app = create_app(settings, identity=HubIdentity(settings, check_token=hub_says))
    app.dependency_overrides[get_partitions] = lambda: KINDS
    headers = {"Authorization": f"token {ADMIN_TOKEN}"}
    with TestClient(app) as client:
        # A notebook slice: the site's 2 cores and 12 GB, as it gave no figures of its own.
        slice_ = {"slug": "slice", "title": "A slice", "gpus": 1, "gpu_type": "1g.10gb"}
        made = client.post(f"{API}/profiles", headers=headers, json=slice_)
        assert made.status_code == 201, made.text
        assert (made.json()["cores_per_gpu"], made.json()["mem_per_gpu_gb"]) == (2, 12)
        # Figures given win; a kind without site figures keeps the product's rule.
        h100 = {"slug": "h100", "title": "H100", "gpus": 2, "gpu_type": "h100"}
        made = client.post(f"{API}/profiles", headers=headers, json={**h100, "cores_per_gpu": 28})
        assert (made.json()["cores_per_gpu"], made.json()["mem_per_gpu_gb"]) == (28, 48)
        # A kind no node carries is refused at its field, naming those there are.
        l40s = {"slug": "l40s", "title": "L40S", "gpus": 1, "gpu_type": "l40s"}
        refused = client.post(f"{API}/profiles", headers=headers, json=l40s)
        assert refused.status_code == 422
        assert "its kinds: 1g.10gb, 3g.40gb, a100, h100" in refused.text
        # The form offers each kind with what it fills in.
        page = client.get("/services/portal/admin/profiles/new", headers=headers)
        assert page.status_code == 200
        fill = '{"cores_per_gpu": 28, "mem_per_gpu_gb": 244, "partition": "gpu"}'
        assert f"<option value=\"h100\" data-fill='{fill}'>" in page.text
        assert "1g.10gb (gpu): 2 cores and 12 GB per GPU, the site&#39;s rule" in page.text
        # The edit form too.
        page = client.get("/services/portal/admin/profiles/slice", headers=headers)
        assert 'list="gpu_type-offered"' in page.text and 'value="1g.10gb"' in page.text


def test_a_site_seeds_its_own_profiles_after_the_shipped_ones(tmp_path: Path) -> None:
    """PORTAL_SEED_PROFILES (the demo's slice profile): stored on the first start only."""
    slice_ = {"slug": "slice", "title": "1 MIG slice", "gpus": 1, "gpu_type": "1g.10gb"}
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}",
        hub_api_token="hub-secret",
        slurm_bin_dir=str(tmp_path / "no-slurm"),
        seed_profiles=[{**slice_, "partition": "mig", "cores_per_gpu": 2}],
    )
    headers = {"Authorization": f"token {ADMIN_TOKEN}"}
    for _ in range(2):  # a restart stores nothing again
        app = create_app(settings, identity=HubIdentity(settings, check_token=hub_says))
        with TestClient(app) as client:
            listed = client.get(f"{API}/profiles", headers=headers).json()
        assert [p["slug"] for p in listed] == ["gpu-1", "gpu-2", "gpu-4", "slice"]
        seeded = listed[-1]
        assert (seeded["partition"], seeded["gpu_type"], seeded["cores_per_gpu"]) == (
            "mig",
            "1g.10gb",
            2,
        )
        assert listed[0]["partition"] == "gpu"  # the shipped ones on the deployment's
