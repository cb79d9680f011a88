"""The docs site at /services/portal/manual/ (portal/manual.py): the built pages where they
are, and where they are not, how to build them."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from gpuportal_portal.app import create_app
from gpuportal_portal.settings import PortalSettings

MANUAL = "/services/portal/manual"


def portal(tmp_path: Path, docs_dir: Path) -> TestClient:
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}",
        slurm_bin_dir=str(tmp_path / "no-slurm"),
        docs_dir=str(docs_dir),
    )
    return TestClient(create_app(settings))


def test_the_built_site_is_served_with_its_pages(tmp_path: Path) -> None:
    site = tmp_path / "html"
    (site / "reference").mkdir(parents=True)
    (site / "index.html").write_text("<h1>GPU portal</h1>")
    (site / "reference" / "settings.html").write_text("<h1>Settings</h1>")
    with portal(tmp_path, site) as client:
        index = client.get(f"{MANUAL}/")
        assert index.status_code == 200 and "<h1>GPU portal</h1>" in index.text
        page = client.get(f"{MANUAL}/reference/settings.html")
        assert page.status_code == 200 and "Settings" in page.text
        # The portal's headers too: no framing, nothing from elsewhere.
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert client.get(f"{MANUAL}/nowhere.html").status_code == 404


def test_where_the_site_is_not_built_the_page_says_how_to_build_it(tmp_path: Path) -> None:
    with portal(tmp_path, tmp_path / "not-built") as client:
        for path in (f"{MANUAL}/", f"{MANUAL}/reference/settings.html"):
            answer = client.get(path)
            assert answer.status_code == 404
            assert "make docs" in answer.text and "PORTAL_DOCS_DIR" in answer.text
