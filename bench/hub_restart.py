"""A graceful hub restart, timed: how long until a running JupyterLab answers through the hub.

On a hub of the bench's own (port 8600), alice starts a session; then, N times, the hub is
stopped as a service manager stops it (SIGTERM, waiting for it to exit) and started again, and
the bench asks alice's JupyterLab (`/user/alice/api/status`, with her token) through the hub's
proxy every 0.1 s until it answers. Printed per turn: the stop (the hub cleaning up its
services), the start until the hub's API answers, and stop-to-lab-answering in all. Run after
`make demo` or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/hub_restart.py [--turns 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hubproc import Hub, wait_for
from tests.integration.faults.helpers import running_session


def _answers(url: str, token: str) -> bool:
    try:
        got = requests.get(url, headers={"Authorization": f"token {token}"}, timeout=2)
    except requests.RequestException:
        return False
    return got.status_code == 200


def _hub_answers(hub: Hub) -> bool:
    try:
        return requests.get(f"{hub.url}/hub/api", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="bench-restart-"))
    state.chmod(0o700)
    hub = Hub(state, 8600)
    hub.start()
    rows: list[tuple[float, float, float]] = []
    try:
        alice, _, _ = running_session(hub, "alice")
        token = hub.api(alice, "POST", "/users/alice/tokens", json={}).json()["token"]
        lab = f"{hub.url}/user/alice/api/status"
        wait_for(lambda: _answers(lab, token), 30, "alice's lab through the hub")
        for turn in range(args.turns):
            began = time.monotonic()
            hub.stop()
            stopped = time.monotonic()
            hub.start()
            while not _hub_answers(hub):
                time.sleep(0.1)
            hub_up = time.monotonic()
            while not _answers(lab, token):
                if time.monotonic() - began > 120:
                    raise SystemExit("alice's lab did not answer within 2 minutes")
                time.sleep(0.1)
            back = time.monotonic()
            rows.append((stopped - began, hub_up - stopped, back - began))
            print(f"  turn {turn + 1}: back after {back - began:.1f} s", flush=True)
    finally:
        carol = hub.login("carol")
        if hub.server(carol, "alice") is not None:
            hub.stop_server(carol, "alice")
        hub.stop()
        subprocess.run(["scancel", "-u", "alice"], check=False)
    print()
    print("| turn | stop (services cleaned up) | start until the hub's API answers | "
          "stop to alice's lab answering |")  # fmt: skip
    print("|---|---|---|---|")
    for turn, (stop, start, total) in enumerate(rows, 1):
        print(f"| {turn} | {stop:.1f} s | {start:.1f} s | {total:.1f} s |")
    medians = [statistics.median(column) for column in zip(*rows, strict=True)]
    print(f"| median | {medians[0]:.1f} s | {medians[1]:.1f} s | {medians[2]:.1f} s |")


if __name__ == "__main__":
    main()
