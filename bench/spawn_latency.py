"""POST-to-ready spawn latency on an idle cluster: this project's spawner vs stock batchspawner.

Starts hubs on the local cluster's login host in turn (ours with deploy/jupyterhub_config.py,
with internal TLS and without; stock with bench/stock_jupyterhub_config.py, which cannot do
internal TLS: jupyterhub/batchspawner#192), spawns alice's server N times on each (1 GPU, on a
node host across the bridge), and prints the median and the maximum of the time from
POST /hub/api/users/alice/server until the hub reports the server ready. Run after `make demo`
or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/spawn_latency.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hubproc import HUB_CONFIG, REPO, Hub, wait_for

STOCK_CONFIG = REPO / "bench" / "stock_jupyterhub_config.py"


def alice_jobs() -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-u", "alice", "-o", "%i"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def cluster_idle() -> bool:
    """No alice jobs, and every node idle (not still completing the previous round's job)."""
    nodes = subprocess.run(
        ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, check=True
    ).stdout.split()
    return not alice_jobs() and bool(nodes) and all(state == "idle" for state in nodes)


def measure(hub: Hub, options: dict[str, str] | None, rounds: int) -> list[float]:
    alice = hub.login("alice")
    body = {"user_options": options} if options else {}
    times = []
    for _ in range(rounds):
        wait_for(cluster_idle, 60, "an idle cluster", step=0.1)
        begun = time.monotonic()
        response = hub.api(alice, "POST", "/users/alice/server", json=body)
        if response.status_code not in (201, 202):
            raise SystemExit(
                f"spawn failed: {response.status_code} {response.text}\n{hub.log_tail()}"
            )
        wait_for(lambda: (hub.server(alice, "alice") or {}).get("ready"), 120, "ready", step=0.05)
        times.append(time.monotonic() - begun)
        hub.stop_server(alice, "alice")
    return times


def run(
    config: Path, port: int, options: dict[str, str] | None, rounds: int, *, tls: bool
) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as state:
        env = {"PORTAL_INTERNAL_TLS": "1" if tls else "0"}
        hub = Hub(Path(state), port, config=config, env=env)
        hub.start()
        try:
            return measure(hub, options, rounds)
        finally:
            hub.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(["scancel", "-u", "alice"], check=False)
    ours = run(HUB_CONFIG, 8300, {"profile": "gpu-1"}, args.rounds, tls=True)
    plain = run(HUB_CONFIG, 8300, {"profile": "gpu-1"}, args.rounds, tls=False)
    stock = run(STOCK_CONFIG, 8400, None, args.rounds, tls=False)
    print(f"spawn latency, POST to ready, {args.rounds} spawns each on an idle cluster (seconds)")
    print(f"{'':34}{'median':>8}{'max':>8}   all")
    rows = (
        ("ours, internal TLS (the default)", ours),
        ("ours, internal TLS off", plain),
        ("stock SlurmSpawner (no TLS)", stock),
    )
    for name, times in rows:
        shown = " ".join(f"{t:.2f}" for t in times)
        print(f"{name:34}{statistics.median(times):8.2f}{max(times):8.2f}   {shown}")
    median = statistics.median
    print(f"ours with TLS / stock (median): {median(ours) / median(stock):.2f}")
    print(f"cost of internal TLS (median): {100 * (median(ours) / median(plain) - 1):+.0f} %")


if __name__ == "__main__":
    main()
