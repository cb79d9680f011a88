"""Capture what a real Slurm answers to each command of the Slurm command layer.

    sudo python -m tests.slurm_capture     (as root, with the local cluster running)

Runs every query of gpuportal_adapters.slurm.SlurmClient, with the argv it builds, against the
running cluster, after setting up what the answers should show: alice's running 2-GPU job,
bob's queued job (BeginTime), a finished job and an array (for sacct and scontrol), a
reservation (maintenance). Writes what each command printed to
tests/golden/slurm/<release>.json, which tests/unit/core/test_slurm_releases.py reads: one
file per Slurm release the product supports, captured from its real daemons
(docs/reference/support.md).
Leaves nothing behind: the jobs are cancelled and the reservation deleted.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import gpuportal_adapters.slurm as slurm_module
from gpuportal_adapters.slurm import SlurmClient
from gpuportal_adapters.slurm_commands import CommandResult

OUT = Path(__file__).resolve().parent / "golden" / "slurm"
RESERVATION = "capture-maintenance"


def release() -> str:
    said = subprocess.run(["sinfo", "--version"], capture_output=True, text=True, check=True)
    return ".".join(said.stdout.split()[1].split(".")[:2])  # "slurm 24.11.5" -> "24.11"


def as_user(user: str, *argv: str) -> str:
    done = subprocess.run(
        ["runuser", "-u", user, "--", *argv], capture_output=True, text=True, check=True
    )
    return done.stdout.strip().split(";")[0]


def wait_for(job_id: str, states: set[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        said = subprocess.run(
            ["sacct", "-X", "-n", "-P", "--format=State", f"-j{job_id}"],
            capture_output=True,
            text=True,
        ).stdout.split()
        if said and said[0].split()[0] in states:
            return
        time.sleep(1)
    raise RuntimeError(f"job {job_id} did not reach {states}")


def set_up() -> dict[str, str]:
    """The jobs and the reservation the answers should show; their ids."""
    sbatch = [
        "sbatch",
        "--parsable",
        "-p",
        "gpu",
        "-c",
        "2",
        "--mem=2G",
        "-t",
        "30",
        "--chdir=/tmp",
        "--output=/dev/null",
    ]
    done = as_user("alice", *sbatch, "--gres=gpu:1", "--wrap", "sleep 2")
    array = as_user("bob", *sbatch, "--gres=gpu:1", "--array=0-1", "--wrap", "sleep 1")
    wait_for(done, {"COMPLETED"})
    wait_for(array + "_1", {"COMPLETED"})
    running = as_user(
        "alice", *sbatch, "--gres=gpu:2", "--comment=gpuportal:capture", "--wrap", "sleep 600"
    )
    queued = as_user("bob", *sbatch, "--gres=gpu:1", "--begin=now+1hour", "--wrap", "sleep 60")
    wait_for(running, {"RUNNING"})
    start = (datetime.now() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S")
    subprocess.run(
        [
            "scontrol",
            "create",
            "reservation",
            f"reservation={RESERVATION}",
            "users=root",
            f"starttime={start}",
            "duration=120",
            "nodes=ALL",
            "flags=maint",
        ],
        check=True,
        capture_output=True,
    )
    return {"running": running, "queued": queued, "done": done, "array": array}


def clean_up(ids: dict[str, str]) -> None:
    subprocess.run(["scancel", ids["running"], ids["queued"]], check=False)
    subprocess.run(["scontrol", "delete", f"reservation={RESERVATION}"], check=False)


async def query(ids: dict[str, str]) -> dict[str, Any]:
    """Each of the client's commands, recorded: {name: argv, returncode, stdout, stderr}."""
    records: dict[str, Any] = {}
    real_run = slurm_module.run_command
    current = {"name": ""}

    async def recording(argv: list[str], **kwargs: Any) -> CommandResult:
        result = await real_run(argv, **kwargs)
        if argv[-2:] == ["show", "config"]:  # fair_share's first command
            records["show_config_priority"] = kept_config(result)
            return result
        records[current["name"]] = {
            "argv": list(argv),
            "returncode": result.returncode,
            "stdout": result.stdout,
            "stderr": result.stderr,
        }
        return result

    slurm_module.run_command = recording  # type: ignore[assignment]
    client = SlurmClient()
    running, queued, done, array = ids["running"], ids["queued"], ids["done"], ids["array"]
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "jobs": lambda: client.jobs([running, queued, done]),
        "jobs_gone": lambda: client.jobs(["999999"]),
        "tagged": lambda: client.tagged("gpuportal:capture", alive_only=False),
        "job_details": lambda: client.job_details(running),
        "job_details_array": lambda: client.job_details(array),
        "accounting": lambda: client.accounting(done),
        "accounting_array": lambda: client.accounting(array),
        "associations": client.associations,
        "gpu_nodes": client.gpu_nodes,
        "gpu_jobs": client.gpu_jobs,
        "use": lambda: client.use(done),
        "gpu_hours": lambda: client.gpu_hours(
            since=datetime.now() - timedelta(hours=1), user="alice"
        ),
        "fair_share": lambda: client.fair_share("alice"),
        "reservations": client.reservations,
        "partitions": client.partitions,
        "ping": lambda: client.ping(timeout=10),
        "set_time_limit": lambda: client.set_time_limit(running, 45 * 60),
        "cancel": lambda: client.cancel(queued, user="bob"),
    }
    for name, call in calls.items():
        current["name"] = name
        await call()
    return records


def kept_config(result: CommandResult) -> dict[str, Any]:
    """What fair_share reads of `scontrol show config`: the priority plugin (and the release),
    kept without the rest of the cluster's settings."""
    kept = [
        line
        for line in result.stdout.splitlines()
        if line.startswith(("PriorityType", "SLURM_VERSION"))
    ]
    return {
        "argv": ["scontrol", "show", "config"],
        "returncode": result.returncode,
        "stdout": "".join(line + "\n" for line in kept),
        "stderr": "",
    }


def main() -> None:
    ids = set_up()
    try:
        commands = asyncio.run(query(ids))
    finally:
        clean_up(ids)
    captured = {"release": release(), "jobs": ids, "commands": commands}
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{captured['release']}.json"
    path.write_text(json.dumps(captured, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path} ({len(commands)} commands)")


if __name__ == "__main__":
    main()
