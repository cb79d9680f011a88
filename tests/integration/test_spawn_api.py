"""The spawn path through the real hub: bad input, the port callback, and failing jobs."""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.integration.conftest import Hub, user_jobs, wait_for
from tests.own_processes import HERE

pytestmark = pytest.mark.integration

BAD_OPTIONS = [
    ({"profile": "gpu-9"}, "unknown profile 'gpu-9'; choose one of: gpu-1, gpu-2, gpu-4"),
    ({"profile": "gpu-1", "gpus": 8}, "unknown option(s) gpus"),
    ({"profile": "gpu-1", "runtime": "30:00:00"}, "over the maximum of 24:00:00"),
    ({"profile": "gpu-1", "runtime": "eight hours"}, "form HH:MM:SS"),
    ({"profile": "gpu-1", "partition": "debug"}, "unknown option(s) partition"),
    ({"profile": "gpu-1", "runtime": "01:00:00\n#SBATCH --gres=gpu:8"}, "form HH:MM:SS"),
    ({"profile": "gpu-1\n#SBATCH --uid=0"}, "unknown profile"),
]


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS)
def test_bad_api_request_is_a_400_and_submits_nothing(hub: Hub, clean: None, options, message):
    alice = hub.login("alice")
    response = hub.api(alice, "POST", "/users/alice/server", json={"user_options": options})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == response.json()["message"].strip()
    assert message in response.json()["message"]
    assert "SpawnException(" not in response.json()["message"]
    assert user_jobs("alice") == []
    assert hub.server(alice, "alice") is None


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS[:4])
def test_tampered_form_shows_the_error_on_the_form(hub: Hub, clean: None, options, message):
    alice = hub.login("alice")
    form = {key: str(value) for key, value in options.items()}
    form["_xsrf"] = alice.cookies.get("_xsrf", "")
    response = alice.post(f"{hub.url}/hub/spawn", data=form, timeout=60)
    assert response.status_code == 400
    assert message.replace("'", "&#39;") in response.text or message in response.text
    assert "SpawnException(" not in response.text  # the sentence only, no exception repr
    assert 'name="profile"' in response.text  # the form is shown again to fix the choice
    assert user_jobs("alice") == []


def test_wrong_password_shows_the_login_error_and_the_hub_stays_up(hub: Hub):
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=10)
    response = session.post(
        f"{hub.url}/hub/login",
        data={"username": "alice", "password": "nope", "_xsrf": session.cookies.get("_xsrf", "")},
        timeout=30,
    )
    assert response.status_code == 403
    assert "Invalid username or password" in response.text
    assert requests.get(f"{hub.url}/hub/api", timeout=5).status_code == 200
    hub.login("alice")  # and the right password still works


def test_a_removed_users_cookie_finds_nobody(hub: Hub):
    """The hub finds a request's user by the id its cookie names (gpuportal_spawner.user_lookup):
    once an admin removes the user, that cookie is nobody's, and a new login makes them anew."""
    bob = hub.login("bob")
    assert hub.api(bob, "GET", "/user").json()["name"] == "bob"
    assert hub.api(bob, "GET", "/users/bob").json()["name"] == "bob"
    carol = hub.login("carol")
    assert hub.api(carol, "DELETE", "/users/bob").status_code == 204
    assert hub.api(bob, "GET", "/user").status_code == 403
    home = bob.get(f"{hub.url}/hub/home", allow_redirects=False, timeout=60)
    assert home.status_code == 302 and "/hub/login" in home.headers["Location"]
    assert hub.api(carol, "GET", "/users/bob").status_code == 404
    assert hub.api(hub.login("bob"), "GET", "/user").json()["name"] == "bob"


def _job_token(user: str) -> str:
    """The API token of the user's running JupyterLab, read from its process environment."""
    out = subprocess.run(
        ["pgrep", *HERE, "-u", user, "-f", "jupyterhub-singleuser"], capture_output=True, text=True
    ).stdout.split()
    assert out, f"no JupyterLab process of {user}"
    environ = Path(f"/proc/{out[0]}/environ").read_bytes().split(b"\0")
    values = dict(item.decode().split("=", 1) for item in environ if b"=" in item)
    return values["JUPYTERHUB_API_TOKEN"]


def test_port_callback_takes_only_the_port(hub: Hub, clean: None):
    alice = hub.login("alice")
    started = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert started.status_code in (201, 202), started.text
    server = hub.wait_ready(alice, "alice")
    token = _job_token("alice")
    marker = Path("/tmp/portal-port-callback-pwned")
    marker.unlink(missing_ok=True)
    headers = {"Authorization": f"token {token}"}
    attack = {"port": 1, "exec_prefix": f"touch {marker};", "batch_query_cmd": f"touch {marker}"}
    response = requests.post(
        f"{hub.url}/hub/api/batchspawner", json=attack, headers=headers, timeout=10
    )
    assert response.status_code == 400
    assert 'exactly {"port": N}' in response.json()["message"]
    # Stock batchspawner would now run the injected command on the next poll; give it the chance.
    response = hub.api(
        alice, "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
    )
    assert response.status_code == 400 and "already running" in response.text
    assert not marker.exists()
    assert hub.server(alice, "alice")["url"] == server["url"]
    # A token that belongs to no server gets nothing either.
    hub_token = hub.api(alice, "POST", "/users/alice/tokens", json={"note": "t"}).json()["token"]
    response = requests.post(
        f"{hub.url}/hub/api/batchspawner",
        json={"port": 9999},
        headers={"Authorization": f"token {hub_token}"},
        timeout=10,
    )
    assert response.status_code == 404


def test_job_dying_while_starting_fails_fast_with_its_log(hub: Hub, clean: None):
    entry = pwd.getpwnam("bob")
    config_dir = Path(entry.pw_dir) / ".jupyter"
    config_dir.mkdir(exist_ok=True)
    config = config_dir / "jupyter_server_config.py"
    config.write_text('raise SystemExit("bob broke his jupyter config on purpose")\n')
    os.chown(config_dir, entry.pw_uid, entry.pw_gid)
    os.chown(config, entry.pw_uid, entry.pw_gid)
    try:
        bob = hub.login("bob")
        begun = time.monotonic()
        response = hub.api(
            bob, "POST", "/users/bob/server", json={"user_options": {"profile": "gpu-1"}}
        )
        if response.status_code == 202:  # still starting after the hub's slow_spawn_timeout
            wait_for(lambda: hub.server(bob, "bob") is None, 60, "the failed server to go")
            message = _last_progress_message(hub, bob)
        else:
            message = response.json()["message"]
        elapsed = time.monotonic() - begun
        assert elapsed < 30, f"took {elapsed:.0f} s (the start timeout is 300 s)"
        assert re.search(r"job \d+ failed while starting \(FAILED\)", message), message
        assert "bob broke his jupyter config on purpose" in message
        assert user_jobs("bob") == []
    finally:
        config.unlink()


def _last_progress_message(hub: Hub, session: requests.Session) -> str:
    # After a failure the spawner's exception stays readable through the progress stream.
    response = session.get(f"{hub.url}/hub/api/users/bob/server/progress", timeout=30, stream=True)
    text = response.raw.read(65536, decode_content=True).decode(errors="replace")
    return text
