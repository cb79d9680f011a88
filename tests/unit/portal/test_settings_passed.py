"""The portal's own settings set in the hub's environment reach the portal service, which
JupyterHub starts with only what its `environment` names (portal/settings.py)."""

from __future__ import annotations

import pytest

from gpuportal_portal.settings import PortalSettings, passed_by_the_hub


def test_the_portals_own_settings_are_passed_and_the_hubs_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PORTAL_PROJECT_ROOTS", '["/projects", "/scratch"]')
    monkeypatch.setenv("PORTAL_DOCS_DIR", "/srv/gpuportal-docs")
    monkeypatch.setenv("PORTAL_HUB_PORT", "8443")  # the hub's: it sets the portal's itself
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "not-passed")
    passed = passed_by_the_hub()
    assert passed == {
        "PORTAL_DOCS_DIR": "/srv/gpuportal-docs",
        "PORTAL_PROJECT_ROOTS": '["/projects", "/scratch"]',
    }
    # The portal reads them back as they were meant.
    for name, value in passed.items():
        monkeypatch.setenv(name, value)
    read = PortalSettings()
    assert read.project_roots == ["/projects", "/scratch"]
    assert read.docs_dir == "/srv/gpuportal-docs"


def test_nothing_set_passes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PortalSettings.model_fields:
        monkeypatch.delenv(f"PORTAL_{name.upper()}", raising=False)
    assert passed_by_the_hub() == {}
