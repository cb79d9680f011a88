"""How good "expected start" is (issue 11): for sessions that have to wait, the start the spawn
page predicted just before the click, Slurm's own estimate once the job waits (squeue %S), and
the start that came, side by side.

The bench fills the GPUs with jobs of its own: gpu01 with one 4-GPU job that runs to its 3-min
limit, gpu02 with a 2-GPU job that runs to its 2-min limit and one that ends after 1 min of its
4-min limit (an estimate from time limits cannot know that; it is shown). Then four users of its
own spawn one after the other. Takes about 5 minutes; users bench001..bench004 are removed
afterwards. Run as root after `make demo` or `make test` has set up the cluster:

    /opt/gpuportal/venv/bin/python bench/estimate_accuracy.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cluster_load import bench_users, password_of
from tests.hubproc import Hub, wait_for

PORT = 8800
TTL_S = 10  # the hub's capacity TTL: wait one between spawns so each sees the one before
BLOCKERS = [  # node, GPUs, limit (min), runs for (s)
    ("gpu01", 4, 3, 180),
    ("gpu02", 2, 2, 120),
    ("gpu02", 2, 4, 60),
]
# Each waits for a blocker, none for another session: a session (JupyterLab) runs to its limit,
# which would make the bench last hours.
SPAWNS = ["gpu-4", "gpu-2", "gpu-1", "gpu-1"]


def block(node: str, gpus: int, minutes: int, seconds: int) -> str:
    return subprocess.run(
        [
            "sbatch",
            "--parsable",
            "-p",
            "gpu",
            f"-w{node}",
            f"--gres=gpu:{gpus}",
            f"--time={minutes}",
            "--output=/dev/null",
            f"--wrap=sleep {seconds}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def squeue(user: str, fmt: str) -> str:
    out = subprocess.run(["squeue", "-h", "-u", user, "-o", fmt], capture_output=True, text=True)
    return out.stdout.strip()


def when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def main() -> None:
    rows = []
    with bench_users(len(SPAWNS)) as users, tempfile.TemporaryDirectory() as state:
        Path(state).chmod(0o700)
        hub = Hub(Path(state), PORT)
        hub.start()
        try:
            blockers = [block(*b) for b in BLOCKERS]
            wait_for(lambda: squeue("root", "%T").split() == ["RUNNING"] * 3, 60, "blockers")
            for user, profile in zip(users, SPAWNS, strict=True):
                time.sleep(TTL_S + 1)
                session = hub.login(user, password_of(user))
                view = session.get(f"{hub.url}/hub/gpuportal/capacity", timeout=30).json()
                predicted = when(view["profiles"][profile]["start"])
                body = {"user_options": {"profile": profile, "runtime": "00:05:00"}}
                response = hub.api(session, "POST", f"/users/{user}/server", json=body)
                if response.status_code not in (201, 202):
                    raise SystemExit(f"spawn for {user}: {response.status_code} {response.text}")
                rows.append({"user": user, "profile": profile, "predicted": predicted})
            time.sleep(5)
            for row in rows:
                row["slurm"] = when(squeue(str(row["user"]), "%S"))
            for row in rows:
                try:
                    wait_for(lambda u=row["user"]: squeue(str(u), "%T") == "RUNNING", 400, "start")
                except AssertionError:
                    raise SystemExit(f"{row['user']} did not start:\n{hub.log_tail(60)}") from None
                row["actual"] = when(squeue(str(row["user"]), "%S"))
        finally:
            hub.stop()
            subprocess.run(["scancel", *blockers], capture_output=True)
    print(
        "Expected start vs the start that came, for sessions that waited (blockers: "
        + "; ".join(f"{n} {g} GPUs {m} min limit, ran {s} s" for n, g, m, s in BLOCKERS)
        + "):"
    )
    print(f"  {'session':18}{'predicted (form)':>18}{'Slurm (%S)':>14}{'actual':>10}{'error':>10}")
    for row in rows:
        predicted, actual = row["predicted"], row["actual"]
        error = (actual - predicted).total_seconds() if predicted and actual else None  # type: ignore[operator]
        print(
            f"  {row['user']} {row['profile']:9}"
            f"{_hms(predicted):>18}{_hms(row['slurm']):>14}{_hms(actual):>10}"
            f"{'' if error is None else f'{error:+.0f} s':>10}"
        )


def _hms(value: object) -> str:
    return value.strftime("%H:%M:%S") if isinstance(value, datetime) else "-"


if __name__ == "__main__":
    main()
