"""GPU-hours a user and their group used this week and this month, from Slurm's accounting
(sacct: each job's GPUs times its elapsed time), and the group's fair-share standing (sshare).

Sessions, batch jobs and Dask workers all count: Slurm charges GPUs, not what ran on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

# sacct -X -n -P -S START --format=SACCT_GPU_FORMAT: one line per job (allocations only).
SACCT_GPU_FORMAT = "User,Account,AllocTRES,ElapsedRaw"
# sshare -n -P -U -u USER --format=SSHARE_FORMAT: the user's line in each of their accounts.
SSHARE_FORMAT = "Account,User,FairShare"
_GPUS = re.compile(r"gres/gpu(?::[^=,]+)?=(\d+)")


def gpus_of(tres: str) -> int:
    """GPUs in an AllocTRES ("billing=8,cpu=8,gres/gpu=1,mem=48G,node=1"); typed GPUs are
    counted once (Slurm lists gres/gpu=2 and gres/gpu:a100=2 for the same two)."""
    untyped = re.search(r"gres/gpu=(\d+)", tres)
    if untyped:
        return int(untyped.group(1))
    return sum(int(n) for n in _GPUS.findall(tres))


def gpu_hours(text: str) -> dict[tuple[str, str], float]:
    """GPU-hours per (user, account) from SACCT_GPU_FORMAT lines."""
    hours: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 4 or not parts[3].isdigit():
            continue
        user, account, tres, elapsed = parts[:4]
        used = gpus_of(tres) * int(elapsed) / 3600
        if used:
            hours[(user, account)] = hours.get((user, account), 0.0) + used
    return hours


def week_start(now: datetime) -> datetime:
    """Monday 00:00 of this week (the cluster's local time, as Slurm takes -S)."""
    monday = now - timedelta(days=now.weekday())
    return monday.replace(hour=0, minute=0, second=0, microsecond=0)


def month_start(now: datetime) -> datetime:
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class FairShare:
    account: str
    value: float | None  # Slurm's FairShare factor, 0..1; None: not tracked (priority/basic)

    def words(self) -> str:
        if self.value is None:
            return (
                "This cluster schedules jobs in the order they come (no fair share): what you "
                "used does not change your place in the queue."
            )
        if self.value >= 0.5:
            return (
                f"Your group {self.account} has used less than its share lately: its jobs go "
                f"ahead of those of groups that used more (fair share {self.value:.2f})."
            )
        return (
            f"Your group {self.account} has used more than its share lately: its jobs wait "
            f"behind those of groups that used less, until the use decays "
            f"(fair share {self.value:.2f})."
        )


def parse_fairshare(text: str, user: str) -> list[FairShare]:
    """The user's lines of SSHARE_FORMAT output (indented by the account tree)."""
    found = []
    for line in text.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3 or parts[1] != user:
            continue
        try:
            value: float | None = float(parts[2]) if parts[2] else None
        except ValueError:
            value = None
        found.append(FairShare(parts[0], value))
    return found
