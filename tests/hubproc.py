"""A JupyterHub process for tests and benchmarks: start, stop, restart, log in, spawn, wait."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ProtocolError
from urllib3.util.retry import Retry

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
HUB_CONFIG = REPO / "deploy" / "jupyterhub_config.py"
TEST_USERS = {"alice": "alice-demo", "bob": "bob-demo", "carol": "carol-demo"}
# The second lane's (tests/integration/second_lane.py), in the same roles: two data scientists
# of one team (vision) and an admin; deploy/local/users.tsv makes them.
SECOND_LANE_USERS = {"erin": "erin-test", "frank": "frank-test", "grace": "grace-test"}
PASSWORDS = {**TEST_USERS, **SECOND_LANE_USERS}


class AgainOnClosedConnection(Retry):
    """An idempotent request (GET, DELETE, ...) sent once more when the kept-alive connection it
    went on had been closed by the server, as a browser does; a timeout is not tried again. The
    proxy (Node's http server) closes a connection idle for 5 s, and a request sent just then
    meets a closed socket: the CI run of 41de29e lost a Stop's DELETE that way."""

    def increment(self, method=None, url=None, response=None, error=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        if error is not None and not isinstance(error, ProtocolError):
            raise error
        return super().increment(method, url, response, error, *args, **kwargs)


def browser_session() -> requests.Session:
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=AgainOnClosedConnection(total=1, status=0, redirect=None))
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


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


# The demo's HTTPS (deploy/local/https.sh): the hub's certificate, and the CA that signed it.
# This process's clients (requests, websockets, ssl) trust it through a bundle of the system's
# CAs and it, as a site's users trust the site's CA; Chromium has it in its own store.
LOCAL_STATE = Path(os.environ.get("PORTAL_STATE", "/var/lib/portal-local"))
HUB_TLS_CERT = LOCAL_STATE / "hub-tls" / "hub.crt"
DEMO_CA = LOCAL_STATE / "demo-ca" / "ca.pem"
_BUNDLE = LOCAL_STATE / "demo-ca" / "bundle.pem"
if _BUNDLE.exists():
    for _name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "WEBSOCKET_CLIENT_CA_BUNDLE"):
        os.environ[_name] = str(_BUNDLE)  # a superset of the system's: set, not defaulted
    # Playwright's own requests (APIRequestContext) go through its Node.js driver, not Chromium.
    os.environ["NODE_EXTRA_CA_CERTS"] = str(DEMO_CA)

# The account the hub runs as (install.sh makes it, with its sudo rule): never root.
SERVICE_USER = os.environ.get("PORTAL_SERVICE_USER", "gpuportal")


def own_state(state: Path) -> None:
    """The hub's folder belongs to the service account, 0700, and the account can reach it
    (a folder under pytest's own 0700 temporary root cannot be)."""
    account = pwd.getpwnam(SERVICE_USER)
    for path in (state, *state.rglob("*")):
        os.lchown(path, account.pw_uid, account.pw_gid)
    state.chmod(0o700)
    reach = subprocess.run(
        ["runuser", "-u", SERVICE_USER, "--", "test", "-w", str(state)], capture_output=True
    )
    assert reach.returncode == 0, f"{SERVICE_USER} cannot use {state}: put it under /tmp"


def state_dir(prefix: str = "hub") -> Path:
    """A new folder for a hub's state that the service account can reach."""
    return Path(tempfile.mkdtemp(prefix=f"gpuportal-test-{prefix}-"))


