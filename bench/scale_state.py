"""What bench/scale.py's phases share (`Run`: the hub, the users' browser sessions, what went
wrong) and what they read from the hub and from Slurm."""

from __future__ import annotations

import contextlib
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import requests

from bench.cluster_load import (
    CommandLog,
)
from bench.page_load import Timings
from bench.proc_usage import Usage, hub_usage, process_usage
from tests.hubproc import Hub

# The admin whose jobs hold the GPUs beyond the runnable ones, and who lists the users. The tests'
# second lane passes its own (grace): the first lane's tests cancel every job of carol's.
ADMIN = "carol"
PAGINATED = {"Accept": "application/jupyterhub-pagination+json"}


@dataclass
class Run:
    """What the phases share: the hub, the users' browser sessions, the admin's jobs that hold
    the GPUs beyond the runnable ones (one per node: (job id, GPUs)), and what went wrong."""

    hub: Hub
    users: list[str]
    admin_name: str = ADMIN
    sessions: dict[str, requests.Session] = field(default_factory=dict)
    blockers: list[tuple[str, int]] = field(default_factory=list)
    problems: Counter[str] = field(default_factory=Counter)
    ready_after_burst: set[str] = field(default_factory=set)
    promoted: list[int] = field(default_factory=list)  # sessions started per freed node
    lab_cpu_s: float = 0.0  # JupyterLab's start in CPU seconds, as the burst measured it
    seconds: dict[str, list[float]] = field(default_factory=dict)  # "phase: kind" -> timings
    commands: CommandLog | None = None  # the hub's and its services' Slurm commands, logged

    def keep(self, phase: str, timings: Timings) -> None:
        self.problems += timings.errors
        self.seconds.update({f"{phase}: {kind}": v for kind, v in timings.seconds.items()})

    @property
    def admin(self) -> requests.Session:
        return self.sessions[self.admin_name]

    def usage(self) -> dict[str, Usage]:
        assert self.hub.proc is not None
        return hub_usage(self.hub.proc.pid)


# -- what the hub and Slurm say ------------------------------------------------------------


def users_in_state(run: Run, state: str) -> set[str]:
    """Users with a server in `state` (ready, active), by the hub's own paged list."""
    found: set[str] = set()
    offset = 0
    while True:
        answer = run.admin.get(
            f"{run.hub.url}/hub/api/users",
            params={"state": state, "offset": str(offset), "limit": "200"},
            headers=PAGINATED,
            timeout=60,
        ).json()
        found |= {user["name"] for user in answer["items"] if user["name"] in run.users}
        following = answer["_pagination"].get("next")
        if not following:
            return found
        offset = following["offset"]


def server_ready(run: Run, user: str) -> bool:
    """Whether the hub says the user's default server is ready (one user's model: cheap,
    unlike a list of every ready server)."""
    answer = run.admin.get(f"{run.hub.url}/hub/api/users/{user}", timeout=60)
    answer.raise_for_status()
    server = answer.json().get("servers", {}).get("")
    return bool(server and server.get("ready"))


def _squeue(field: str, *options: str) -> list[str]:
    """One field (a squeue format such as %u) of every job squeue lists with these options."""
    return subprocess.run(
        ["squeue", "-h", *options, "-o", field], capture_output=True, text=True, check=True
    ).stdout.split()


def running_users(users: list[str]) -> set[str]:
    """The users with a running job, as Slurm lists them."""
    return set(_squeue("%u", "--states=RUNNING")) & set(users)


def live_jobs(users: list[str]) -> Counter[str]:
    """Live (pending, running, ...) jobs per user, as Slurm lists them."""
    wanted = set(users)
    return Counter(user for user in _squeue("%u") if user in wanted)


def job_starts(users: set[str]) -> list[float]:
    """When Slurm started the users' running jobs (epoch seconds, to the second)."""
    if not users:
        return []
    starts = _squeue("%S", "--states=RUNNING", f"--user={','.join(sorted(users))}")
    return [datetime.fromisoformat(start).timestamp() for start in starts]


def processes_of(users: list[str]) -> int:
    """Processes of the users left on any host (the hosts share this machine's processes)."""
    uids = {str(int(subprocess.check_output(["id", "-u", user]))) for user in users}
    out = subprocess.run(["ps", "-e", "-o", "uid="], capture_output=True, text=True).stdout
    return sum(1 for uid in out.split() if uid in uids)


def jupyterlab_cpu_s(users: list[str]) -> tuple[float, int]:
    """CPU seconds the users' JupyterLab processes have used so far, and how many there are."""
    if not users:
        return 0.0, 0
    uids = {int(subprocess.check_output(["id", "-u", user])) for user in users}
    total, count = 0.0, 0
    for path in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_uid not in uids:
                continue
            if "singleuser" not in (path / "cmdline").read_text():
                continue
            total += process_usage(int(path.name)).cpu_s
            count += 1
    return total, count
