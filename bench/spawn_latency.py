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
import datetime
import itertools
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cluster import STATE
from tests.hubproc import HUB_CONFIG, REPO, Hub, wait_for

STOCK_CONFIG = REPO / "bench" / "stock_jupyterhub_config.py"
SLURMCTLD_LOG = STATE / "log" / "slurmctld.log"
# The four legs of one of our spawns, from the hub's and slurmctld's logs.
LEGS = (
    "hub: POST to sbatch done",
    "Slurm: sbatch to the job placed",
    "job: placed to port reported",
    "JupyterLab: port to ready",
)


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


def log_time(stamp: str) -> float:
    """A log's local wall-clock stamp ('2026-11-24 14:23:16.759' or '2026-11-24T14:23:16.759')
    as seconds since the epoch."""
    return datetime.datetime.fromisoformat(stamp.replace("T", " ")).timestamp()


def first_time(text: str, pattern: str) -> float | None:
    found = re.search(pattern, text, re.MULTILINE)
    return log_time(found.group(1)) if found else None


def legs_of(hub: Hub, posted: float, ready: float) -> list[float] | None:
    """Where one spawn's time went (LEGS), from the 'Submitted job N' and 'reported port'
    lines of the hub's log and the job's 'Allocate' line in slurmctld's; None if one is
    missing (a log rotated, or stock batchspawner, which logs other lines)."""
    hub_log = hub.log_path.read_text(errors="replace")
    jobs = re.findall(r"Submitted job (\d+)", hub_log)
    if not jobs:
        return None
    job = jobs[-1]
    stamp = r"^\[\w (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)"
    submitted = first_time(hub_log, stamp + rf".*Submitted job {job} ")
    reported = first_time(
        hub_log[hub_log.rfind(f"Submitted job {job} ") :], stamp + ".*reported port"
    )
    placed = first_time(
        SLURMCTLD_LOG.read_text(errors="replace"),
        r"^\[(\S+)\] sched: Allocate JobId=" + job + " ",
    )
    if submitted is None or reported is None or placed is None:
        return None
    marks = [posted, submitted, placed, reported, ready]
    return [later - earlier for earlier, later in itertools.pairwise(marks)]


def measure(
    hub: Hub, options: dict[str, str] | None, rounds: int, legs: list[list[float]]
) -> list[float]:
    alice = hub.login("alice")
    body = {"user_options": options} if options else {}
    times = []
    for _ in range(rounds):
        wait_for(cluster_idle, 60, "an idle cluster", step=0.1)
        posted = time.time()
        begun = time.monotonic()
        response = hub.api(alice, "POST", "/users/alice/server", json=body)
        if response.status_code not in (201, 202):
            raise SystemExit(
                f"spawn failed: {response.status_code} {response.text}\n{hub.log_tail()}"
            )
        wait_for(lambda: (hub.server(alice, "alice") or {}).get("ready"), 120, "ready", step=0.05)
        times.append(time.monotonic() - begun)
        split = legs_of(hub, posted, time.time())
        if split is not None:
            legs.append(split)
        hub.stop_server(alice, "alice")
    return times


def run(
    config: Path,
    port: int,
    options: dict[str, str] | None,
    rounds: int,
    *,
    tls: bool,
    legs: list[list[float]] | None = None,
) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as state:
        env = {"PORTAL_INTERNAL_TLS": "1" if tls else "0"}
        hub = Hub(Path(state), port, config=config, env=env)
        hub.start()
        try:
            return measure(hub, options, rounds, [] if legs is None else legs)
        finally:
            hub.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-stock", action="store_true", help="ours only (a quicker look)")
    args = parser.parse_args()
    subprocess.run(["scancel", "-u", "alice"], check=False)
    median = statistics.median
    legs: dict[str, list[list[float]]] = {"TLS": [], "no TLS": []}
    ours = run(HUB_CONFIG, 8300, {"profile": "gpu-1"}, args.rounds, tls=True, legs=legs["TLS"])
    plain = run(HUB_CONFIG, 8300, {"profile": "gpu-1"}, args.rounds, tls=False, legs=legs["no TLS"])
    rows = [("ours, internal TLS (the default)", ours), ("ours, internal TLS off", plain)]
    if not args.no_stock:
        rows.append(
            ("stock SlurmSpawner (no TLS)", run(STOCK_CONFIG, 8400, None, args.rounds, tls=False))
        )
    print(f"spawn latency, POST to ready, {args.rounds} spawns each on an idle cluster (seconds)")
    print(f"{'':34}{'median':>8}{'max':>8}   all")
    for name, times in rows:
        shown = " ".join(f"{t:.2f}" for t in times)
        print(f"{name:34}{median(times):8.2f}{max(times):8.2f}   {shown}")
    if not args.no_stock:
        print(f"ours with TLS / stock (median): {median(ours) / median(rows[2][1]):.2f}")
    print(f"cost of internal TLS (median): {100 * (median(ours) / median(plain) - 1):+.0f} %")
    print("where ours spends it, median of each leg (seconds):")
    print(f"{'':36}{'TLS':>8}{'no TLS':>8}")
    for index, name in enumerate(LEGS):
        shown = "".join(
            f"{median(split[index] for split in splits) if splits else float('nan'):8.2f}"
            for splits in legs.values()
        )
        print(f"  {name:34}{shown}")


if __name__ == "__main__":
    main()
