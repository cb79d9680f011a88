"""Every `PORTAL_*` setting as one table, from the settings models: the docs' settings reference
(docs/_ext/gpuportal_reference.py) and the Ansible role's defaults
(deploy/ansible/roles/portal/defaults/main/settings.yml) are both written from it, so that a
setting has one name, one default and one description everywhere.

    python -m gpuportal_spawner.settings_table --ansible   the role's defaults file, on stdout

tests/unit/test_ansible_role.py checks that the role's file is what this writes.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_settings import BaseSettings

# How the role names a setting: PORTAL_HUB_PORT is portal_hub_port (Ansible's variables are
# lower case, and ansible-lint asks a role's variables to begin with the role's name).
ROLE_PREFIX = "portal_"


@dataclass(frozen=True)
class Setting:
    name: str  # the models' field name, e.g. hub_port
    read_by: str  # "hub", "portal" or "hub and portal"
    default: Any
    description: str

    @property
    def variable(self) -> str:
        return f"PORTAL_{self.name.upper()}"

    @property
    def role_variable(self) -> str:
        return f"{ROLE_PREFIX}{self.name}"


def settings() -> list[Setting]:
    """Every PORTAL_* setting, in the models' order: the hub's first, then the portal's own."""
    from gpuportal_adapters.settings import HubSettings
    from gpuportal_portal.settings import PortalSettings

    readers: dict[str, type[BaseSettings]] = {"hub": HubSettings, "portal": PortalSettings}
    found: dict[str, Setting] = {}
    for model in readers.values():
        for name, field in model.model_fields.items():
            if field.validation_alias is not None or name in found:
                continue  # JUPYTERHUB_* ones are the hub's to set for its services
            read_by = " and ".join(r for r, m in readers.items() if name in m.model_fields)
            found[name] = Setting(name, read_by, field.default, field.description or "")
    return list(found.values())


def plain(value: Any) -> Any:
    """A default as JSON has it (a tuple as a list), which is also how YAML reads it back."""
    return json.loads(json.dumps(value))


def ansible_defaults(rows: Sequence[Setting]) -> Iterator[str]:
    """The role's defaults file: each setting's description as a comment, then its variable."""
    yield "---"
    yield "# Written by `python -m gpuportal_spawner.settings_table --ansible`: do not edit."
    yield "# Every PORTAL_* setting of the hub and the portal, with the same default (the docs'"
    yield "# settings reference says more). The role writes each one into the hub's settings"
    yield "# file, /etc/gpuportal/hub.env; set them in your inventory."
    for row in rows:
        yield ""
        for line in textwrap.wrap(f"{row.variable} ({row.read_by}): {row.description}", 96):
            yield f"# {line}"
        yield f"{row.role_variable}: {json.dumps(plain(row.default))}"
    yield ""
    yield "# The settings the role writes into the hub's settings file (templates/hub.env.j2)."
    yield "_portal_setting_names:"
    for row in rows:
        yield f"  - {row.name}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuportal_spawner.settings_table")
    parser.add_argument("--ansible", action="store_true", help="the Ansible role's defaults")
    args = parser.parse_args(argv)
    if not args.ansible:
        parser.print_help()
        return 2
    sys.stdout.write("\n".join(ansible_defaults(settings())) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
