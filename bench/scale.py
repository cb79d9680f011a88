"""Many users at once on the real stack (issue 22), phase by phase, as browsers do it.

Phases measured so far: **logins** (every user through the real login form, LDAP behind it,
within a minute). The spawn burst, the rest with running and queued sessions, promotion and
stop follow (issue 22); this file grows with them.

Bench users (bench001, ...) exist in LDAP, Linux and Slurm for the run only
(bench.cluster_load.bench_users), on a hub of the bench's own (port 8600, hub id `bench`),
whose JupyterHub database is SQLite or a fresh PostgreSQL one (--db). Everything made is removed
afterwards, also after Ctrl-C or SIGTERM.

    python -m bench.scale --users 300 --db postgresql
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import requests

from bench.cluster_load import bench_users, password_of, percentile
from tests.hubproc import Hub
from tests.postgres import fresh_database

PORT = 8600
CLOCK_TICKS = 100  # os.sysconf("SC_CLK_TCK") on Linux


@dataclass
class Usage:
    """A process tree's CPU time (s) and resident memory (MB) at one moment."""

    cpu_s: float
    rss_mb: float


def usage(pid: int) -> Usage:
    """The process and its children (the hub: its proxy and services)."""
    pids = [pid, *_children(pid)]
    cpu = rss = 0.0
    for each in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            status = Path(f"/proc/{each}/status").read_text()
            rss += int(
                next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]
            )
    return Usage(cpu, rss / 1024)


def _children(pid: int) -> list[int]:
    found = []
    for path in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            if int(path.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                child = int(path.parent.name)
                found += [child, *_children(child)]
    return found


def log_in(hub: Hub, user: str) -> tuple[float, str]:
    """One login through the form: (seconds, "" or what went wrong)."""
    session = requests.Session()
    begun = time.monotonic()
    try:
        session.get(f"{hub.url}/hub/login", timeout=30)
        answer = session.post(
            f"{hub.url}/hub/login",
            data={
                "username": user,
                "password": password_of(user),
                "_xsrf": session.cookies.get("_xsrf", ""),
            },
            allow_redirects=False,
            timeout=60,
        )
        problem = "" if answer.status_code == 302 else f"HTTP {answer.status_code}"
    except requests.RequestException as error:
        problem = type(error).__name__
    return time.monotonic() - begun, problem


def logins(hub: Hub, users: list[str], workers: int) -> None:
    assert hub.proc is not None
    before, begun = usage(hub.proc.pid), time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda user: log_in(hub, user), users))
    took = time.monotonic() - begun
    after = usage(hub.proc.pid)
    times = [seconds for seconds, _ in results]
    errors = [problem for _, problem in results if problem]
    print(f"logins: {len(users)} in {took:.1f} s ({workers} at a time), errors {len(errors)}")
    print(
        f"  login p50 {percentile(times, 50):.2f} s, p95 {percentile(times, 95):.2f} s, "
        f"max {max(times):.2f} s"
    )
    cpu = 100 * (after.cpu_s - before.cpu_s) / took
    print(f"  hub with proxy and services: CPU {cpu:.0f} % of one core, RSS {after.rss_mb:.0f} MB")
    for problem in sorted(set(errors)):
        print(f"  error {problem}: {errors.count(problem)}")


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def bench_hub(db: str) -> Iterator[Hub]:
    with contextlib.ExitStack() as stack:
        env = {"PORTAL_HUB_ID": "bench", "PORTAL_POLL_INTERVAL": "30"}
        if db == "postgresql":
            env["PORTAL_HUB_DATABASE_URL"] = stack.enter_context(fresh_database("jupyterhub_bench"))
        state = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-hub-")))
        state.chmod(0o700)
        hub = Hub(state, PORT, env=env)
        hub.start()
        stack.callback(hub.stop)
        yield hub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--login-workers", type=int, default=20)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _exit_on_term)
    made = time.monotonic()
    with bench_users(args.users) as users:
        print(f"{len(users)} bench users made in {time.monotonic() - made:.0f} s; hub on {args.db}")
        with bench_hub(args.db) as hub:
            logins(hub, users, args.login_workers)


if __name__ == "__main__":
    main()
