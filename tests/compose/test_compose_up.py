"""docker-compose.yml brought up for real with podman (deploy/local/podman.sh: the image built
from a Debian 12 made by debootstrap, the stack with podman-compose), then used from this
machine as a login host would: alice logs in through the stack's hub, gets JupyterLab in a
Slurm job on a node container and runs a cell; a 2-node job runs across the node containers;
`down` leaves no container, volume, network or firewall rule of the stack behind. Each phase's
time is printed. Not in the lanes: make test runs it as a part of its own, after them
(tests/make_test.sh), since the stack's jobs run as the same users as the lanes' tests."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.hubproc import wait_for
from tests.kernels import run_cell

REPO = Path(__file__).resolve().parents[2]
PODMAN_SH = REPO / "deploy/local/podman.sh"
PROJECT = "gpuportal"
PORT = 8600  # the hub's port on this machine's loopback (the demo's 8000 may be taken)
URL = f"https://127.0.0.1:{PORT}"
SUBNET = "10.214.0"  # docker-compose.yml's network
JOBS = "/services/portal/api/jobs"
NODES = {"gpu01", "gpu02", "mig01"}
TIMES: dict[str, float] = {}


@contextmanager
def phase(name: str) -> Iterator[None]:
    started = time.monotonic()
    try:
        yield
    finally:
        TIMES[name] = time.monotonic() - started
        print(f"[compose] {name}: {TIMES[name]:.1f} s", flush=True)


def podman_sh(*args: str, timeout: float) -> None:
    env_port = {"PORTAL_COMPOSE_PORT": str(PORT)}
    result = subprocess.run(
        ["bash", str(PODMAN_SH), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env_port},
    )
    print(result.stdout + result.stderr, flush=True)
    assert result.returncode == 0, f"podman.sh {' '.join(args)}: {result.stderr}"


def podman(*args: str) -> str:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, check=True, timeout=120
    ).stdout


def in_hub(*command: str) -> str:
    return podman("exec", f"{PROJECT}_hub_1", *command)


class Client:
    """A browser's requests to the stack's hub: its CA (made in the hub's container), no
    proxies or CA bundles from the environment."""

    def __init__(self, ca: Path) -> None:
        self.ca = ca
        self.http = requests.Session()
        self.http.trust_env = False
        self.http.verify = str(ca)

    def login(self, user: str, password: str) -> None:
        self.http.get(f"{URL}/hub/login", timeout=30)
        response = self.http.post(
            f"{URL}/hub/login",
            data={"username": user, "password": password, "_xsrf": self.http.cookies["_xsrf"]},
            allow_redirects=False,
            timeout=60,
        )
        assert response.status_code == 302, f"login of {user}: {response.status_code}"
        self.http.headers["X-XSRFToken"] = self.http.cookies["_xsrf"]

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.http.request(method, f"{URL}/hub/api{path}", timeout=60, **kwargs)

    def token(self, user: str) -> str:
        response = self.api("POST", f"/users/{user}/tokens", json={"note": "compose test"})
        assert response.status_code == 201, response.text
        token: str = response.json()["token"]
        return token


def left_behind() -> list[str]:
    """What of the stack is still on this machine: containers, volumes, its network, firewall
    rules for its addresses, processes of its containers."""
    label = f"label=io.podman.compose.project={PROJECT}"
    left = podman("ps", "-a", "--filter", label, "--format", "container {{.Names}}").split("\n")
    left += podman("volume", "ls", "--filter", label, "--format", "volume {{.Name}}").split("\n")
    networks = podman("network", "ls", "--format", "{{.Name}}").split()
    left += [f"network {name}" for name in networks if name.startswith(PROJECT)]
    for table in ("nat", "filter"):
        rules = subprocess.run(["iptables", "-t", table, "-S"], capture_output=True, text=True)
        left += [f"iptables {rule}" for rule in rules.stdout.splitlines() if SUBNET in rule]
    conmon = subprocess.run(["pgrep", "-a", "conmon"], capture_output=True, text=True).stdout
    # Its containers' conmon, named PROJECT_SERVICE_N; not a session's job container (gpuportal-
    # job-N, rootless, as alice), which make test may run meanwhile.
    left += [f"process {line}" for line in conmon.splitlines() if f"-n {PROJECT}_" in line]
    return [line for line in left if line.strip()]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with phase("the image (podman.sh image: built again only when the repository changed)"):
        podman_sh("image", timeout=1800)
    try:
        with phase("up: podman-compose up until every health check passes"):
            podman_sh("up", timeout=900)
        ca = tmp_path_factory.mktemp("compose") / "ca.pem"
        ca.write_text(in_hub("cat", "/var/lib/portal-local/demo-ca/ca.pem"))
        yield ca
    finally:
        with phase("down"):
            podman_sh("down", timeout=300)
        print("[compose] in all: " + ", ".join(f"{s:.0f} s" for s in TIMES.values()), flush=True)


def test_a_session_and_a_two_node_job_in_the_compose_stack(stack: Path) -> None:
    alice = Client(stack)
    with phase("alice logs in and gets JupyterLab in a Slurm job"):
        alice.login("alice", "alice-demo")
        response = alice.api(
            "POST", "/users/alice/server", json={"user_options": {"profile": "gpu-1"}}
        )
        assert response.status_code in (201, 202), response.text

        def ready() -> bool:
            server = alice.api("GET", "/users/alice").json().get("servers", {}).get("")
            return bool(server and server.get("ready"))

        wait_for(ready, 180, "alice's JupyterLab")
    job_line = in_hub("squeue", "-h", "-u", "alice", "-o", "%i %N %T").split()
    assert job_line[2] == "RUNNING" and job_line[1] in NODES, job_line

    with phase("a cell runs in it"):
        token = alice.token("alice")
        printed = run_cell(
            URL,
            "alice",
            token,
            "import os, socket\n"
            "print(socket.gethostname(), os.environ['SLURM_JOB_ID'], os.getuid())",
            ca=stack,
        )
    host, job_id, uid = printed.split()
    assert (host, job_id) == (job_line[1], job_line[0])
    assert uid == in_hub("id", "-u", "alice").strip()

    with phase("Stop ends the job"):
        stopped = alice.api("DELETE", "/users/alice/server")
        assert stopped.status_code in (202, 204), stopped.text
        wait_for(
            lambda: not in_hub("squeue", "-h", "-u", "alice").strip(), 60, "alice's job to end"
        )

    with phase("a 2-node job runs across the node containers"):
        headers = {"Authorization": f"token {token}"}
        body = {
            "name": "compose-nodes",
            "nodes": 2,
            "gpus_per_node": 1,
            "runtime": "00:05:00",
            "launcher": "srun",
            "command": "printenv SLURMD_NODENAME",
        }
        http = alice.http
        submitted = http.post(f"{URL}{JOBS}", headers=headers, json=body, timeout=60)
        assert submitted.status_code == 201, submitted.text
        job = submitted.json()["id"]

        def ended() -> dict[str, Any] | None:
            response = http.get(f"{URL}{JOBS}/{job}", headers=headers, timeout=60)
            detail: dict[str, Any] = response.json()
            return detail if detail["state"] in {"COMPLETED", "FAILED", "CANCELLED"} else None

        detail = wait_for(ended, 180, "the 2-node job")
    assert detail["state"] == "COMPLETED", detail
    assert sorted(detail["output_tail"]) == ["gpu01", "gpu02"], detail["output_tail"]


def test_down_leaves_nothing_behind(stack: Path) -> None:
    """Runs after the session test: `down` itself is the fixture's teardown, so this test
    takes the stack down early and looks."""
    with phase("down"):
        podman_sh("down", timeout=300)
    assert left_behind() == []
