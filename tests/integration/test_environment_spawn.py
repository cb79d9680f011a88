"""Spawning in two software environments, and looking inside each session for the chosen one."""

from __future__ import annotations

import pwd
from pathlib import Path

import pytest
import requests

from tests.hubproc import REPO
from tests.integration.conftest import Hub, server_environment, server_python

pytestmark = pytest.mark.integration


def kernel_python(hub: Hub, session: requests.Session, user: str) -> str:
    """The Python the session's notebooks run on, as its own Jupyter server reports it."""
    token = hub.api(session, "POST", f"/users/{user}/tokens", json={"note": "env test"}).json()
    specs = requests.get(
        f"{hub.url}/user/{user}/api/kernelspecs",
        headers={"Authorization": f"token {token['token']}"},
        timeout=30,
    ).json()
    python: str = specs["kernelspecs"]["python3"]["spec"]["argv"][0]
    # "python" is the server's own Python: jupyter_client starts such a kernel with
    # sys.executable (the environment shares the session's kernel specs).
    if python == "python":
        python = server_python(user)
    return python


def spawn(hub: Hub, session: requests.Session, environment: str) -> None:
    response = hub.api(
        session,
        "POST",
        "/users/alice/server",
        json={"user_options": {"profile": "gpu-1", "environment": environment}},
    )
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(session, "alice")


def test_the_session_runs_in_the_chosen_environment(hub: Hub, clean: None) -> None:
    alice = hub.login("alice")
    form = alice.get(f"{hub.url}/hub/spawn").text
    for slug in ("session", "analysis", "demo-tools"):
        assert f'data-environment="{slug}"' in form

    spawn(hub, alice, "analysis")
    # Every session: the template notebooks in ~/templates and the shared data area in ~/shared.
    shipped = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    templates = Path("/home/alice/templates")
    assert sorted(p.name for p in templates.glob("*.ipynb")) == shipped
    assert templates.stat().st_uid == pwd.getpwnam("alice").pw_uid
    assert Path("/home/alice/shared").resolve() == Path("/srv/gpuportal-shared")
    env = server_environment("alice")
    assert env["VIRTUAL_ENV"] == "/opt/gpuportal/envs/analysis"
    assert "LOADEDMODULES" not in env
    assert kernel_python(hub, alice, "alice") == "/opt/gpuportal/envs/analysis/bin/python"
    hub.stop_server(alice, "alice")

    spawn(hub, alice, "demo-tools")
    env = server_environment("alice")
    assert env["LOADEDMODULES"] == "demo-tools/1.0"
    assert env["DEMO_TOOLS_HOME"] == "/opt/gpuportal/demo-tools"
    assert env["PATH"].startswith("/opt/gpuportal/demo-tools/bin:")
    assert env["VIRTUAL_ENV"] == "/opt/gpuportal/venv"  # modules go on top of the session venv
    hub.stop_server(alice, "alice")


def test_an_environment_the_profile_does_not_offer_is_a_400(hub: Hub, clean: None) -> None:
    alice = hub.login("alice")
    response = hub.api(
        alice,
        "POST",
        "/users/alice/server",
        json={"user_options": {"profile": "gpu-1", "environment": "nope"}},
    )
    assert response.status_code == 400
    assert "environment 'nope' is not offered with gpu-1" in response.json()["message"]
