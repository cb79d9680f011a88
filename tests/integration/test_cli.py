"""The `gpuportal` command line against the real hub, portal and Slurm (issue 13, 4)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuportal_cli.main import cli
from tests.hubproc import VENV_BIN, wait_for
from tests.integration.conftest import Hub, cancel_user_jobs

pytestmark = pytest.mark.integration


def token_of(hub: Hub, user: str) -> str:
    session = hub.login(user)
    answer = hub.api(session, "POST", f"/users/{user}/tokens", json={"note": "cli test"})
    token: str = answer.json()["token"]
    return token


def run(hub: Hub, token: str, *args: str) -> Result:
    # In-process: a CliError comes back as the result's exception (the installed command
    # prints it as "error: ..."; see the last test).
    return CliRunner().invoke(cli, ["--url", hub.url, "--token", token, *args])


@pytest.fixture
def alice(hub: Hub) -> Iterator[str]:
    cancel_user_jobs("alice")
    yield token_of(hub, "alice")
    cancel_user_jobs("alice")


def test_who_and_capacity(hub: Hub, clean: None, alice: str) -> None:
    assert run(hub, alice, "whoami").output == "alice, groups: ds\n"
    # Capacity is one look at the cluster shared for capacity_ttl (10 s) and says "as of" when:
    # the previous test's job may still be in the look that is current when this one starts.
    free = "Partition gpu: 4 of 4 a100 GPUs, 4 of 4 h100 GPUs free (as of "

    def free_shown() -> str:
        output = run(hub, alice, "capacity").output
        return output if free in output else ""

    shown = str(wait_for(free_shown, 15, free, step=1.0))
    assert "gpu-1" in shown and "starts now" in shown.lower()
    listed = json.loads(run(hub, alice, "--json", "profiles", "list").output)
    assert [p["slug"] for p in listed][:3] == ["gpu-1", "gpu-2", "gpu-4"]


def test_friendly_errors(hub: Hub, alice: str) -> None:
    from gpuportal_cli.client import CliError

    bad = run(hub, "not-a-token", "whoami")
    assert isinstance(bad.exception, CliError) and "does not accept this token" in str(
        bad.exception
    )
    away = CliRunner().invoke(cli, ["--url", "http://127.0.0.1:9", "--token", alice, "whoami"])
    assert "Cannot reach the hub at http://127.0.0.1:9" in str(away.exception)
    refused = run(hub, alice, "jobs", "submit", "--nodes", "0", "--command", "hostname")
    assert "nodes: Input should be greater than or equal to 1 (HTTP 422)" in str(refused.exception)
    # The launchers are the portal's registry: the command lists them and names none itself.
    launchers = run(hub, alice, "jobs", "launchers").output.splitlines()
    assert [line.split()[0] for line in launchers[1:]] == [
        "torchrun", "deepspeed", "horovod", "mpi", "notebook", "srun",
    ]  # fmt: skip
    unknown = run(hub, alice, "jobs", "submit", "--launcher", "pdsh", "--command", "hostname")
    assert "launcher: Input should be 'torchrun', 'deepspeed'" in str(unknown.exception)
    not_admin = run(hub, alice, "profiles", "set", "gpu-1", "--max-runtime", "12:00:00")
    assert "(HTTP 403)" in str(not_admin.exception)
    # A token narrowed to reading the user's name cannot read or act on their sessions.
    session = hub.login("alice")
    narrow = hub.api(
        session, "POST", "/users/alice/tokens", json={"scopes": ["read:users:name!user=alice"]}
    ).json()["token"]
    looked = run(hub, narrow, "session", "list")
    assert "lacks the read:servers scope for alice (HTTP 403)" in str(looked.exception)


def test_a_session_from_start_to_stop(hub: Hub, clean: None, alice: str) -> None:
    started = run(hub, alice, "session", "start", "--profile", "gpu-1", "--runtime", "01:00:00")
    assert started.exit_code == 0, started.output
    assert started.output.startswith(f"Ready: {hub.url}/user/alice/lab")
    cards: list[dict[str, Any]] = json.loads(run(hub, alice, "--json", "session", "list").output)
    assert cards[0]["state"] == "running" and cards[0]["node"] == "gpu01"
    extended = run(hub, alice, "session", "extend", "--add", "00:30:00")
    assert extended.exit_code == 0 and extended.output.startswith("Extended: 1 h "), extended.output
    assert run(hub, alice, "session", "stop").output == "Stopped.\n"


def test_submit_follow_list_and_remove_a_job(hub: Hub, alice: str) -> None:
    followed = run(
        hub,
        alice,
        "jobs",
        "submit",
        "--name",
        "cli-names",
        "--nodes",
        "2",
        "--command",
        "printenv SLURMD_NODENAME",
        "--follow",
    )
    assert followed.exit_code == 0, followed.output
    assert sorted(line for line in followed.output.splitlines() if line.startswith("gpu")) == [
        "gpu01",
        "gpu02",
    ]
    listed = json.loads(run(hub, alice, "--json", "jobs", "list", "-q", "cli-names").output)
    assert [(j["name"], j["state"]) for j in listed] == [("cli-names", "COMPLETED")]
    shown = run(hub, alice, "jobs", "show", str(listed[0]["id"])).output
    assert "state: COMPLETED" in shown and "exit code: 0" in shown
    assert run(hub, alice, "jobs", "remove", str(listed[0]["id"])).output.endswith("removed.\n")


def test_the_installed_command_and_its_completion(alice: str) -> None:
    helped = subprocess.run([str(VENV_BIN / "gpuportal"), "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "session" in helped.stdout and "jobs" in helped.stdout
    completion = subprocess.run(
        [str(VENV_BIN / "gpuportal")],
        env={"_GPUPORTAL_COMPLETE": "bash_source", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert "complete -o nosort -F" in completion.stdout
    failed = subprocess.run(
        [str(VENV_BIN / "gpuportal"), "--token", "x", "--url", "http://127.0.0.1:9", "whoami"],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1 and failed.stderr.startswith("error: Cannot reach the hub")
    assert "Traceback" not in failed.stderr
