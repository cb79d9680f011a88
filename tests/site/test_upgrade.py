"""Upgrading a site with the role (issue 57, item 4): the role and product of an earlier release
(BASE, a commit of this repository that has the role) installed on a site of roots from nothing,
used (a running session, a job's record, its profiles in the portal's store), then the role
and product of this checkout run over it. Everything the site had is kept: the session runs on
in the same Slurm job and its JupyterLab answers, the job's record and the profiles are there,
the portal's database is at this checkout's newest migration, and the hub was restarted (when
the product changed) by systemd, as a site's upgrade does it.

BASE: PORTAL_SITE_BASE, or the commit that brought the role. Its JupyterLab extension is taken
built from this checkout (the base's sources are not built here).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import user_jobs
from tests.site.conftest import (
    CA,
    HUB,
    LOGS,
    NODES,
    REPO,
    on_host,
    playbook,
    preflight_summary,
    recap,
    running_nodes,
    sign_in,
    step,
)
from tests.smoke import api_session, start_one_gpu_session, stop_until_gone, two_node_job

BASE = os.environ.get("PORTAL_SITE_BASE", "61512f762f4baede23f5a177b580f284f9797a17")
LAB_EXTENSION = Path("gpuportal_session/jupyter_data")
PORTAL = f"{HUB}/services/portal"


@pytest.fixture(scope="module")
def base_checkout() -> Path:
    """The base release's files (git archive), with this checkout's built lab extension."""
    known = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{BASE}^{{commit}}"])
    assert known.returncode == 0, f"{BASE} is not in this clone's history (a shallow clone?)"
    if subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", BASE, "HEAD"]).returncode == 0:
        pytest.skip(f"this checkout is the base release {BASE[:12]}: nothing to upgrade to")
    folder = LOGS.parent / "base"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", BASE], capture_output=True, check=True, timeout=120
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    shutil.copytree(REPO / LAB_EXTENSION, folder / LAB_EXTENSION, dirs_exist_ok=True)
    return folder


def hub_pid() -> str:
    return on_host("site-login", "systemctl", "show", "-p", "MainPID", "--value", "gpuportal-hub")


def newest_migration() -> str:
    names = sorted(p.name for p in (REPO / "portal" / "migrations" / "versions").glob("0*.py"))
    return names[-1].split("_")[0]


def test_an_upgrade_keeps_the_sessions_the_records_and_the_profiles(
    site: None, user: str, page: Any, base_checkout: Path
) -> None:
    with step(f"the base release's role ({BASE[:12]}) from nothing"):
        output = playbook("base-run.log", collection=base_checkout / "deploy" / "ansible")
    preflight_summary(output)

    # The site in use: a session running, a job ended with its record, the profiles.
    sign_in(page, user, HUB)
    start_one_gpu_session(page, HUB, user)
    [session_job] = user_jobs(user, "%i", "--states=RUNNING")
    api = api_session(page, HUB, user, verify=str(CA))
    job = two_node_job(api, HUB, "before-the-upgrade")
    assert job["state"] == "COMPLETED", job
    profiles = api.get(f"{PORTAL}/api/profiles", timeout=30).json()
    assert profiles, "the base release offers no profile"
    before = hub_pid()

    with step("this checkout's role over it (the upgrade)"):
        output = playbook("upgrade-run.log")
    print(f"[site] preflight after the upgrade: {preflight_summary(output)}")
    migrated = re.search(r"portal database: migrated to (\w+)", output)
    assert migrated and migrated.group(1) == newest_migration(), output[-4000:]
    product_changed = re.search(
        r"TASK \[[^]]*Install this wheel's build of the product\][^\n]*\n(?:[^\n]*\n)*?"
        r"changed: \[site-login\]",
        output,
    )
    if product_changed:
        assert hub_pid() != before, "the product changed and the hub was not restarted"
    assert recap(output)["site-login"]["failed"] == 0

    # What the site had is there.
    assert f"{session_job}|RUNNING" in user_jobs(user)
    page.goto(f"{HUB}/user/{user}/lab")
    page.wait_for_selector(".jp-LabShell")
    server = api.get(f"{HUB}/hub/api/users/{user}", timeout=30).json()["servers"][""]
    assert server["ready"], server
    kept = api.get(f"{PORTAL}/api/jobs/{job['id']}", timeout=30)
    assert kept.status_code == 200 and kept.json()["state"] == "COMPLETED", kept.text
    assert api.get(f"{PORTAL}/api/profiles", timeout=30).json() == profiles

    with step("Stop, after the upgrade, ends the session's job"):
        stop_until_gone(api, HUB, user)
    assert not set(running_nodes(user)) & set(NODES)
