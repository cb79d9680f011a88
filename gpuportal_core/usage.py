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
# sshare -n -P -u USER --format=SSHARE_FORMAT: the accounts above the user (User empty), with
# their GPU-minute limit and Slurm's count against it, and the user's line in each account.
SSHARE_FORMAT = "Account,User,FairShare,GrpTRESMins,GrpTRESRaw"
_GPUS = re.compile(r"gres/gpu(?::[^=,]+)?=(\d+)")


def gpus_of(tres: str) -> int:
    """GPUs in an AllocTRES ("billing=8,cpu=8,gres/gpu=1,mem=48G,node=1"); typed GPUs are
    counted once (Slurm lists gres/gpu=2 and gres/gpu:a100=2 for the same two)."""
    untyped = re.search(r"gres/gpu=(\d+)", tres)
    if untyped:
        return int(untyped.group(1))
    return sum(int(n) for n in _GPUS.findall(tres))


def gpus_by_kind(tres: str) -> dict[str, int]:
    """GPUs per kind in an AllocTRES: {"a100": 2} where Slurm's accounting tracks the kind
    (AccountingStorageTRES lists gres/gpu:a100), else {"": 2}; {} without GPUs."""
    typed = {kind: int(n) for kind, n in re.findall(r"gres/gpu:([^=,]+)=(\d+)", tres)}
    if typed:
        return typed
    total = gpus_of(tres)
    return {"": total} if total else {}


def gpu_hours(text: str) -> dict[tuple[str, str, str], float]:
    """GPU-hours per (user, account, kind) from SACCT_GPU_FORMAT lines ("" for a kind the
    accounting does not track)."""
    hours: dict[tuple[str, str, str], float] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 4 or not parts[3].isdigit():
            continue
        user, account, tres, elapsed = parts[:4]
        for kind, gpus in gpus_by_kind(tres).items():
            key = (user, account, kind)
            hours[key] = hours.get(key, 0.0) + gpus * int(elapsed) / 3600
    return hours


def hours_by_kind(hours: dict[tuple[str, str, str], float]) -> dict[str, float]:
    """The GPU-hours of gpu_hours() per kind, whoever used them."""
    kinds: dict[str, float] = {}
    for (_, _, kind), used in hours.items():
        kinds[kind] = kinds.get(kind, 0.0) + used
    return kinds


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
    # The account's GPU-hour limit (GrpTRESMins gres/gpu) and Slurm's count against it
    # (GrpTRESRaw, decayed as fair share is); None: no limit, no count.
    gpu_hours_limit: float | None = None
    gpu_hours_counted: float | None = None

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


def limits_words(account: str, gpus_at_once: int | None, share: FairShare | None) -> str:
    """The account's limits from Slurm's accounting, in words."""
    said = (
        f"{account} may hold at most {gpus_at_once} GPUs at once"
        if gpus_at_once is not None
        else f"{account} has no limit on GPUs at once"
    )
    if share is None or share.gpu_hours_limit is None:
        return said + " and no limit on GPU-hours."
    counted = share.gpu_hours_counted or 0.0
    left = max(0.0, share.gpu_hours_limit - counted)
    return (
        f"{said}, and {share.gpu_hours_limit:g} GPU-hours in all: Slurm counts {counted:.1f} "
        f"used ({left:.1f} left); jobs wait once it is reached."
    )


def _gpu_minutes(tres: str) -> float | None:
    return float(gpus_of(tres)) if _GPUS.search(tres) else None


def parse_fairshare(text: str, user: str) -> list[FairShare]:
    """The user's lines of SSHARE_FORMAT output (indented by the account tree), each with its
    account's GPU-hour limit from the account's line."""
    limits: dict[str, tuple[float | None, float | None]] = {}
    mine: list[tuple[str, float | None]] = []
    for line in text.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3:
            continue
        parts += [""] * (5 - len(parts))
        account, who, fair = parts[:3]
        if not who:
            limit, raw = _gpu_minutes(parts[3]), _gpu_minutes(parts[4])
            limits[account] = (
                limit / 60 if limit is not None else None,
                raw / 60 if raw is not None and limit is not None else None,
            )
            continue
        if who != user:
            continue
        try:
            value: float | None = float(fair) if fair else None
        except ValueError:
            value = None
        mine.append((account, value))
    return [
        FairShare(account, value, *limits.get(account, (None, None))) for account, value in mine
    ]
