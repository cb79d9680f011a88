"""bench/scale.py's phases, in the order it runs them: logins, the spawn burst, rest,
promotion, stop. Each times what a browser does and counts what went wrong into `Run.problems`."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import requests

from bench.cluster_load import (
    password_of,
    percentile,
    rpcs_by_type,
    rpcs_by_user,
)
from bench.hub_log_times import Started, hub_times, print_hub_times
from bench.kernel_trip import Kernel
from bench.page_load import Timings, every_minute, get_page
from bench.proc_usage import print_usage
from bench.scale_state import (
    PAGINATED,
    Run,
    job_starts,
    jupyterlab_cpu_s,
    live_jobs,
    processes_of,
    running_users,
    server_ready,
    users_in_state,
)
from tests.hubproc import Hub, wait_for


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


# The pages whose hub-side time is printed beside the client's (bench.hub_log_times); the
# admin's list is its first page of 50, not the bench's own lists by state.
PAGES = {
    "home": ("GET", r"/hub/home"),
    "spawn page": ("GET", r"/hub/spawn"),
    "waiting page": ("GET", r"/hub/spawn-pending/[^/?]+"),
    "/hub/api/users": ("GET", r"/hub/api/users\?limit=50"),
}


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
    before, begun, wall_begun = run.usage(), time.monotonic(), time.time()
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
    # JupyterLab's start in CPU seconds, read as each server is first seen ready (within 2 s):
    # read once at the end, the first ones' idle minutes since were counted too.
    cpu, servers = 0.0, 0
    wanted, logged = set(run.users), Started(run.hub.log_path)
    while time.monotonic() < deadline and len(ready) < runnable:
        # Read from the hub's log every 2 s, not asked of the hub: its list of ready servers
        # took a quarter to a third of the hub's loop in the burst it measured (py-spy).
        time.sleep(2)
        now_ready = logged.read() & wanted
        used, count = jupyterlab_cpu_s(sorted(now_ready - ready))
        cpu, servers = cpu + used, servers + count
        ready |= now_ready
    took = time.monotonic() - begun
    done.set()
    pages.join()
    # The hub's own word at the end: a server logged as started may have stopped since.
    ready &= users_in_state(run, "ready")
    print(
        f"  {len(ready)} of {runnable} runnable sessions ready {took:.1f} s after the first request"
    )
    if servers:
        run.lab_cpu_s = cpu / servers
        bound = 1.5 * run.lab_cpu_s * runnable / (os.cpu_count() or 1)
        print(
            f"  JupyterLab's start: {run.lab_cpu_s:.2f} CPU s each ({servers} measured); goal "
            f"1.5 x {runnable} x that / {os.cpu_count()} cores = {bound:.0f} s"
        )
    print("  pages during the burst:")
    timings.print("    ")
    print("  the same pages as the hub logged them (from its handler's start to its answer):")
    print_hub_times(hub_times(run.hub.log_path, wall_begun, time.time(), PAGES), "    ")
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


def rest(
    run: Run, running: set[str], seconds: float, period: float = 60, quiet: float = 60
) -> None:
    """A while with every session up: first `quiet` s with nobody on a page (what the
    sessions alone cost the hub and Slurm), then pages, kernels and the admin's list."""
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
    if quiet > 0:
        _quiet_while(run, quiet)
    rpcs_before, types_before = rpcs_by_user(), rpcs_by_type()
    before, begun, wall_begun = run.usage(), time.monotonic(), time.time()
    lags = every_minute(tasks, seconds, period=period)
    took = time.monotonic() - begun
    rpcs_after, types_after, after = rpcs_by_user(), rpcs_by_type(), run.usage()
    for kernel in kernels.values():
        with contextlib.suppress(Exception):
            kernel.close()
    timings.print()
    print("  the same pages as the hub logged them:")
    print_hub_times(hub_times(run.hub.log_path, wall_begun, wall_begun + took, PAGES))
    reconnects = sum(kernel.reconnects for kernel in kernels.values())
    print(f"  kernel websockets that opened only when tried again: {reconnects}")
    closings = [why for kernel in kernels.values() for why in kernel.closed_why]
    # Reopened as JupyterLab reopens them, the kernel's state checked; how often is a figure.
    print(f"  kernel websockets closed under a live kernel and reopened: {len(closings)}")
    for why in closings:
        print(f"    {why}")
    print(
        f"  requests started late (the hub behind): p95 {percentile(lags, 95):.1f} s, "
        f"max {max(lags, default=0.0):.1f} s; the phase took {took:.0f} s"
    )
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


