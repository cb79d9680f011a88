"""The Ansible role's variables are the PORTAL_* settings (issue 57): its defaults file is the one
gpuportal_spawner.settings_table writes from the settings models, so that a setting added to a
model, or a default changed, cannot be missing from the role or differ there. The role's run
itself is proven on roots that stand in for a site's hosts (tests/site)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from gpuportal_spawner.settings_table import ansible_defaults, plain, settings

ROLE = (
    Path(__file__).resolve().parents[2]
    / "deploy/ansible/ansible_collections/gpuportal/site/roles/portal"
)
DEFAULTS = ROLE / "defaults" / "main" / "settings.yml"


def test_the_roles_settings_file_is_the_one_the_models_write() -> None:
    written = "\n".join(ansible_defaults(settings())) + "\n"
    assert DEFAULTS.read_text() == written, (
        "the role's defaults differ from the settings models: run "
        "`python -m gpuportal_spawner.settings_table --ansible > "
        "deploy/ansible/ansible_collections/gpuportal/site/roles/portal/defaults/main/settings.yml`"
    )


def test_every_setting_is_a_role_variable_with_its_default() -> None:
    defaults = yaml.safe_load(DEFAULTS.read_text())
    for setting in settings():
        assert defaults[setting.role_variable] == plain(setting.default), setting.variable
    # ...and the hub's settings file is written from every one of them (templates/hub.env.j2).
    assert defaults["_portal_setting_names"] == [setting.name for setting in settings()]
    assert "_portal_setting_names" in (ROLE / "templates" / "hub.env.j2").read_text()


def test_the_module_writes_the_defaults_on_its_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuportal_spawner.settings_table", "--ansible"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == DEFAULTS.read_text()
