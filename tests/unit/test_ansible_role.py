"""The Ansible role's variables are the PORTAL_* settings (issue 57): its defaults file is the one
gpuportal_spawner.settings_table writes from the settings models, so that a setting added to a
model, or a default changed, cannot be missing from the role or differ there. The role's run
itself is proven on roots that stand in for a site's hosts (tests/site)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
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


ANSIBLE_PLAYBOOK = (
    Path(os.environ.get("ANSIBLE_VENV", "/opt/gpuportal/ansible")) / "bin/ansible-playbook"
)


def _check_settings(tmp_path: Path, values: dict[str, object]) -> subprocess.CompletedProcess[str]:
    """The role's check of its settings file (tasks/settings_check.yml), run by Ansible itself
    on this machine with these settings."""
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {
                "_portal_setting_names": list(values),
                **{f"portal_{name}": value for name, value in values.items()},
            },
            "tasks": [{"ansible.builtin.import_tasks": str(ROLE / "tasks/settings_check.yml")}],
        }
    ]
    playbook = tmp_path / "check.yml"
    playbook.write_text(yaml.safe_dump(play))
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "-i", "localhost,", "-c", "local", str(playbook)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
    )


@pytest.mark.builds
@pytest.mark.parametrize("value", ["it's", "C:\\\\share", ["a'b"]])
def test_a_setting_the_settings_file_cannot_carry_is_refused_by_name(
    tmp_path: Path, value: object
) -> None:
    """A quote ended the value for systemd (the rest read as more settings); two backslashes
    were one for gpuportal-admin, two for the hub."""
    secret = "postgresql://portal:s3cret@db/portal"
    done = _check_settings(tmp_path, {"database_url": secret, "hub_id": value})
    assert done.returncode != 0, done.stdout
    assert "portal_hub_id holds a single quote or two backslashes in a row" in done.stdout
    assert "s3cret" not in done.stdout + done.stderr


@pytest.mark.builds
def test_settings_the_file_carries_pass_the_check(tmp_path: Path) -> None:
    values = {"hub_id": "ds-hub", "project_roots": ["/srv/projects"], "ldap_uri": "a\\d", "x": 3}
    done = _check_settings(tmp_path, values)
    assert done.returncode == 0, done.stdout + done.stderr
