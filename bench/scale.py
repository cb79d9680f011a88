"""Many users at once on the real stack (issue 22), phase by phase, as browsers do it.

1. **logins**: every user through the real login form (LDAP behind it);
2. **spawn burst**: every user asks for a 1-GPU session at once, on a bench partition grown for
   the run (bench.bench_nodes), with the GPUs beyond --running taken by an admin's jobs: that
   many run, the rest wait in the queue; until the runnable ones are ready, with pages loaded
   meanwhile;
3. **rest**: for --rest seconds each user loads their home page and the spawn page (or, queued,
   the waiting page) once a minute, each running user runs `5 * 4` in a kernel of their
   JupyterLab over its websocket once a minute, an admin lists the users every 2 s; with
   slurmctld's RPC counts (sdiag) and the hub's parts' CPU and memory;
4. **promotion**: the admin's jobs ended one node at a time: the time until the queued
   sessions that then fit are ready;
5. **stop**: every server stopped; then no job, process or server of a bench user may be left.

Bench users (bench001, ...) exist in LDAP, Linux and Slurm for the run only
(bench.cluster_load.bench_users), on a hub of the bench's own (port 8600, hub id `bench`, the
production intervals), whose JupyterHub database is SQLite or a fresh PostgreSQL one (--db).
Everything made is removed afterwards, also after Ctrl-C or SIGTERM.

    python -u -m bench.scale --users 300 --db postgresql
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType

import requests

from bench.bench_nodes import PARTITION, bench_nodes
from bench.cluster_load import (
    CommandLog,
    bench_users,
    password_of,
    percentile,
    remove_jobs,
    rpcs_by_type,
    rpcs_by_user,
)
from bench.kernel_trip import Kernel
from bench.page_load import Timings, every_minute, get_page
from bench.proc_usage import Usage, hub_usage, print_usage, process_usage
from tests.hubproc import HUB_CONFIG, REPO, Hub, wait_for
from tests.integration.faults.helpers import fill_gpus
from tests.postgres import fresh_database

PORT = 8600
STOCK_CONFIG = REPO / "bench" / "stock_jupyterhub_config.py"
LAST_HUB_LOG = Path("/tmp/bench-scale-hub.log")
# The admin whose jobs hold the GPUs beyond the runnable ones, and who lists the users. The tests'
# second lane passes its own (grace): the first lane's tests cancel every job of carol's.
ADMIN = "carol"
PAGINATED = {"Accept": "application/jupyterhub-pagination+json"}
# What a production hub runs with (gpuportal_core.settings' defaults), not the tests' seconds.
PRODUCTION_INTERVALS = {
    "PORTAL_POLL_INTERVAL": "30",
    "PORTAL_ACTIVITY_INTERVAL": "300",
    "PORTAL_CULL_EVERY": "60",
    "PORTAL_GPU_SAMPLE_SECONDS": "60",
    "PORTAL_AUTH_REFRESH_AGE": "300",
}


@dataclass
class Run:
    """What the phases share: the hub, the users' browser sessions, the admin's jobs that hold
    the GPUs beyond the runnable ones (one per node: (job id, GPUs)), and what went wrong."""

    hub: Hub
    users: list[str]
    admin_name: str = ADMIN
    sessions: dict[str, requests.Session] = field(default_factory=dict)
    blockers: list[tuple[str, int]] = field(default_factory=list)
    problems: Counter[str] = field(default_factory=Counter)
    ready_after_burst: set[str] = field(default_factory=set)
    promoted: list[int] = field(default_factory=list)  # sessions started per freed node
    seconds: dict[str, list[float]] = field(default_factory=dict)  # "phase: kind" -> timings
    commands: CommandLog | None = None  # the hub's and its services' Slurm commands, logged

    def keep(self, phase: str, timings: Timings) -> None:
        self.problems += timings.errors
        self.seconds.update({f"{phase}: {kind}": v for kind, v in timings.seconds.items()})

    @property
    def admin(self) -> requests.Session:
        return self.sessions[self.admin_name]

    def usage(self) -> dict[str, Usage]:
        assert self.hub.proc is not None
        return hub_usage(self.hub.proc.pid)


# -- what the hub and Slurm say ------------------------------------------------------------


def users_in_state(run: Run, state: str) -> set[str]:
    """Users with a server in `state` (ready, active), by the hub's own paged list."""
    found: set[str] = set()
    offset = 0
    while True:
        answer = run.admin.get(
            f"{run.hub.url}/hub/api/users",
            params={"state": state, "offset": str(offset), "limit": "200"},
            headers=PAGINATED,
            timeout=60,
        ).json()
        found |= {user["name"] for user in answer["items"] if user["name"] in run.users}
        following = answer["_pagination"].get("next")
        if not following:
            return found
        offset = following["offset"]


