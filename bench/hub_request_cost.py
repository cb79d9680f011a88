"""The hub's own CPU per request of each page a signed-in user loads, one user alone: what every
page costs the hub's one event loop before any burst (issue 41: the hub's pages in a burst of
300 spawns, and its CPU at rest with pages loaded).

Starts a hub of the bench's own (deploy/jupyterhub_config.py, port 8600, SQLite, or
PostgreSQL with --database-url), signs alice in, and for each page asks it N times one after
another, reading the hub process's CPU time (/proc) before and after; `--profile` also records
where the hub spends it with py-spy (give its path), and prints the hub's busiest functions.

    /opt/gpuportal/venv/bin/python -m bench.hub_request_cost [--requests 100] [--profile PY_SPY]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.hubproc import Hub

PORT = 8600
PAGES = (
    "/hub/home",  # JupyterHub's home page, with the session cards' script
    "/hub/spawn",  # the spawn form (gpuportal_spawner.spawn_form)
    "/hub/api/users/alice",  # JupyterHub's REST API: the user's model
    "/hub/gpuportal/sessions",  # the cards' answer (gpuportal_spawner.sessions)
    "/hub/gpuportal/capacity",  # free GPUs and expected starts (gpuportal_spawner.capacity)
)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Frames on every stack of the hub's loop: not where its time goes.
LOOP_FRAMES = re.compile(
    r"^(<module>|main|JupyterHub\.launch_instance|\w+Loop\.|Handle\._run|RequestHandler\._execute"
    r"|_run_callback|wrapper|_wrapped)"
)


def busiest(raw_profile: Path, top: int = 10) -> list[tuple[float, str]]:
    """The functions most often on the hub's stack while it was not waiting (py-spy's raw
    output: one `frame;frame;... count` line per stack), the loop's own frames left out."""
    seen: Counter[str] = Counter()
    busy = 0
    for line in raw_profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not frames or "select" in frames[-1] or "poll" in frames[-1]:
            continue  # the loop waiting for work
        busy += int(count)
        for name in {frame.split(" (")[0] for frame in frames[1:]}:
            if not LOOP_FRAMES.match(name):
                seen[name] += int(count)
    return [(100 * n / busy, name) for name, n in seen.most_common(top)] if busy else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--database-url", default="", help="the hub's database (default SQLite)")
    parser.add_argument("--profile", default="", help="py-spy's path: record each page")
    args = parser.parse_args()
    env = {"PORTAL_DATABASE_URL": args.database_url} if args.database_url else {}
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as state:
        hub = Hub(Path(state), PORT, env=env)
        hub.start()
        try:
            assert hub.proc is not None
            pid = hub.proc.pid
            session = hub.login("alice")
            print(f"hub CPU per request, alice alone, {args.requests} requests each:")
            for page in PAGES:
                session.get(hub.url + page, timeout=60).raise_for_status()  # warmed up
                spy = None
                if args.profile:
                    out = Path(state) / f"profile{page.replace('/', '_')}.txt"
                    spy = subprocess.Popen(
                        [args.profile, "record", "-p", str(pid), "-r", "200", "-f", "raw",
                         "-o", str(out), "--nonblocking"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )  # fmt: skip
                    time.sleep(1)
                cpu, wall = cpu_seconds(pid), time.monotonic()
                for _ in range(args.requests):
                    session.get(hub.url + page, timeout=60).raise_for_status()
                cpu, wall = cpu_seconds(pid) - cpu, time.monotonic() - wall
                print(
                    f"  {page:<26} {1000 * cpu / args.requests:6.1f} ms CPU, "
                    f"{1000 * wall / args.requests:6.1f} ms answered"
                )
                if spy is not None:
                    spy.send_signal(signal.SIGINT)
                    spy.wait(timeout=60)
                    for share, name in busiest(out):
                        print(f"      {share:5.1f} %  {name}")
        finally:
            hub.stop()


if __name__ == "__main__":
    main()
