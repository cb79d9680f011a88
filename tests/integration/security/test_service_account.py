"""The hub and everything it starts run as the service account, whose only privilege is its sudo
rule: the listed commands, as cluster users, never as root (issue 33, 1).

The rest of the integration tests run against this same hub, so they show the product working
under the account: spawn, the port callback, jobs, TensorBoard, extend (Slurm's operator level),
stop, culling, the use collector, notices, Prometheus, the resumer after a restart.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess

import pytest

from tests.hubproc import SERVICE_USER, VENV_BIN, Hub

pytestmark = pytest.mark.integration


# Set, so that asking sudo to keep them means something (sudo ignores names that are unset;
# LD_* never reach it at all: the loader drops them for a setuid program).
UNSAFE_ENV = {"PYTHONPATH": "/tmp", "BASH_ENV": "/tmp/x", "SLURM_CONF": "/tmp/slurm.conf"}


def as_service(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """argv as the service account, as the hub runs it (no groups beyond its own)."""
    return subprocess.run(
        ["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", "--init-groups", *argv],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
        env={**os.environ, **(env or {})},
    )


def sudo(*argv: str) -> subprocess.CompletedProcess[str]:
    return as_service("sudo", "-n", *argv, env=UNSAFE_ENV)


def descendants(pid: int) -> dict[int, tuple[str, str]]:
    """pid and every process under it: pid -> (user, command line)."""
    table = subprocess.run(
        ["ps", "-ww", "-e", "-o", "pid=,ppid=,user:32=,args="], capture_output=True, text=True
    ).stdout
    rows = {}
    children: dict[int, list[int]] = {}
    for line in table.splitlines():
        fields = line.split(None, 3)
        if len(fields) < 4:
            continue
        child, parent = int(fields[0]), int(fields[1])
        rows[child] = (fields[2], fields[3])
        children.setdefault(parent, []).append(child)
    found, todo = {}, [pid]
    while todo:
        current = todo.pop()
        if current in rows:
            found[current] = rows[current]
        todo.extend(children.get(current, []))
    return found


def test_the_hub_its_proxy_and_its_services_run_as_the_service_account(hub: Hub) -> None:
    assert hub.proc is not None
    processes = descendants(hub.proc.pid)
    commands = " ".join(args for _, args in processes.values())
    for part in (
        "gpuportal-hub",
        "configurable-http-proxy",
        "gpuportal_portal",
        "gpuportal_spawner.resume_service",
        "jupyterhub_idle_culler",
    ):
        assert part in commands, f"{part} is not running under the hub: {processes}"
    assert {user for user, _ in processes.values()} == {SERVICE_USER}, processes


@pytest.mark.parametrize(
    "argv",
    [
        ["-u", "root", "/usr/bin/tail", "-c", "64", "--", "/etc/shadow"],
        ["/usr/bin/id"],
        ["-u", "root", "/usr/bin/sbatch", "--parsable"],
        ["-g", "root", "/usr/bin/id"],
        ["-s"],
        ["-i"],
    ],
)
def test_the_service_account_runs_nothing_as_root(cluster: None, argv: list[str]) -> None:
    attempt = sudo(*argv)
    assert attempt.returncode != 0, attempt


@pytest.mark.parametrize(
    "argv",
    [
        ["-u", "alice", "/bin/sh", "-c", "id"],
        ["-u", "alice", "/bin/bash"],
        ["-u", "alice", "/usr/bin/env", "id"],
        ["-u", "alice", "/usr/bin/python3", "-c", "print(1)"],
        ["-u", "alice", "/usr/bin/sbatch", "--parsable", "--wrap=id"],
        ["-u", "alice", "/usr/bin/scancel", "--user=bob"],
        ["-u", "alice", "/usr/bin/tail", "-f", "/etc/hostname"],
        ["-u", "alice", "/usr/bin/rm", "-rf", "/home/alice"],
        ["-i", "-u", "alice"],
        ["-u", "alice", "-s"],
        ["-u", "alice", "-E", "/usr/bin/tail", "-c", "64", "--", "/etc/hostname"],
        *(
            [
                "-u",
                "alice",
                f"--preserve-env={name}",
                "/usr/bin/tail",
                "-c",
                "64",
                "--",
                "/etc/hostname",
            ]
            for name in UNSAFE_ENV
        ),
        # Accounts that are not cluster users: the rule acts for the hub's groups only.
        ["-u", "munge", "/usr/bin/tail", "-c", "64", "--", "/etc/hostname"],
        ["-u", "nobody", "/usr/bin/tail", "-c", "64", "--", "/etc/hostname"],
    ],
)
def test_no_shell_no_other_command_no_other_account(cluster: None, argv: list[str]) -> None:
    attempt = sudo(*argv)
    assert attempt.returncode != 0, attempt


def test_what_the_rule_lists_it_does_run_as_a_cluster_user(cluster: None) -> None:
    """The refusals above are the rule's, not a sudo that refuses everything."""
    allowed = sudo(
        "-u",
        "alice",
        "--preserve-env=JUPYTERHUB_USER",
        "/usr/bin/tail",
        "-c",
        "64",
        "--",
        "/etc/hostname",
    )
    assert allowed.returncode == 0, allowed
    whoami = sudo("-u", "alice", "/usr/bin/test", "-d", "/home/alice", "-a", "-w", "/home/alice")
    assert whoami.returncode == 0, whoami


def test_the_installed_rule_is_the_one_the_product_prints(cluster: None) -> None:
    printed = subprocess.run(
        [str(VENV_BIN / "gpuportal-admin"), "sudoers"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    with open("/etc/sudoers.d/gpuportal") as installed:
        assert installed.read() == printed
    assert stat.S_IMODE(os.stat("/etc/sudoers.d/gpuportal").st_mode) == 0o440


def test_the_service_account_is_a_slurm_operator_that_may_submit_nothing(cluster: None) -> None:
    level = subprocess.run(
        ["sacctmgr", "-n", "-P", "list", "user", SERVICE_USER, "format=adminlevel"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()
    assert level == "Operator"
    job = as_service("sbatch", "--parsable", "--wrap=true")
    assert job.returncode != 0 and "submit limit" in job.stderr, job


def test_the_hubs_folder_and_secrets_are_the_service_accounts_alone(hub: Hub) -> None:
    account = pwd.getpwnam(SERVICE_USER)
    assert stat.S_IMODE(hub.state.stat().st_mode) == 0o700
    wrong = []
    for path in (hub.state, *hub.state.rglob("*")):
        info = path.lstat()
        # Public certificates (.crt) may be 0644 inside the 0700 folder; nothing else.
        public = (path.suffix == ".crt" and not path.name.endswith("_trust.crt")) or path.is_dir()
        if info.st_uid != account.pw_uid or info.st_mode & (0o022 if public else 0o077):
            wrong.append(f"{path} {stat.filemode(info.st_mode)} uid={info.st_uid}")
    assert wrong == []
    secrets = ["jupyterhub_cookie_secret", "portal-api-token", "jupyterhub.sqlite", "portal.db"]
    secrets += [str(key.relative_to(hub.state)) for key in hub.state.rglob("*.key")]
    assert len(secrets) > 6
    for secret in secrets:
        assert stat.S_IMODE((hub.state / secret).stat().st_mode) == 0o600, secret
    for anything in (hub.state / "portal-api-token", hub.state / "internal-ssl/hub-ca/hub-ca.crt"):
        denied = subprocess.run(
            ["sudo", "-u", "bob", "cat", str(anything)], capture_output=True, text=True
        )
        assert denied.returncode != 0 and "Permission denied" in denied.stderr