def live_jobs(users: list[str]) -> Counter[str]:
    """Live (pending, running, ...) jobs per user, as Slurm lists them."""
    listed = subprocess.run(
        ["squeue", "-h", "-o", "%u"], capture_output=True, text=True, check=True
    ).stdout.split()
    wanted = set(users)
    return Counter(user for user in listed if user in wanted)


def processes_of(users: list[str]) -> int:
    """Processes of the users left on any host (the hosts share this machine's processes)."""
    uids = {str(int(subprocess.check_output(["id", "-u", user]))) for user in users}
    out = subprocess.run(["ps", "-e", "-o", "uid="], capture_output=True, text=True).stdout
    return sum(1 for uid in out.split() if uid in uids)


def jupyterlab_cpu_s(users: list[str]) -> tuple[float, int]:
    """CPU seconds the users' JupyterLab processes have used so far, and how many there are."""
    uids = {int(subprocess.check_output(["id", "-u", user])) for user in users}
    total, count = 0.0, 0
    for path in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_uid not in uids:
                continue
            if "singleuser" not in (path / "cmdline").read_text():
                continue
            total += process_usage(int(path.name)).cpu_s
            count += 1
    return total, count


# -- the phases ------------------------------------------------------------------------------


def log_in(hub: Hub, user: str) -> tuple[float, str, requests.Session]:
    """One login through the form: (seconds, "" or what went wrong, the browser's session)."""
    session = requests.Session()
    begun = time.monotonic()
    try:
        session.get(f"{hub.url}/hub/login", timeout=30)
        answer = session.post(
            f"{hub.url}/hub/login",
            data={
                "username": user,
                "password": password_of(user),
                "_xsrf": session.cookies.get("_xsrf") or "",
            },
            allow_redirects=False,
            timeout=60,
        )
        problem = "" if answer.status_code == 302 else f"HTTP {answer.status_code}"
        session.headers["X-XSRFToken"] = session.cookies.get("_xsrf") or ""
    except requests.RequestException as error:
        problem = type(error).__name__
    return time.monotonic() - begun, problem, session


def logins(run: Run, workers: int) -> None:
    before, begun = run.usage(), time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda user: log_in(run.hub, user), run.users))
    took = time.monotonic() - begun
    times = [seconds for seconds, _, _ in results]
    errors = Counter(f"login: {problem}" for _, problem, _ in results if problem)
    run.problems += errors
    print(
        f"logins: {len(run.users)} in {took:.1f} s ({workers} at a time), errors {errors.total()}"
    )
    print(
        f"  login p50 {percentile(times, 50):.2f} s, p95 {percentile(times, 95):.2f} s, "
        f"max {max(times):.2f} s"
    )
    print_usage(before, run.usage(), took)
    run.sessions = {user: session for user, (_, _, session) in zip(run.users, results, strict=True)}
    run.sessions[run.admin_name] = run.hub.login(run.admin_name)


def _pages_meanwhile(run: Run, timings: Timings, done: threading.Event) -> None:
    """While the burst goes on: a user's home page every 0.2 s, the admin's list every 2 s."""
    turn = 0
    while not done.is_set():
        session = run.sessions[run.users[turn % len(run.users)]]
        timings.timed("home", partial(get_page, session, f"{run.hub.url}/hub/home"))
        if turn % 10 == 0:
            timings.timed("/hub/api/users", partial(_list_users, run))
        turn += 1
        done.wait(0.2)


def _list_users(run: Run) -> None:
    """The admin page's request: the first page of users, with their servers."""
    answer = run.admin.get(
        f"{run.hub.url}/hub/api/users", params={"limit": 50}, headers=PAGINATED, timeout=60
    )
    if answer.status_code != 200:
        raise RuntimeError(f"HTTP {answer.status_code}")