class Hub:
    """A JupyterHub process with deploy/jupyterhub_config.py, on its own port and state dir."""

    def __init__(
        self,
        state: Path,
        port: int,
        config: Path = HUB_CONFIG,
        env: dict[str, str] | None = None,
        public_tls: bool | None = None,
    ) -> None:
        self.config = config
        self.extra_env = env or {}  # over the defaults below (benchmarks: a real poll interval)
        self.state = state
        self.port = port
        # Over HTTPS, as the demo (deploy/local/https.sh makes the certificate), with plain
        # HTTP redirected from port + 80; another config (a bench's stock hub) serves HTTP.
        if public_tls is None:
            public_tls = config == HUB_CONFIG and HUB_TLS_CERT.exists()
        self.public_tls = public_tls
        self.redirect_port = port + 80
        self.url = f"{'https' if self.public_tls else 'http'}://127.0.0.1:{port}"
        self.log_path = state / "hub.log"
        self.proc: subprocess.Popen[bytes] | None = None
        # The PORTAL_* settings it was started with (what `gpuportal-admin` needs to know).
        self.settings_env: dict[str, str] = {}

    @property
    def internal_tls(self) -> bool:
        setting = self.extra_env.get("PORTAL_INTERNAL_TLS", os.environ.get("PORTAL_INTERNAL_TLS"))
        return setting != "0"

    @property
    def api_url(self) -> str:
        """The hub's own API (port + 81, deploy/jupyterhub_config.py), on the login host's
        cluster address where jobs on the nodes reach it; TLS unless internal TLS is off."""
        return f"{'https' if self.internal_tls else 'http'}://hub:{self.port + 81}/hub/api"

    @property
    def client_tls(self) -> dict[str, str]:
        """PortalSettings' certificate fields for calling this hub's API (internal TLS): the
        hub's own, from its store, as jupyterhub-idle-culler uses it."""
        store = self.state / "internal-ssl"
        return {
            "hub_ssl_keyfile": str(store / "hub-internal" / "hub-internal.key"),
            "hub_ssl_certfile": str(store / "hub-internal" / "hub-internal.crt"),
            "hub_ssl_client_ca": str(store / "hub-ca" / "hub-ca.crt"),
        }

    def start(self) -> None:
        env = dict(os.environ)
        env.update(
            PORTAL_HUB_STATE=str(self.state),
            PORTAL_HUB_PORT=str(self.port),
            PORTAL_SESSION_VENV=str(VENV_BIN.parent),
            # Faults (suspend, requeue, time limit) show within seconds, not half a minute.
            PORTAL_POLL_INTERVAL="3",
            # Its own tag on its jobs: a `make demo` hub running beside it must not take over
            # (resume) the tests' sessions, nor the portals record each other's.
            PORTAL_HUB_ID="test",
            # Group changes in LDAP reach the hub within seconds (tests/integration/security).
            PORTAL_AUTH_REFRESH_AGE="4",
            # Culling within seconds of a limit (tests/integration/test_culling.py).
            PORTAL_ACTIVITY_INTERVAL="5",
            PORTAL_CULL_EVERY="5",
            PORTAL_GPU_SAMPLE_SECONDS="5",
            # Definitions that run every minute (tests/integration/test_notebook_schedules.py):
            # a site's shortest is 15 minutes by default.
            PORTAL_SCHEDULE_MIN_MINUTES="1",
            PATH=f"{VENV_BIN}:{env.get('PATH', '')}",
        )
        if self.public_tls:
            env.update(
                PORTAL_PUBLIC_TLS_CERT=str(HUB_TLS_CERT),
                PORTAL_PUBLIC_TLS_KEY=str(HUB_TLS_CERT.with_suffix(".key")),
                PORTAL_HTTP_REDIRECT_PORT=str(self.redirect_port),
            )
        env.update(self.extra_env)
        self.settings_env = {k: v for k, v in env.items() if k.startswith("PORTAL_")}
        log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        # Ours as the demo runs it: as the service account (deploy/local/hub.sh), its folder its
        # own. A bench's stock batchspawner hub stays root: it submits with `sudo -E`.
        account = pwd.getpwnam(SERVICE_USER if self.config == HUB_CONFIG else "root")
        env["HOME"] = account.pw_dir
        if self.config == HUB_CONFIG:
            own_state(self.state)
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "gpuportal-hub"), "-f", str(self.config)],
            cwd=self.state,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=account.pw_uid,
            group=account.pw_gid,
            extra_groups=[],
            umask=0o077,
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
        session = browser_session()
        session.get(f"{self.url}/hub/login", timeout=10)
        response = session.post(
            f"{self.url}/hub/login",
            data={
                "username": user,
                "password": PASSWORDS[user] if password is None else password,
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

    def server_after_check(
        self, session: requests.Session, user: str, timeout: float = 60
    ) -> dict[str, object]:
        """The user's server once the restarted hub has checked it ({} if it has none): past
        init_spawners_timeout (10 s) JupyterHub goes on checking in the background, and the
        server is pending "check", not ready, meanwhile (a slow machine gets there)."""

        def checked() -> dict[str, object] | None:
            server = self.server(session, user)
            if server is not None and server.get("pending") == "check":
                return None
            return server or {"absent": True}

        return wait_for(checked, timeout, f"the hub to check {user}'s server")  # type: ignore[return-value]

    def stop_all(self, session: requests.Session, user: str) -> None:
        """Stop every server of the user, and remove the named ones."""
        model = self.api(session, "GET", f"/users/{user}?include_stopped_servers=1").json()
        for name, server in model.get("servers", {}).items():
            if not name:
                if not server.get("stopped"):
                    self.stop_server(session, user)
                continue
            response = self.api(
                session, "DELETE", f"/users/{user}/servers/{name}", json={"remove": True}
            )
            assert response.status_code in (202, 204), response.text

            def gone(name: str = name) -> bool:
                path = f"/users/{user}?include_stopped_servers=1"
                return name not in self.api(session, "GET", path).json().get("servers", {})

            wait_for(gone, 60, f"{user}'s server {name} to stop")

    def stop_server(self, session: requests.Session, user: str) -> None:
        response = self.api(session, "DELETE", f"/users/{user}/server")
        assert response.status_code in (202, 204), response.text
        wait_for(lambda: self.server(session, user) is None, 60, f"{user}'s server to stop")


@contextmanager
def sudo_rule_for(bin_dir: Path, name: str) -> Iterator[None]:
    """The service account's sudo rule for the Slurm commands of bin_dir too (a test's or a
    bench's stand-ins in front of Slurm), in a sudoers file of its own, removed afterwards."""
    from gpuportal_adapters.settings import HubSettings
    from gpuportal_core.sudo_rules import render
    from gpuportal_spawner.admin_command import SLURM_PROGRAMS, install_sudoers, program_paths

    settings = HubSettings(slurm_bin_dir=str(bin_dir))
    programs = program_paths(settings)
    text = render(
        service_user=SERVICE_USER,
        user_groups=settings.user_groups,
        programs={k: v for k, v in programs.items() if k in SLURM_PROGRAMS or v},
        alias=f"GPUPORTAL_{name.upper().replace('-', '_')}_USERS",
    )
    target = f"/etc/sudoers.d/gpuportal-{name}"
    install_sudoers(text, target)
    try:
        yield
    finally:
        os.unlink(target)
