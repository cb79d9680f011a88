"""The spawn page under load (issue 11): 100 loads of /hub/spawn by 10 users in 10 s, with 8
sessions running and 20 queued, on a hub of the bench's own. Prints the page times (p50, p95,
max) and every Slurm command the hub and its portal ran in that window, the cluster queries of
the spawn page (one per TTL is the target, whatever the number of users) apart.

Makes 38 users of its own (bench001..bench038), removed afterwards. Run as root after
`make demo` or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/spawn_page.py
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cluster_load import (
    CommandLog,
    bench_users,
    is_capacity_query,
    password_of,
    percentile,
    ready_count,
)
from tests.hubproc import Hub, sudo_rule_for, wait_for

PORT = 8600
LOADERS, LOADS_EACH, WINDOW_S = 10, 10, 10.0
RUNNING, QUEUED = 8, 20


def start_sessions(hub: Hub, users: list[str]) -> None:
    """One 1-GPU session each: the first RUNNING fill the 8 GPUs, the rest wait in the queue."""
    for user in users:
        session = hub.login(user, password_of(user))
        body = {"user_options": {"profile": "gpu-1", "runtime": "01:00:00"}}
        response = hub.api(session, "POST", f"/users/{user}/server", json=body)
        if response.status_code not in (201, 202):
            raise SystemExit(f"spawn for {user}: {response.status_code} {response.text}")


def load_pages(hub: Hub, users: list[str]) -> list[float]:
    sessions = {user: hub.login(user, password_of(user)) for user in users}
    times: list[float] = []
    lock = threading.Lock()
    begun = time.monotonic()

    def one_user(user: str, offset: float) -> None:
        for n in range(LOADS_EACH):
            due = begun + offset + n * WINDOW_S / LOADS_EACH
            time.sleep(max(0.0, due - time.monotonic()))
            start = time.monotonic()
            response = sessions[user].get(f"{hub.url}/hub/spawn", timeout=30)
            took = time.monotonic() - start
            if response.status_code != 200 or 'name="profile"' not in response.text:
                raise SystemExit(f"spawn page for {user}: {response.status_code}")
            with lock:
                times.append(took)

    threads = [
        threading.Thread(target=one_user, args=(u, i * WINDOW_S / LOADS_EACH / len(users)))
        for i, u in enumerate(users)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def main() -> None:
    commands = CommandLog()
    with (
        bench_users(LOADERS + RUNNING + QUEUED) as users,
        tempfile.TemporaryDirectory() as state,
        # The wrappers run as users too: the service account's sudo rule must name them.
        sudo_rule_for(commands.folder, "bench-commands"),
    ):
        Path(state).chmod(0o700)
        hub = Hub(Path(state), PORT, env={"PORTAL_SLURM_BIN_DIR": str(commands.folder)})
        hub.start()
        try:
            loaders, sessions = users[:LOADERS], users[LOADERS:]
            start_sessions(hub, sessions)
            wait_for(lambda: ready_count(hub, sessions) >= RUNNING, 180, "8 sessions to run")
            time.sleep(3)  # the spawns' own first calls are over
            since = time.time()
            times = load_pages(hub, loaders)
            until = time.time()
            calls = commands.calls(since, until)
        finally:
            hub.stop()
            commands.remove()
    capacity = [c for c in calls if is_capacity_query(c[1], c[2])]
    others = Counter(c[1] for c in calls if not is_capacity_query(c[1], c[2]))
    print(
        f"Spawn page, {len(times)} loads by {LOADERS} users in {until - since:.1f} s, "
        f"{RUNNING} sessions running and {QUEUED} queued (capacity TTL 10 s):"
    )
    print(
        f"  page time: p50 {percentile(times, 50) * 1000:.0f} ms, "
        f"p95 {percentile(times, 95) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
        "(target p95 < 300 ms)"
    )
    print(
        f"  cluster looks for the spawn pages (sinfo --Node + squeue): "
        f"{len(capacity) // 2} in {until - since:.1f} s (target: at most one per TTL)"
    )
    print(
        "  other Slurm commands of the hub and portal in that window (the session poller "
        "and waiting spawns): "
        + (", ".join(f"{n} {k}" for k, n in sorted(others.items())) or "none")
    )


if __name__ == "__main__":
    main()
