"""The Ansible role (deploy/ansible, `gpuportal.site.portal`) as a site runs it, proven from
nothing: three Debian 12 roots made by debootstrap and booted with systemd
(deploy/local/site_root.sh) stand in for a site's login host and two GPU nodes, joined to the
local cluster's Slurm, LDAP and certificate authority as a site's hosts are to its own. Then:

1. the role's run, which ends with the preflight, all of it passing;
2. a second run, which changes nothing (`changed=0` on every host);
3. the user's smoke on the hub the role installed: sign in with the LDAP password, a 1-GPU
   session to JupyterLab's file browser, a 2-node job across the two nodes to its end, Stop.

Its user is site001, made for it in LDAP, Linux and Slurm and removed afterwards
(bench/cluster_load.py), apart from the test lanes' users, which run meanwhile on the same
Slurm. tests/site.sh runs it (make test, beside the lanes) with PORTAL_SITE_TEST=1. The roots
are removed after a pass; after a failure they stay for reading, powered off.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.cluster_load import bench_users, password_of
from tests.smoke import (
    api_session,
    chromium_page,
    start_one_gpu_session,
    timed,
    two_nodes_then_stop,
)

REPO = Path(__file__).resolve().parents[2]
SITE_ROOT = REPO / "deploy" / "local" / "site_root.sh"
HOSTS = ("site-login", "site-gpu01", "site-gpu02")
ANSIBLE = Path(os.environ.get("PORTAL_ANSIBLE_VENV", "/opt/gpuportal/ansible"))
INVENTORY = Path(__file__).with_name("inventory.yml")
STATE = Path(os.environ.get("PORTAL_STATE", "/var/lib/portal-local"))
LOGS = STATE / "site" / "logs"
# By address: the demo CA's certificate for the login host names it (site_root.sh's hosts are
# in the roots' /etc/hosts, not this machine's).
HUB = "https://10.213.0.21:8000"
CA = STATE / "demo-ca" / "ca.pem"


step = timed("site")


def site_root(host: str, *args: str, timeout: int = 900) -> None:
    done = subprocess.run(
        ["bash", str(SITE_ROOT), host, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"site_root.sh {host} {' '.join(args)}:\n{done.stdout}{done.stderr}"
    )


def playbook(log: str) -> str:
    """ansible-playbook of the collection's playbook on the inventory; its output (also in LOGS)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PATH": f"{ANSIBLE}/bin:{os.environ['PATH']}",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }
    run = subprocess.run(
        [str(ANSIBLE / "bin" / "ansible-playbook"), "-i", str(INVENTORY), "gpuportal.site.site"],
        cwd=REPO / "deploy" / "ansible",
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    (LOGS / log).write_text(run.stdout + run.stderr)
    assert run.returncode == 0, f"the role failed ({LOGS / log}):\n{run.stdout[-6000:]}{run.stderr}"
    return run.stdout


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP's counts per host: {"site-login": {"ok": 35, "changed": 0, ...}}."""
    counts: dict[str, dict[str, int]] = {}
    for host, fields in re.findall(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$", output, re.MULTILINE):
        counts[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", fields)}
    return counts


@pytest.fixture(scope="module")
def user() -> Iterator[str]:
    with bench_users(1, prefix="site", first_uid=21001) as [name]:
        yield name


@pytest.fixture(scope="module")
def site(user: str, request: pytest.FixtureRequest) -> Iterator[None]:
    for host in HOSTS:  # a run interrupted before its end left them running
        site_root(host, "down", timeout=120)
    # The site's shared /home (its NFS), empty as a new site's.
    shutil.rmtree(STATE / "site" / "home", ignore_errors=True)
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
    try:
        with step("joined to the cluster as a site's hosts are (munge, Slurm, its users)"):
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
        if request.session.testsfailed == 0:
            for host in HOSTS:
                site_root(host, "remove", timeout=300)
            shutil.rmtree(STATE / "site" / "home", ignore_errors=True)


def test_the_role_installs_the_portal_and_its_preflight_passes(site: None) -> None:
    with step("the role's first run, the preflight at its end"):
        output = playbook("first-run.log")
    summary = re.search(r"(\d+) checks: (\d+) failed, (\d+) warnings", output)
    assert summary and summary.group(2) == "0", output[-4000:]
    print(f"[site] preflight: {summary.group(0)}")
    counts = recap(output)
    assert set(counts) == set(HOSTS) and all(c["failed"] == 0 for c in counts.values()), counts


def test_a_second_run_changes_nothing(site: None) -> None:
    with step("the role's second run"):
        output = playbook("second-run.log")
    counts = recap(output)
    assert {host: c["changed"] for host, c in counts.items()} == dict.fromkeys(HOSTS, 0), output[
        -6000:
    ]


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def test_a_user_signs_in_starts_a_session_and_runs_a_two_node_job(
    site: None, user: str, page: Any
) -> None:
    with step("sign in with the LDAP password"):
        page.goto(f"{HUB}/hub/login")
        page.fill("#username_input", user)
        page.fill("#password_input", password_of(user))
        page.click("#login_submit")
        page.wait_for_url(f"{HUB}/hub/**")
    with step("Start with 1 GPU to JupyterLab's file browser, on a site node"):
        start_one_gpu_session(page, HUB, user)
    nodes = subprocess.run(
        ["squeue", "-h", "-u", user, "-t", "RUNNING", "-o", "%N"],
        capture_output=True, text=True, timeout=30,
    ).stdout.split()  # fmt: skip
    assert nodes and set(nodes) <= {"site-gpu01", "site-gpu02"}, nodes
    api = api_session(page, HUB, user, verify=str(CA))
    two_nodes_then_stop(api, HUB, user, ["site-gpu01", "site-gpu02"], step)
