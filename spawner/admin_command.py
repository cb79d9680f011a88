"""`gpuportal-admin`: what a site's admin runs on the hub host (the `gpuportal` command is for
users).

    gpuportal-admin sudoers              print the service account's sudo rule
    gpuportal-admin sudoers --install    check it with visudo and write /etc/sudoers.d/gpuportal
    gpuportal-admin preflight            check the hub host, the cluster and its nodes (as root)

It reads the hub's own settings (the PORTAL_* variables, gpuportal_adapters.settings), so the rule
names the account and the groups the hub runs with.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

from gpuportal_adapters.settings import HubSettings
from gpuportal_core.sudo_rules import USER_COMMANDS, RuleError, render

SUDOERS_FILE = "/etc/sudoers.d/gpuportal"
# Where sudo looks a command name up (Debian's secure_path): the rule must name the same file.
SUDO_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SLURM_PROGRAMS = {"sbatch", "scancel", "srun", "squeue"}


def program_paths(settings: HubSettings) -> dict[str, str]:
    """Each program of the rule, as sudo will find it ("" where it is not installed)."""
    paths: dict[str, str] = {}
    for command in USER_COMMANDS:
        name = command.program
        if name in SLURM_PROGRAMS and settings.slurm_bin_dir:
            paths[name] = os.path.join(settings.slurm_bin_dir, name)
        else:
            paths[name] = shutil.which(name, path=SUDO_PATH) or ""
    return paths


def sudoers_text(settings: HubSettings) -> str:
    return render(
        service_user=settings.service_user,
        user_groups=settings.user_groups,
        programs=program_paths(settings),
    )


def install_sudoers(text: str, target: str = SUDOERS_FILE) -> None:
    """Checked by visudo first: a broken file in sudoers.d would break every sudo on the host."""
    folder = os.path.dirname(target)
    with tempfile.NamedTemporaryFile("w", dir=folder, prefix=".gpuportal-", delete=False) as tmp:
        tmp.write(text)
    try:
        os.chmod(tmp.name, 0o440)
        check = subprocess.run(
            ["visudo", "-cf", tmp.name], capture_output=True, text=True, timeout=30
        )
        if check.returncode != 0:
            raise RuleError(f"visudo refused the rule: {check.stdout.strip()} {check.stderr}")
        os.replace(tmp.name, target)
    finally:
        if os.path.exists(tmp.name):
            os.unlink(tmp.name)


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments (the docs' reference renders them: docs/reference/cli.md)."""
    # The docstring's first paragraph (its first line alone stopped mid-sentence).
    first = " ".join(__doc__.split("\n\n")[0].split())
    parser = argparse.ArgumentParser(prog="gpuportal-admin", description=first)
    parser.add_argument(
        "--settings",
        metavar="FILE",
        default="",
        help="the hub's settings file (PORTAL_*='value' lines; this environment's win); "
        "default: PORTAL_SETTINGS_FILE, /etc/gpuportal/hub.env",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    sudoers = commands.add_parser("sudoers", help="the service account's sudo rule")
    sudoers.add_argument(
        "--install", action="store_true", help=f"check it and write {SUDOERS_FILE} (as root)"
    )
    commands.add_parser(
        "preflight", help="check the hub host, the cluster and the nodes; a line each"
    )
    return parser


def hub_settings(path: str) -> HubSettings:
    """The hub's settings: the variables of this environment over those of the hub's settings
    file (what the hub was started with: deploy/local/hub.sh writes it, a site's systemd unit
    reads it), so that a preflight in a plain root shell checks the hub as it runs."""
    path = path or HubSettings().settings_file
    if path and os.path.isfile(path):
        return HubSettings(_env_file=path)
    return HubSettings()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = hub_settings(args.settings)
    if args.command == "preflight":
        return run_preflight(settings)
    try:
        text = sudoers_text(settings)
        if args.install:
            install_sudoers(text)
            print(
                f"{SUDOERS_FILE}: {settings.service_user} as members of "
                f"{', '.join(sorted(settings.user_groups))}"
            )
        else:
            sys.stdout.write(text)
    except (RuleError, OSError) as error:
        print(f"gpuportal-admin: {error}", file=sys.stderr)
        return 1
    return 0


def run_preflight(settings: HubSettings) -> int:
    from gpuportal_core.preflight import summary
    from gpuportal_spawner.preflight import preflight

    checks = preflight(settings)
    for check in checks:
        print(check.line(), flush=True)
    line, ok = summary(checks)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