def spawn_burst(run: Run, runnable: int) -> set[str]:
    """Every user asks for a 1-GPU session at once (the spawn API, as the spawn form posts it).
    Returns the users whose sessions run."""
    body = {"user_options": {"profile": "gpu-1"}}

    def ask(user: str) -> tuple[float, int]:
        begun = time.monotonic()
        answer = run.sessions[user].post(
            f"{run.hub.url}/hub/api/users/{user}/server", json=body, timeout=120
        )
        return time.monotonic() - begun, answer.status_code

    timings, done = Timings(), threading.Event()
    pages = threading.Thread(target=_pages_meanwhile, args=(run, timings, done), daemon=True)
    before, begun = run.usage(), time.monotonic()
    pages.start()
    with ThreadPoolExecutor(50) as pool:
        asked = list(pool.map(ask, run.users))
    sent = time.monotonic() - begun
    times = [seconds for seconds, _ in asked]
    refused = Counter(f"spawn: HTTP {code}" for _, code in asked if code not in (201, 202))
    run.problems += refused
    print(f"spawn burst: {len(asked)} requests in {sent:.1f} s, refused {refused.total()}")
    print(f"  spawn request p50 {percentile(times, 50):.2f} s, p95 {percentile(times, 95):.2f} s")
    ready: set[str] = set()
    deadline = begun + 1800
    while time.monotonic() < deadline and len(ready) < runnable:
        time.sleep(2)
        ready = users_in_state(run, "ready")
    took = time.monotonic() - begun
    done.set()
    pages.join()
    print(
        f"  {len(ready)} of {runnable} runnable sessions ready {took:.1f} s after the first request"
    )
    cpu, servers = jupyterlab_cpu_s(run.users)
    if servers:
        bound = 1.5 * cpu / servers * runnable / (os.cpu_count() or 1)
        print(
            f"  JupyterLab's start: {cpu / servers:.2f} CPU s each ({servers} measured); goal "
            f"1.5 x {runnable} x that / {os.cpu_count()} cores = {bound:.0f} s"
        )
    print("  pages during the burst:")
    timings.print("    ")
    run.keep("spawn burst", timings)
    print_usage(before, run.usage(), took)
    jobs = live_jobs(run.users)
    lost = [user for user in run.users if jobs[user] == 0]
    doubled = [user for user in run.users if jobs[user] > 1]
    print(
        f"  jobs: {sum(jobs.values())} for {len(run.users)} users, "
        f"lost {len(lost)}, doubled {len(doubled)}"
    )
    run.problems["job lost"] += len(lost)
    run.problems["job doubled"] += len(doubled)
    return ready


def _tokens(run: Run, users: set[str]) -> dict[str, str]:
    """An API token of each user's own, as the user makes one in the hub's token page."""

    def make(user: str) -> str:
        answer = run.sessions[user].post(
            f"{run.hub.url}/hub/api/users/{user}/tokens", json={"note": "bench"}, timeout=60
        )
        answer.raise_for_status()
        return str(answer.json()["token"])

    with ThreadPoolExecutor(10) as pool:
        return dict(zip(users, pool.map(make, users), strict=True))


