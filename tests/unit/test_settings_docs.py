"""The README's table of settings names every PORTAL_* field of the settings models, and no
Python file reads a PORTAL_* variable by hand (gpuportal_core.settings is the one reader)."""

from __future__ import annotations

import re
from pathlib import Path

from gpuportal_core.settings import ClusterSettings, HubSettings
from gpuportal_portal.settings import PortalSettings

ROOT = Path(__file__).resolve().parents[2]


def _variables() -> set[str]:
    names = set()
    for model in (ClusterSettings, HubSettings, PortalSettings):
        for name, field in model.model_fields.items():
            if field.validation_alias is None:  # JUPYTERHUB_* ones are the hub's to set
                names.add(f"PORTAL_{name.upper()}")
    return names


def test_the_readme_lists_every_setting() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Settings") :]
    listed = set(re.findall(r"^\| `(PORTAL_[A-Z_]+)` \|", table, re.MULTILINE))
    assert listed == _variables()


def test_no_python_file_reads_a_portal_variable_by_hand() -> None:
    by_hand = []
    for folder in ("gpuportal_core", "spawner", "portal", "deploy", "gpuportal_session"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            if re.search(r"environ(\.get)?\s*[\[(]\s*[\"']PORTAL_", text):
                by_hand.append(str(path.relative_to(ROOT)))
    assert by_hand == []
