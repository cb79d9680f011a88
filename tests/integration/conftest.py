"""Session fixtures for the real local cluster (Slurm, LDAP) and a JupyterHub of the tests' own."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest

from tests.cluster import LDAP_URI
from tests.hubproc import TEST_USERS, Hub, state_dir, wait_for
from tests.integration import second_lane
from tests.own_processes import HERE
from tests.postgres import fresh_database

HUB_PORT = int(os.environ.get("PORTAL_TEST_HUB_PORT", "8200"))


def _need(what: str, detail: str) -> None:
    """A missing service fails the run under CI and skips elsewhere."""
    message = f"{what} is not available: {detail} (make test starts it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def squeue(*args: str) -> str:
    return subprocess.run(
        ["squeue", "--noheader", *args], capture_output=True, text=True, check=True, timeout=20
    ).stdout


def user_jobs(user: str, fmt: str = "%i|%T", *args: str) -> list[str]:
    return [
        line for line in squeue(f"--user={user}", f"--format={fmt}", *args).splitlines() if line
    ]


# Slurm's KillWait (30 s by default) comes first for a job whose processes outlive the TERM,
# then the node's clean-up: on CI's loaded lanes a cancelled job took over 60 s (test_jobs_api).
JOBS_END_S = 120


def cancel_user_jobs(*users: str) -> None:
    for user in users:
        subprocess.run(["scancel", f"--user={user}"], check=False, timeout=20)
    wait_for(lambda: not any(user_jobs(u) for u in users), JOBS_END_S, f"jobs of {users} to end")


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
    probe = subprocess.run(["ldapwhoami", "-x", "-H", LDAP_URI], capture_output=True, timeout=10)
    if probe.returncode != 0:
        _need("LDAP", probe.stderr.decode().strip())


DEMO_ONLY_USERS = ("dave",)  # demo users no test logs in as to run jobs


def forget_lab_layout(user: str) -> None:
    """JupyterLab's saved workspaces and settings of a demo user (tabs, folder, theme)."""
    lab = Path(pwd.getpwnam(user).pw_dir) / ".jupyter" / "lab"
    for kept in ("workspaces", "user-settings"):
        shutil.rmtree(lab / kept, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Each integration test holds the cluster shared, or alone if it takes down a part both
    lanes use (marked whole_cluster): tests/integration/second_lane.py. Around the whole
    protocol, not a fixture, so that the session fixtures a test sets up first (a hub, the
    portal tests' logins) and tears down last are inside the turn too."""
    if not item.nodeid.startswith("tests/integration/"):
        return (yield)  # this hook sees every test of the run: unit tests need no turn
    with second_lane.turn(exclusive=item.get_closest_marker("whole_cluster") is not None):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report carries what a CI log needs to tell why: the end of its hub's
    log, and where each open browser page was and what it said (CI keeps only the output)."""
    report = yield
    if report.failed and call.when == "call":
        for name, text in _failure_context(getattr(item, "funcargs", {})):
            report.sections.append((name, text))
    return report


# A hub's routine lines (the tests' own polling, the proxy's route checks, the culler's
# rounds, cookies), left out of a failure's extract: what is left says what went wrong.
_ROUTINE = (" 200 GET ", "Skipping XSRF check", "xsrf cookie", "/api/routes", "cull-check")


def _failure_context(fixtures: dict[str, object]) -> Iterator[tuple[str, str]]:
    hubs = {id(v): v for v in fixtures.values() if isinstance(v, Hub)}  # a lane's, once
    for hub in hubs.values():
        if hub.log_path.exists():
            lines = hub.log_path.read_text(errors="replace").splitlines()
            tail = [line for line in lines if not any(r in line for r in _ROUTINE)][-60:]
            yield f"the hub's log ({hub.log_path}), its last 60 lines but routine", "\n".join(tail)
    browser = fixtures.get("browser")
    for context in getattr(browser, "contexts", []):
        for page in context.pages:
            try:
                said = page.inner_text("body", timeout=2000)[:1500]
            except Exception as error:  # a closed or crashed page: say so, never hide the failure
                said = f"(unreadable: {error})"
            yield f"browser page at {page.url}", said


def _lane_hub(
    tmp_path_factory: pytest.TempPathFactory,
    port: int,
    users: tuple[str, ...],
    admin: str,
    env: dict[str, str] | None = None,
) -> Iterator[Hub]:
    # Whatever a walk through the demo left on the cluster (dave's session too) would take GPUs
    # the tests count on; and JupyterLab would reopen the tabs, folder and theme it left.
    cancel_user_jobs(*users)
    for user in users:
        forget_lab_layout(user)
    state = state_dir()  # not under pytest's root-only temporary folder: the hub is not root
    instance = Hub(state, port, env=env)
    instance.start()
    yield instance
    try:
        session = instance.login(admin)
        for user in users:
            instance.stop_all(session, user)
    finally:
        instance.stop()
        cancel_user_jobs(*users)


def _reset(hub: Hub, users: tuple[str, ...], admin: str) -> None:
    session = hub.login(admin)
    for user in users:
        hub.stop_all(session, user)
    cancel_user_jobs(*users)


@pytest.fixture(scope="session")
def hub(cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """The first lane's hub: the demo's users alice, bob and carol, on gpu01 and gpu02."""
    cancel_user_jobs(*DEMO_ONLY_USERS)
    yield from _lane_hub(tmp_path_factory, HUB_PORT, tuple(TEST_USERS), "carol")


@pytest.fixture
def clean(hub: Hub) -> Iterator[None]:
    """Every test starts and ends with no servers and no jobs for the demo users."""
    _reset(hub, tuple(TEST_USERS), "carol")
    yield
    _reset(hub, tuple(TEST_USERS), "carol")


@pytest.fixture(scope="session")
def second_lane_hub(cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """The second lane's hub (its modules call it `hub`): erin, frank and grace on the nodes
    of the partition `lane`, added for the run and removed after it. JupyterHub's own database
    is PostgreSQL here (the production choice), SQLite on the first lane (the demo's)."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(fresh_database("jupyterhub_lane"))
        except psycopg.OperationalError as error:
            _need("PostgreSQL", str(error).strip())
        second_lane.grow()
        stack.callback(second_lane.shrink)
        yield from _lane_hub(
            tmp_path_factory,
            second_lane.PORT,
            second_lane.USERS,
            second_lane.ADMIN,
            env={**second_lane.HUB_ENV, "PORTAL_HUB_DATABASE_URL": url},
        )


@pytest.fixture
def second_lane_clean(second_lane_hub: Hub) -> Iterator[None]:
    _reset(second_lane_hub, second_lane.USERS, second_lane.ADMIN)
    yield
    _reset(second_lane_hub, second_lane.USERS, second_lane.ADMIN)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while the browser is open, which would break asyncio.run() in later test modules.
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing (make test installs it)")
        pytest.skip("chromium is missing")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def server_python(user: str) -> str:
    """The Python the user's JupyterLab process runs on, as the job started it."""
    pids = subprocess.run(
        ["pgrep", *HERE, "-u", user, "-f", "gpuportal_session.singleuser"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert pids, f"no JupyterLab process of {user}"
    command = Path(f"/proc/{pids[0]}/cmdline").read_bytes().split(b"\0")[0].decode()
    # Started by name ("python"): the one its PATH gives, as Python's own sys.executable is.
    return shutil.which(command, path=server_environment(user).get("PATH", "")) or command


def server_environment(user: str) -> dict[str, str]:
    """The environment of the user's JupyterLab process: what their terminals and kernels see."""
    pids = subprocess.run(
        ["pgrep", *HERE, "-u", user, "-f", "gpuportal_session.singleuser"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert pids, f"no JupyterLab process of {user}"
    raw = Path(f"/proc/{pids[0]}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)