def _quiet_while(run: Run, seconds: float) -> None:
    """The sessions alone: no page, kernel or list asked for; the hub's own polls, the
    services' rounds, the Jupyter servers' activity reports. Page loads cost the rest."""
    rpcs_before, before, begun = rpcs_by_type(), run.usage(), time.monotonic()
    time.sleep(seconds)
    took = time.monotonic() - begun
    rpcs_after, after = rpcs_by_type(), run.usage()
    print(f"  first {took:.0f} s with nobody on a page:")
    print_usage(before, after, took)
    print(f"    Slurm RPCs per minute, by type: {_per_minute(rpcs_before, rpcs_after, took)}")


def _per_minute(before: Counter[str], after: Counter[str], seconds: float) -> str:
    grown = {key: (after[key] - before[key]) * 60 / seconds for key in after}
    shown = [f"{key} {count:.0f}" for key, count in sorted(grown.items()) if count > 0]
    return ", ".join(shown) or "none"


def command_kind(name: str, args: str) -> str:
    """A Slurm command by its name and option names (values left out but --states'): which
    call it is."""
    options = [
        word if word.startswith("--states=") else word.split("=", 1)[0]
        for word in args.split()
        if word.startswith("-") and word != "--noheader"
    ]
    return " ".join([name, *options])


def promotion(run: Run, steps: int) -> None:
    """The admin's jobs ended one node at a time; the queued sessions that then fit start."""
    print(f"promotion: {steps} steps, a node's GPUs freed each")
    for job_id, gpus in run.blockers[:steps]:
        running_before = running_users(run.users)
        freed, freed_at = time.monotonic(), time.time()
        subprocess.run(["scancel", job_id], check=True)
        first = last = None
        started: set[str] = set()
        ready: set[str] = set()
        # Slurm says which jobs started; the hub is asked about those users only (the list of
        # every ready server, asked every half second, slowed the very starts it timed).
        while time.monotonic() - freed < 300 and len(ready) < gpus:
            time.sleep(0.5)
            started |= running_users(run.users) - running_before
            ready |= {user for user in started - ready if server_ready(run, user)}
            if first is None and ready:
                first = time.monotonic() - freed
        last = time.monotonic() - freed
        promoted = len(ready)
        run.promoted.append(promoted)
        if promoted < gpus:
            run.problems["promotion: not ready within 300 s"] += gpus - promoted
        first_text = "never" if first is None else f"after {first:.1f} s"
        # Slurm's part (its scheduler, to the second) apart from the sessions' start.
        starts = [start - freed_at for start in job_starts(ready)]
        # To the second, and StartTime is cut to the second: 0 is "within the same second".
        slurm_took = f"{max(0, min(starts)):.0f}-{max(0, max(starts)):.0f} s" if starts else "-"
        print(
            f"  {gpus} GPUs freed: Slurm started the jobs after {slurm_took}; first queued "
            f"session ready {first_text}, {promoted} of {gpus} after {last:.1f} s"
        )
        if run.lab_cpu_s:
            # The sessions start together and share the cores: JupyterLab's own start for all
            # of them is their CPU seconds over the cores; the goal is 5 s more than that.
            own = promoted * run.lab_cpu_s / (os.cpu_count() or 1)
            print(
                f"    JupyterLab's own start, {promoted} at once: {promoted} x "
                f"{run.lab_cpu_s:.2f} CPU s / {os.cpu_count()} cores = {own:.1f} s; "
                f"goal {own + 5:.1f} s"
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