def rest(run: Run, running: set[str], seconds: float, period: float = 60) -> None:
    """A quiet while with every session up: pages, kernels and the admin's list."""
    timings = Timings()
    kernels: dict[str, Kernel] = {}
    tokens = _tokens(run, running)

    def start_kernel(user: str) -> None:
        kernels[user] = Kernel(run.hub.url, user, tokens[user])

    with ThreadPoolExecutor(10) as pool:
        for user in running:
            pool.submit(timings.timed, "kernel start", partial(start_kernel, user))
    url = run.hub.url
    tasks: list[Callable[[], None]] = []
    for user in run.users:
        session = run.sessions[user]
        tasks.append(partial(timings.timed, "home", partial(get_page, session, f"{url}/hub/home")))
        if user in running:
            spawn_page = partial(get_page, session, f"{url}/hub/spawn", ok=(200, 302))
            tasks.append(partial(timings.timed, "spawn page", spawn_page))
            if user in kernels:
                tasks.append(partial(timings.timed, "kernel 5 * 4", kernels[user].round_trip))
        else:
            waiting_page = partial(get_page, session, f"{url}/hub/spawn-pending/{user}")
            tasks.append(partial(timings.timed, "waiting page", waiting_page))
    # The admin's list every 2 s: thirty a minute among the users' requests.
    stride = max(1, len(tasks) // 30)
    for index in range(len(tasks) - 1, -1, -stride):
        tasks.insert(index, partial(timings.timed, "/hub/api/users", partial(_list_users, run)))
    print(f"rest: {seconds:.0f} s, {len(running)} running, {len(run.users) - len(running)} queued")
    rpcs_before, types_before = rpcs_by_user(), rpcs_by_type()
    before, begun, wall_begun = run.usage(), time.monotonic(), time.time()
    every_minute(tasks, seconds, period=period)
    took = time.monotonic() - begun
    rpcs_after, types_after, after = rpcs_by_user(), rpcs_by_type(), run.usage()
    for kernel in kernels.values():
        with contextlib.suppress(Exception):
            kernel.close()
    timings.print()
    run.keep("rest", timings)
    print_usage(before, after, took)
    print(f"  Slurm RPCs per minute (sdiag), by user: {_per_minute(rpcs_before, rpcs_after, took)}")
    print(f"    by type: {_per_minute(types_before, types_after, took)}")
    if run.commands is not None:
        calls = Counter(
            command_kind(name, args)
            for _, name, args in run.commands.calls(wall_begun, wall_begun + took)
        )
        shown = ", ".join(f"{kind} {count * 60 / took:.1f}" for kind, count in calls.most_common())
        print(f"  Slurm commands per minute by the hub and its services: {shown or 'none'}")


def _per_minute(before: Counter[str], after: Counter[str], seconds: float) -> str:
    grown = {key: (after[key] - before[key]) * 60 / seconds for key in after}
    shown = [f"{key} {count:.0f}" for key, count in sorted(grown.items()) if count > 0]
    return ", ".join(shown) or "none"


def command_kind(name: str, args: str) -> str:
    """A Slurm command by its name and option names (values left out): which call it is."""
    options = [word.split("=", 1)[0] for word in args.split() if word.startswith("-")]
    return " ".join([name, *options[:4]])


def promotion(run: Run, steps: int) -> None:
    """The admin's jobs ended one node at a time; the queued sessions that then fit start."""
    print(f"promotion: {steps} steps, a node's GPUs freed each")
    for job_id, gpus in run.blockers[:steps]:
        ready_before = users_in_state(run, "ready")
        freed = time.monotonic()
        subprocess.run(["scancel", job_id], check=True)
        first = last = None
        ready = ready_before
        while time.monotonic() - freed < 300 and len(ready - ready_before) < gpus:
            time.sleep(0.5)
            ready = users_in_state(run, "ready")
            if first is None and ready - ready_before:
                first = time.monotonic() - freed
        last = time.monotonic() - freed
        promoted = len(ready - ready_before)
        run.promoted.append(promoted)
        if promoted < gpus:
            run.problems["promotion: not ready within 300 s"] += gpus - promoted
        first_text = "never" if first is None else f"after {first:.1f} s"
        print(
            f"  {gpus} GPUs freed: first queued session ready {first_text}, "
            f"{promoted} of {gpus} after {last:.1f} s"
        )


def stop_all(run: Run) -> None:
    """Every server stopped as its user would (the spawn page's Stop: the hub's API)."""
    timings = Timings()
    begun = time.monotonic()

    def stop(user: str) -> None:
        answer = run.sessions[user].delete(
            f"{run.hub.url}/hub/api/users/{user}/server", timeout=120
        )
        if answer.status_code not in (202, 204, 400):  # 400: no server (a refused spawn)
            raise RuntimeError(f"HTTP {answer.status_code}")

    with ThreadPoolExecutor(20) as pool:
        for user in run.users:
            pool.submit(timings.timed, "stop request", partial(stop, user))
    with contextlib.suppress(AssertionError):
        wait_for(lambda: not users_in_state(run, "active"), 600, "servers to stop", step=2)
    took = time.monotonic() - begun
    # Slurm's own end of the jobs (their steps' clean-up) comes a little after the hub's.
    with contextlib.suppress(AssertionError):
        wait_for(lambda: not live_jobs(run.users), 120, "jobs to end", step=1)
    servers, jobs = users_in_state(run, "active"), live_jobs(run.users)
    with contextlib.suppress(AssertionError):
        wait_for(lambda: processes_of(run.users) == 0, 60, "processes to end", step=1)
    processes = processes_of(run.users)
    print(f"stop: all servers stopped after {took:.1f} s")
    timings.print()
    print(
        f"  left: {len(servers)} servers, {sum(jobs.values())} jobs, {processes} processes "
        "of bench users"
    )
    run.keep("stop", timings)
    run.problems["left: server"] += len(servers)
    run.problems["left: job"] += sum(jobs.values())
    run.problems["left: process"] += processes


# -- the bench -------------------------------------------------------------------------------


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def bench_hub(db: str, stock: bool = False, commands: CommandLog | None = None) -> Iterator[Hub]:
    """The bench's hub: ours, or stock batchspawner + wrapspawner (no internal TLS: it has
    none for jobs on other hosts) with everything else the same."""
    with contextlib.ExitStack() as stack:
        env = {"PORTAL_HUB_ID": "bench", "PORTAL_PARTITION": PARTITION, **PRODUCTION_INTERVALS}
        if stock:
            env["PORTAL_INTERNAL_TLS"] = "0"
        if commands is not None:
            env["PORTAL_SLURM_BIN_DIR"] = str(commands.folder)
        if db == "postgresql":
            env["PORTAL_HUB_DATABASE_URL"] = stack.enter_context(fresh_database("jupyterhub_bench"))
        state = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-hub-")))
        state.chmod(0o700)
        hub = Hub(state, PORT, config=STOCK_CONFIG if stock else HUB_CONFIG, env=env)
        hub.start()
        # The hub's log outlives its state folder: what went wrong is read there.
        stack.callback(shutil.copyfile, hub.log_path, LAST_HUB_LOG)
        stack.callback(hub.stop)
        yield hub


def hold_spare_gpus(
    nodes: list[str], gpus: int, runnable: int, admin: str
) -> list[tuple[str, int]]:
    """The GPUs beyond `runnable` taken by the admin's jobs, node after node."""
    spare = len(nodes) * gpus - runnable
    held = []
    for index, node in enumerate(nodes):
        count = min(gpus, max(0, spare - index * gpus))
        if count:
            # Longer than any run: a blocker ending on its own would promote sessions early.
            [job_id] = fill_gpus(node, gpus=count, user=admin, partition=PARTITION, minutes=120)
            held.append((job_id, count))
    return held


@dataclass
class Shape:
    """The run's size: users, the bench nodes and GPUs, how many sessions fit, how long at rest
    (each user's requests once a `period`), how many nodes are freed one by one."""

    users: int = 300
    db: str = "sqlite"
    nodes: int = 16
    gpus: int = 8
    running: int = 100
    rest: float = 300
    period: float = 60
    promote: int = 2
    login_workers: int = 20
    stock: bool = False  # stock batchspawner + wrapspawner instead of ours
    admin: str = ADMIN


def scale_run(
    shape: Shape, hold: Callable[[bool], contextlib.AbstractContextManager[None]] | None = None
) -> Run:
    """Every phase, and everything made removed after. `hold(exclusive)` guards the cluster:
    alone while the bench nodes are grown and removed (slurmctld restarts), shared between
    (the tests' lanes: tests/integration/second_lane.turn)."""
    guard = hold or (lambda exclusive: contextlib.nullcontext())
    made = time.monotonic()
    with contextlib.ExitStack() as stack:
        users = stack.enter_context(bench_users(shape.users))
        print(
            f"{len(users)} bench users made in {time.monotonic() - made:.0f} s; hub on {shape.db}"
        )
        # The partition first: the hub's profiles are checked against it when it starts.
        nodes = (
            stack.enter_context(bench_nodes(shape.nodes, shape.gpus, hold=partial(guard, True)))
            if shape.nodes
            else []
        )
        stack.enter_context(guard(False))
        commands = CommandLog()
        stack.callback(commands.remove)
        hub = stack.enter_context(bench_hub(shape.db, shape.stock, commands))
        run = Run(hub, users, shape.admin, commands=commands)
        logins(run, shape.login_workers)
        if not nodes:
            return run
        stack.callback(remove_jobs, [shape.admin])
        run.blockers = hold_spare_gpus(nodes, shape.gpus, shape.running, shape.admin)
        try:
            run.ready_after_burst = spawn_burst(run, shape.running)
            if shape.rest:
                rest(run, run.ready_after_burst, shape.rest, shape.period)
            promotion(run, min(shape.promote, len(run.blockers)))
        finally:
            stop_all(run)
        run.problems = +run.problems  # the kinds counted but never seen dropped
        print(f"problems: {run.problems.total()}")
        for problem, count in run.problems.most_common():
            print(f"  {count} x {problem}")
        return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--login-workers", type=int, default=20)
    parser.add_argument("--running", type=int, default=100, help="sessions that fit the GPUs")
    parser.add_argument("--nodes", type=int, default=16, help="bench nodes; 0: logins only")
    parser.add_argument("--gpus", type=int, default=8, help="GPUs per bench node")
    parser.add_argument("--rest", type=float, default=300, help="seconds at rest")
    parser.add_argument("--promote", type=int, default=2, help="nodes freed one by one")
    parser.add_argument("--stock", action="store_true", help="stock batchspawner + wrapspawner")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _exit_on_term)
    scale_run(
        Shape(
            users=args.users,
            db=args.db,
            nodes=args.nodes,
            gpus=args.gpus,
            running=args.running,
            rest=args.rest,
            promote=args.promote,
            login_workers=args.login_workers,
            stock=args.stock,
        )
    )


if __name__ == "__main__":
    main()
