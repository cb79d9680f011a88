"""What bob can learn from the processes and files the portal makes as him (issue 10, 1 and 7).

bob turns his job's output into a FIFO, so that the portal's `tail` (run as bob) blocks, and
reads its environment from /proc while it waits. alice tries to read bob's job output.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.integration.conftest import Hub, cancel_user_jobs
from tests.integration.jobs import install_job_files
from tests.integration.test_multinode_jobs import JOBS, run_to_the_end

pytestmark = pytest.mark.integration

SECRET_NAMES = ("JUPYTERHUB_API_TOKEN", "PORTAL_DATABASE_URL", "CONFIGPROXY_AUTH_TOKEN", "JPY_")


def as_bob(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sudo", "-u", "bob", *argv], capture_output=True, text=True, check=check, timeout=30
    )


@pytest.fixture
def bob_job(hub: Hub) -> Iterator[tuple[str, dict[str, object], Path]]:
    """bob's token, one finished job of his, and its output file."""
    install_job_files("bob")
    cancel_user_jobs("bob")
    session = hub.login("bob")
    token = hub.api(session, "POST", "/users/bob/tokens", json={"note": "security"}).json()["token"]
    _, detail = run_to_the_end(
        hub,
        token,
        {
            "name": "private",
            "launcher": "srun",
            "nodes": 1,
            "gpus_per_node": 1,
            "runtime": "00:05:00",
            "script": "/home/bob/jobs/where.sh",
        },
    )
    output = Path(f"/home/bob/.gpuportal-jobs/private-{detail['slurm_job_id']}.out")
    yield token, detail, output
    cancel_user_jobs("bob")


def _bobs_tail_environment(deadline: float) -> dict[str, str]:
    """The environment of the `tail` the portal runs as bob, read as bob would."""
    while time.monotonic() < deadline:
        pids = as_bob("pgrep", "-u", "bob", "-x", "tail", check=False).stdout.split()
        for pid in pids:
            raw = as_bob("cat", f"/proc/{pid}/environ", check=False).stdout
            if raw:
                return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
        time.sleep(0.1)
    raise AssertionError("the portal never ran tail on bob's FIFO")


def test_a_fifo_as_job_output_shows_bob_no_secret_of_the_portal(
    hub: Hub, bob_job: tuple[str, dict[str, object], Path]
) -> None:
    token, detail, output = bob_job
    as_bob("rm", "-f", str(output))
    as_bob("mkfifo", str(output))
    answers: list[requests.Response] = []
    reader = threading.Thread(
        target=lambda: answers.append(
            requests.get(
                f"{hub.url}{JOBS}/{detail['id']}",
                headers={"Authorization": f"token {token}"},
                timeout=60,
            )
        )
    )
    reader.start()
    try:
        env = _bobs_tail_environment(time.monotonic() + 20)
    finally:
        # Open the FIFO for writing: the blocked tail reads a line and the request ends.
        as_bob("sh", "-c", f"echo released > {output}", check=False)
        reader.join(60)
    portal_token = (hub.state / "portal-api-token").read_text().strip()
    leaked = [name for name in env if name.startswith(SECRET_NAMES)]
    assert not leaked, f"bob read {leaked} from the portal's tail"
    assert portal_token not in env.values()
    assert set(env) <= {
        "PATH", "LANG", "LC_ALL", "TZ", "SLURM_CONF", "HOME", "USER", "LOGNAME", "SHELL",
        "MAIL", "TERM", "SUDO_COMMAND", "SUDO_USER", "SUDO_UID", "SUDO_GID",
        "SUDO_HOME",  # sudo 1.9.16 (Debian 13): the service account's home, no secret
    }, sorted(env)  # fmt: skip
    assert answers and answers[0].status_code == 200, answers


def test_job_output_is_bobs_alone(bob_job: tuple[str, dict[str, object], Path]) -> None:
    _, _, output = bob_job
    assert stat.S_IMODE(os.stat(output).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(output.parent).st_mode) == 0o700
    alice = subprocess.run(
        ["sudo", "-u", "alice", "cat", str(output)], capture_output=True, text=True, timeout=30
    )
    assert alice.returncode != 0 and "Permission denied" in alice.stderr
