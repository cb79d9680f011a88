"""Session fixtures for the real local cluster (Slurm, LDAP) and a JupyterHub of the tests' own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
TEST_USERS = {"alice": "alice-demo", "bob": "bob-demo", "carol": "carol-demo"}
HUB_PORT = int(os.environ.get("PORTAL_TEST_HUB_PORT", "8200"))


def _need(what: str, detail: str) -> None:
    """A missing service fails the run under CI and skips elsewhere."""
    message = f"{what} is not available: {detail} (make test starts it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def wait_for(
    predicate: Callable[[], object], timeout: float, what: str, step: float = 0.25
) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def squeue(*args: str) -> str:
    return subprocess.run(
        ["squeue", "--noheader", *args], capture_output=True, text=True, check=True, timeout=20
    ).stdout


def user_jobs(user: str, fmt: str = "%i|%T") -> list[str]:
    return [line for line in squeue(f"--user={user}", f"--format={fmt}").splitlines() if line]


def cancel_user_jobs(*users: str) -> None:
    for user in users:
        subprocess.run(["scancel", f"--user={user}"], check=False, timeout=20)
    wait_for(lambda: not any(user_jobs(u) for u in users), 30, f"jobs of {users} to end")


@pytest.fixture(scope="session")
def cluster() -> None:
    try:
        result = subprocess.run(
            ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        _need("Slurm", str(error))
    usable = {"idle", "mixed", "allocated"}
    if result.returncode != 0 or not usable & set(result.stdout.split()):
        _need("Slurm", result.stderr.strip() or result.stdout.strip())
    probe = subprocess.run(
        ["ldapwhoami", "-x", "-H", "ldap://127.0.0.1:3890"], capture_output=True, timeout=10
    )
    if probe.returncode != 0:
        _need("LDAP", probe.stderr.decode().strip())


class Hub:
    """A JupyterHub process with deploy/jupyterhub_config.py, on its own port and state dir."""

    def __init__(self, state: Path, port: int) -> None:
        self.state = state
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = state / "hub.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = dict(os.environ)
        env.update(
            PORTAL_HUB_STATE=str(self.state),
            PORTAL_HUB_PORT=str(self.port),
            PORTAL_SESSION_VENV=str(VENV_BIN.parent),
            PATH=f"{VENV_BIN}:{env.get('PATH', '')}",
        )
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "jupyterhub"), "-f", str(REPO / "deploy" / "jupyterhub_config.py")],
            cwd=self.state,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def up() -> bool:
            assert self.proc is not None and self.proc.poll() is None, self.log_tail()
            try:
                return requests.get(f"{self.url}/hub/api", timeout=2).status_code == 200
            except requests.RequestException:
                return False

        wait_for(up, 60, "the hub to answer")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def login(self, user: str, password: str | None = None) -> requests.Session:
        session = requests.Session()
        session.get(f"{self.url}/hub/login", timeout=10)
        response = session.post(
            f"{self.url}/hub/login",
            data={
                "username": user,
                "password": TEST_USERS[user] if password is None else password,
                "_xsrf": session.cookies.get("_xsrf", ""),
            },
            allow_redirects=False,
            timeout=30,
        )
        assert response.status_code == 302, f"login of {user} failed: {response.status_code}"
        session.headers["X-XSRFToken"] = session.cookies.get("_xsrf", "")
        return session

    def api(
        self, session: requests.Session, method: str, path: str, **kwargs: object
    ) -> requests.Response:
        return session.request(method, f"{self.url}/hub/api{path}", timeout=60, **kwargs)  # type: ignore[arg-type]

    def server(self, session: requests.Session, user: str) -> dict[str, object] | None:
        model = self.api(session, "GET", f"/users/{user}").json()
        return model.get("servers", {}).get("")

    def wait_ready(
        self, session: requests.Session, user: str, timeout: float = 120
    ) -> dict[str, object]:
        def ready() -> dict[str, object] | None:
            server = self.server(session, user)
            return server if server and server.get("ready") else None

        return wait_for(ready, timeout, f"{user}'s server to be ready")  # type: ignore[return-value]

    def stop_server(self, session: requests.Session, user: str) -> None:
        response = self.api(session, "DELETE", f"/users/{user}/server")
        assert response.status_code in (202, 204), response.text
        wait_for(lambda: self.server(session, user) is None, 60, f"{user}'s server to stop")


@pytest.fixture(scope="session")
def hub(cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    cancel_user_jobs(*TEST_USERS)
    state = tmp_path_factory.mktemp("hub")
    state.chmod(0o700)
    instance = Hub(state, HUB_PORT)
    instance.start()
    yield instance
    try:
        admin = instance.login("carol")
        for user in TEST_USERS:
            if instance.server(admin, user) is not None:
                instance.stop_server(admin, user)
    finally:
        instance.stop()
        cancel_user_jobs(*TEST_USERS)


@pytest.fixture
def clean(hub: Hub) -> Iterator[None]:
    """Every test starts and ends with no servers and no jobs for the demo users."""

    def reset() -> None:
        admin = hub.login("carol")
        for user in TEST_USERS:
            if hub.server(admin, user) is not None:
                hub.stop_server(admin, user)
        cancel_user_jobs(*TEST_USERS)

    reset()
    yield
    reset()
