"""Many users at once on the real stack (issue 22), phase by phase, as browsers do it.

1. **logins**: every user through the real login form (LDAP behind it);
2. **spawn burst**: every user asks for a 1-GPU session at once, on a bench partition grown for
   the run (bench.bench_nodes), with the GPUs beyond --running taken by an admin's jobs: that
   many run, the rest wait in the queue; until the runnable ones are ready, with pages loaded
   meanwhile. The nodes' processes take only the CPU the hub's side leaves (bench.node_cpu),
   as other machines would; --nodes-share-cores lets them take it as the hub's equals (nice 10);
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
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType

from bench.bench_nodes import PARTITION, bench_nodes
from bench.cluster_load import (
    CommandLog,
    bench_users,
    remove_jobs,
)
from bench.scale_phases import logins, promotion, rest, spawn_burst, stop_all
from bench.scale_state import ADMIN, Run
from tests.hubproc import HUB_CONFIG, REPO, Hub, sudo_rule_for
from tests.integration.faults.helpers import fill_gpus
from tests.postgres import fresh_database

PORT = 8600
STOCK_CONFIG = REPO / "bench" / "stock_jupyterhub_config.py"
LAST_HUB_LOG = Path("/tmp/bench-scale-hub.log")
# What a production hub runs with (gpuportal_adapters.settings' defaults), not the tests' seconds.
PRODUCTION_INTERVALS = {
    "PORTAL_POLL_INTERVAL": "30",
    "PORTAL_ACTIVITY_INTERVAL": "300",
    "PORTAL_CULL_EVERY": "60",
    "PORTAL_GPU_SAMPLE_SECONDS": "60",
    "PORTAL_AUTH_REFRESH_AGE": "300",
}


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
            # Its wrappers run as users too: the service account's sudo rule must name them.
            stack.enter_context(sudo_rule_for(commands.folder, "bench-commands"))
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
    quiet: float = 60  # seconds at rest, before the pages, with nobody on a page
    promote: int = 2
    login_workers: int = 20
    stock: bool = False  # stock batchspawner + wrapspawner instead of ours
    admin: str = ADMIN
    # The bench nodes' processes in a cgroup of the least CPU weight, as if the nodes were
    # other machines (bench.node_cpu); off: only niced. Off for the tests' reduced run, whose
    # sessions would wait for CPU behind the other lane's tests.
    nodes_apart: bool = False


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
            stack.enter_context(
                bench_nodes(
                    shape.nodes, shape.gpus, hold=partial(guard, True), apart=shape.nodes_apart
                )
            )
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
                rest(run, run.ready_after_burst, shape.rest, shape.period, shape.quiet)
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
    parser.add_argument(
        "--quiet", type=float, default=60, help="seconds at rest before it, nobody on a page"
    )
    parser.add_argument("--promote", type=int, default=2, help="nodes freed one by one")
    parser.add_argument("--stock", action="store_true", help="stock batchspawner + wrapspawner")
    parser.add_argument(
        "--nodes-share-cores",
        action="store_true",
        help="the bench nodes' JupyterLabs only niced, not in a cgroup of the least CPU weight: "
        "they take the hub's CPU as in the figures before 2026-11-27's fourth session",
    )
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
            quiet=args.quiet,
            promote=args.promote,
            login_workers=args.login_workers,
            stock=args.stock,
            nodes_apart=not args.nodes_share_cores,
        )
    )


if __name__ == "__main__":
    main()
