"""What the Ansible role's tests share (tests/site): a site made of roots from nothing, the
role's runs, and a user of their own who signs in through the site's single sign-on.

The site: three Debian 12 roots made by debootstrap and booted with systemd
(deploy/local/site_root.sh) stand in for a site's login host and two GPU nodes, joined to the
local cluster's Slurm, LDAP, identity provider and certificate authority as a site's hosts are
to its own. Each test module gets a site of its own, from nothing; the roots are removed after
a pass, and stay, powered off, for reading after a failure.

The user, site001, is made for these tests in LDAP, Linux and Slurm (bench/cluster_load.py) with
a TOTP key registered at the provider (deploy/local/sso_register.py), and all of it removed
afterwards: the test lanes, which run meanwhile on the same Slurm, directory and provider, never
meet it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.cluster_load import bench_users, password_of
from tests.integration.conftest import user_jobs
from tests.integration.second_lane import turn
from tests.smoke import chromium_page, timed
from tests.sso import PERSISTENT_SESSIONS, PROVIDER, TOTP_KEYS, sign_in_in_browser

REPO = Path(__file__).resolve().parents[2]
SITE_ROOT = REPO / "deploy" / "local" / "site_root.sh"
HOSTS = ("site-login", "site-gpu01", "site-gpu02")
NODES = ["site-gpu01", "site-gpu02"]
ANSIBLE = Path(os.environ.get("PORTAL_ANSIBLE_VENV", "/opt/gpuportal/ansible"))
INVENTORY = Path(__file__).with_name("inventory.yml")
STATE = Path(os.environ.get("PORTAL_STATE", "/var/lib/portal-local"))
LOGS = STATE / "site" / "logs"
CA = STATE / "demo-ca" / "ca.pem"
# By address: the demo CA's certificate for the login host names it, and the provider sends the
# browser back to it (deploy/local/sso.sh registers both); site_root.sh's names are in the
# roots' /etc/hosts, not this machine's. HUB: the hub's own HTTPS; FRONT: nginx in front of it
# (tests/site/nginx.yml).
HUB = "https://10.213.0.21:8000"
FRONT = "https://10.213.0.21"
NGINX = f"@{Path(__file__).with_name('nginx.yml')}"

step = timed("site")


def site_root(host: str, *args: str, timeout: int = 900) -> None:
    done = subprocess.run(
        ["bash", str(SITE_ROOT), host, *args], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"site_root.sh {host} {' '.join(args)}:\n{done.stdout}{done.stderr}"
    )


@contextmanager
def on_the_cluster(*, rejoin: bool = True) -> Iterator[None]:
    """The test lanes' shared turn (tests/integration/second_lane.turn), held while a step of
    the site's runs: no test restarts slurmctld meanwhile. A restart before it (a lane growing
    or shrinking its partition) forgot the partition `site` and may have forgotten the site's
    dynamic nodes: they are put back first (site_root.sh rejoin)."""
    with turn(exclusive=False):
        if rejoin:
            for node in NODES:
                site_root(node, "rejoin", timeout=180)
        yield


def on_host(host: str, *command: str) -> str:
    """What COMMAND prints, run as root on one of the site's hosts."""
    done = subprocess.run(
        ["bash", str(SITE_ROOT), host, "run", *command], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{host}: {' '.join(command)}: {done.stderr}"
    return done.stdout


def playbook(
    log: str,
    *extra: str,
    collection: Path = REPO / "deploy" / "ansible",
    succeeds: bool = True,
) -> str:
    """ansible-playbook of the collection's playbook `site` (of this checkout, or another's) on
    the inventory, each EXTRA an -e over it (`@FILE`, `NAME=VALUE`); its output, also kept in
    LOGS. succeeds=False: the run must fail."""
    LOGS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{ANSIBLE}/bin:{os.environ['PATH']}", "ANSIBLE_NOCOLOR": "1"}
    more = [argument for value in extra for argument in ("-e", value)]
    command = [str(ANSIBLE / "bin" / "ansible-playbook"), "-i", str(INVENTORY), *more]
    run = subprocess.run(
        [*command, "gpuportal.site.site"],
        cwd=collection,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    (LOGS / log).write_text(run.stdout + run.stderr)
    said = f"the role {'failed' if succeeds else 'passed'} ({LOGS / log}):\n"
    assert (run.returncode == 0) == succeeds, f"{said}{run.stdout[-6000:]}{run.stderr}"
    return run.stdout


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP's counts per host: {"site-login": {"ok": 35, "changed": 0, ...}}."""
    counts: dict[str, dict[str, int]] = {}
    for host, fields in re.findall(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$", output, re.MULTILINE):
        counts[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", fields)}
    return counts


def preflight_summary(output: str) -> str:
    summary = re.search(r"\d+ checks: (\d+) failed, \d+ warnings", output)
    assert summary and summary.group(1) == "0", output[-4000:]
    return summary.group(0)


@pytest.fixture(scope="session")
def user() -> Iterator[str]:
    """site001: in LDAP (group ds), Linux and Slurm, with a TOTP key at the provider."""
    with bench_users(1, prefix="site", first_uid=21001) as [name]:
        try:
            subprocess.run(
                [sys.executable, str(REPO / "deploy/local/sso_register.py"), "--portal",
                 f"{PROVIDER}/", "--ca", str(CA), "--keys", str(TOTP_KEYS),
                 f"{name}:{password_of(name)}"],
                check=True, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            yield name
        finally:
            for left in (TOTP_KEYS / name, TOTP_KEYS / f".{name}.last-step"):
                left.unlink(missing_ok=True)
            record = PERSISTENT_SESSIONS / hashlib.md5(name.encode()).hexdigest()
            record.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def site(user: str, request: pytest.FixtureRequest) -> Iterator[None]:
    for host in HOSTS:  # a run interrupted before its end left them running
        site_root(host, "down", timeout=120)
    # The site's shared /home (its NFS), empty as a new site's.
    shutil.rmtree(STATE / "site" / "home", ignore_errors=True)
    failed_before = request.session.testsfailed
    try:
        with step("three Debian 12 roots from nothing, booted with systemd (debootstrap)"):
            made = [
                subprocess.Popen(
                    ["bash", str(SITE_ROOT), host, "new"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                for host in HOSTS
            ]
            for host, process in zip(HOSTS, made, strict=True):
                output, _ = process.communicate(timeout=900)
                assert process.returncode == 0, f"site_root.sh {host} new:\n{output}"
        with (
            step("joined to the cluster as a site's hosts are (munge, Slurm, its users)"),
            on_the_cluster(rejoin=False),
        ):
            for host in HOSTS:
                site_root(host, "join", user)
        subprocess.run(
            ["bash", str(REPO / "deploy" / "local" / "https.sh"), "issue", "site-login",
             str(STATE / "site" / "tls"), "root", "DNS:site-login,IP:10.213.0.21"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        yield
    finally:
        for host in HOSTS:
            site_root(host, "down", timeout=120)
        if request.session.testsfailed == failed_before:
            for host in HOSTS:
                site_root(host, "remove", timeout=300)
            shutil.rmtree(STATE / "site" / "home", ignore_errors=True)


@pytest.fixture(autouse=True)
def cluster_turn(site: None) -> Iterator[None]:
    """Each test on the cluster in a turn of its own (on_the_cluster)."""
    with on_the_cluster():
        yield


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def sign_in(page: Any, user: str, hub: str) -> None:
    """Single sign-on with the password and a TOTP code, back at the hub."""
    sign_in_in_browser(page, hub, user, password=password_of(user))
    page.wait_for_url(f"{hub}/hub/**")


def running_nodes(user: str) -> list[str]:
    return user_jobs(user, "%N", "--states=RUNNING")
