"""`gpuportal-admin preflight` on the real local cluster (issue 33, 3): all pass on the tests'
hub, and each fault made on purpose is named on a line of its own with its fix: munged stopped,
a node whose link to the hub is cut, a sudo rule missing and one beyond it, a profile naming a
partition that does not exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.hubproc import REPO, SERVICE_USER, VENV_BIN, Hub, own_state, state_dir

pytestmark = pytest.mark.integration

HOSTS_SH = REPO / "deploy" / "local" / "hosts.sh"
RULE = Path("/etc/sudoers.d/gpuportal")


def preflight(hub: Hub, **settings: str) -> tuple[int, dict[str, str]]:
    """Its exit status, and each check's line (with its fix) by the check's name."""
    env = {**os.environ, **hub.settings_env, **settings}
    result = subprocess.run(
        [str(VENV_BIN / "gpuportal-admin"), "preflight"],
        env=env, capture_output=True, text=True, timeout=300, cwd="/",
    )  # fmt: skip
    lines: dict[str, str] = {}
    name = ""
    for line in result.stdout.splitlines():
        found = re.match(r"^\s*(pass|warn|FAIL)\s+([^:]+):", line)
        if found:
            name = found[2]
            lines[name] = line
        elif line.strip().startswith("fix:") and name:
            lines[name] += "\n" + line
    assert re.search(r"\d+ checks: \d+ failed", result.stdout), result.stdout + result.stderr
    return result.returncode, lines


def failures(lines: dict[str, str]) -> dict[str, str]:
    return {name: line for name, line in lines.items() if line.lstrip().startswith("FAIL")}


# Alone: other tests and benches add sudo rules of their own for a while (stand-ins in front of
# Slurm, tests/hubproc.sudo_rule_for), which the preflight rightly names as beyond the rule.
@pytest.mark.whole_cluster
def test_the_tests_cluster_passes_every_check(hub: Hub) -> None:
    status, lines = preflight(hub)
    assert failures(lines) == {}
    assert status == 0
    for name in (
        "munge",
        "sudo rule",
        "LDAP",
        "portal database",
        "Slurm operator",
        "hub API from gpu01",
        "hub API from gpu02",
        "session environment on gpu01",
        "public certificate",
    ):
        assert name in lines, lines


@pytest.mark.whole_cluster  # as above
def test_a_profile_naming_a_partition_that_does_not_exist(hub: Hub) -> None:
    """A portal database of its own (the service account's), with one profile on `nope`."""
    state = state_dir("preflight")
    own_state(state)
    code = f"""
from gpuportal_portal import crud
from gpuportal_portal.db import Database, upgrade
url = "sqlite:///{state}/portal.db"
upgrade(url)
with Database(url).sessions() as session:
    crud.seed_defaults(session, partition="gpu")
    values = crud.editable_values(crud.get_profile(session, slug="gpu-1"))
    values.update(slug="lost", title="Lost", partition="nope")
    crud.create_profile(session, values=values, actor="test")
"""
    subprocess.run(
        ["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", "--init-groups",
         str(VENV_BIN / "python"), "-c", code],
        check=True, capture_output=True, timeout=60, cwd="/",
    )  # fmt: skip
    status, lines = preflight(hub, PORTAL_HUB_STATE=str(state))
    assert status == 1
    assert set(failures(lines)) == {"profile lost"}, failures(lines)
    # The known ones: gpu, and whatever else runs beside this test then (the second lane's
    # partition, a bench's).
    lost = lines["profile lost"]
    said = re.search(r"no partition 'nope' on the cluster; known: ([\w, -]+)", lost)
    assert said and "gpu" in said.group(1).split(", "), lost
    assert "admin page" in lines["profile lost"]
    shutil.rmtree(state)


@contextmanager
def sudo_rule_changed() -> Iterator[None]:
    """The installed rule without its scancel line, and a rule beyond it in a file of its own."""
    kept = RULE.read_text()
    extra = Path("/etc/sudoers.d/gpuportal-extra")
    try:
        RULE.write_text("".join(x for x in kept.splitlines(True) if "/scancel " not in x))
        extra.write_text(f"{SERVICE_USER} ALL = (root) NOPASSWD: /usr/bin/id\n")
        extra.chmod(0o440)
        yield
    finally:
        extra.unlink(missing_ok=True)
        RULE.write_text(kept)


@pytest.mark.whole_cluster  # the rule is both lanes' hubs' (scancel for every stop)
def test_a_sudo_rule_missing_and_one_beyond(hub: Hub) -> None:
    with sudo_rule_changed():
        status, lines = preflight(hub)
    assert status == 1
    assert set(failures(lines)) == {"sudo rule"}, failures(lines)
    assert "missing: /usr/bin/scancel" in lines["sudo rule"]
    assert "beyond the rule: (root) /usr/bin/id" in lines["sudo rule"]
    assert "gpuportal-admin sudoers --install" in lines["sudo rule"]


@pytest.mark.whole_cluster  # munged is both lanes'
def test_munged_stopped(hub: Hub) -> None:
    pid = int(Path("/run/munge/munged.pid").read_text())
    os.kill(pid, 15)
    try:
        status, lines = preflight(hub)
    finally:
        subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True, timeout=30)
    assert status == 1
    assert "munge" in failures(lines), lines
    assert "start munged" in lines["munge"]


@pytest.mark.whole_cluster  # gpu02 serves both lanes' sessions
def test_a_node_whose_link_to_the_hub_is_cut(hub: Hub) -> None:
    subprocess.run(["bash", str(HOSTS_SH), "cut", "gpu02", "hub"], check=True, timeout=30)
    try:
        status, lines = preflight(hub)
    finally:
        subprocess.run(["bash", str(HOSTS_SH), "mend", "gpu02", "hub"], check=True, timeout=30)
    assert status == 1
    named = failures(lines)
    assert named and all("gpu02" in name for name in named), named
    assert "hub API from gpu01" in lines and "FAIL" not in lines["hub API from gpu01"]
    assert any("reach" in line and "hub" in line for line in named.values()), named
