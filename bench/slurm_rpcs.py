"""Slurm RPCs per minute caused by the hub, ours vs stock batchspawner (issue 11): during a burst
of 30 spawns on the 8-GPU cluster (8 start, 22 wait), and at rest with 2 and with 8 running
servers. Counted by slurmctld itself (sdiag's RPCs per user, summed over users), less what the
cluster does on its own with no hub (measured first and printed).

Both hubs run with the hub's default poll interval (30 s); everything but the spawner is the
same (bench/stock_jupyterhub_config.py). Makes 30 users of its own (bench001..bench030),
removed afterwards. Run as root after `make demo` or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/slurm_rpcs.py [--seconds 60] [--ours-only]

--ours-only leaves stock out: to compare two versions of ours, run it from each checkout.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cluster_load import (
    bench_users,
    password_of,
    ready_count,
    remove_jobs,
    rpcs_per_minute,
)
from tests.hubproc import HUB_CONFIG, REPO, Hub, wait_for

PORT = 8700
HUBS = {
    "ours (GpuSlurmSpawner)": HUB_CONFIG,
    "stock batchspawner": REPO / "bench" / "stock_jupyterhub_config.py",
}
BODIES = {
    "ours (GpuSlurmSpawner)": {"user_options": {"profile": "gpu-1", "runtime": "01:00:00"}},
    "stock batchspawner": {},
}


def spawn(hub: Hub, users: list[str], body: dict[str, object]) -> None:
    for user in users:
        session = hub.login(user, password_of(user))
        response = hub.api(session, "POST", f"/users/{user}/server", json=body)
        if response.status_code not in (201, 202):
            raise SystemExit(f"spawn for {user}: {response.status_code} {response.text}")


def stop_all(hub: Hub, users: list[str]) -> None:
    admin = hub.login("carol")
    for user in users:
        hub.api(admin, "DELETE", f"/users/{user}/server")
    wait_for(lambda: not any(_listed(hub, admin, u) for u in users), 180, "servers to stop")
    remove_jobs(users)
    wait_for(_cluster_idle, 120, "an idle cluster", step=1)


def _listed(hub: Hub, admin: object, user: str) -> bool:
    return bool(hub.api(admin, "GET", f"/users/{user}").json().get("servers"))  # type: ignore[arg-type]


def _cluster_idle() -> bool:
    nodes = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True).stdout
    jobs = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    return not jobs.split() and all(state == "idle" for state in nodes.split())


def measure(name: str, users: list[str], seconds: float) -> dict[str, int]:
    body = BODIES[name]
    figures: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as state:
        Path(state).chmod(0o700)
        hub = Hub(Path(state), PORT, HUBS[name], env={"PORTAL_POLL_INTERVAL": "30"})
        hub.start()
        try:
            spawn(hub, users[:30], body)
            figures["burst of 30 spawns"] = sum(rpcs_per_minute(seconds).values())
            stop_all(hub, users)
            for running in (2, 8):
                spawn(hub, users[:running], body)
                wait_for(lambda n=running: ready_count(hub, users[:n]) == n, 180, "ready")
                time.sleep(5)
                figures[f"at rest, {running} servers"] = sum(rpcs_per_minute(seconds).values())
                stop_all(hub, users)
        finally:
            hub.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--ours-only", action="store_true", help="leave stock batchspawner out")
    args = parser.parse_args()
    hubs = list(HUBS)[:1] if args.ours_only else list(HUBS)
    wait_for(_cluster_idle, 120, "an idle cluster", step=1)
    background = sum(rpcs_per_minute(args.seconds).values())
    results = {}
    with bench_users(30) as users:
        for name in hubs:
            results[name] = measure(name, users, args.seconds)
    print(
        f"Slurm RPCs per minute caused by the hub (sdiag, all users, less the cluster's own "
        f"{background}/min with no hub), poll interval 30 s:"
    )
    cases = list(next(iter(results.values())))
    print(f"  {'':26}" + "".join(f"{name:>26}" for name in results))
    for case in cases:
        row = "".join(f"{max(0, r[case] - background):>26}" for r in results.values())
        print(f"  {case:26}{row}")


if __name__ == "__main__":
    main()
