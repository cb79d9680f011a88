"""The week's largest waste of GPUs, by user and by group (Slurm account), for the admins'
page and the metrics: GPU-hours held against GPU-hours used.

Held: GPUs times elapsed time, what Slurm charges. Used: held times the mean utilisation a
session read of its GPUs (gpuportal_adapters.gpu_summary). Only sessions read their GPUs, and
only where nvidia-smi answers: the rest is counted as held and "not measured", never as used
or wasted. From the records' kept use (gpuportal_portal.use_collector), so a page never waits
for sacct.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from gpuportal_portal.models import JobRecord

WEEK = timedelta(days=7)


@dataclass
class WasteRow:
    """One user's or group's week."""

    who: str
    jobs: int = 0
    held: float = 0.0  # GPU-hours held, all jobs
    measured: float = 0.0  # GPU-hours held by jobs whose GPU use was read
    used: float = 0.0  # of those, GPU-hours the GPUs were at work
    core_hours: float = 0.0  # cores times elapsed, where CPU use was gathered
    core_hours_used: float = 0.0

    @property
    def wasted(self) -> float:
        return self.measured - self.used

    @property
    def used_percent(self) -> float | None:
        return 100 * self.used / self.measured if self.measured else None

    @property
    def cpu_percent(self) -> float | None:
        return 100 * self.core_hours_used / self.core_hours if self.core_hours else None

    def add(self, use: dict[str, Any]) -> None:
        self.jobs += 1
        held = float(use.get("gpu_hours") or 0)
        self.held += held
        if use.get("gpu_hours_used") is not None:
            self.measured += held
            self.used += float(use["gpu_hours_used"])
        if use.get("cpu_s") is not None:
            self.core_hours += int(use.get("cores") or 0) * int(use.get("elapsed_s") or 0) / 3600
            self.core_hours_used += float(use["cpu_s"]) / 3600

    def as_dict(self) -> dict[str, Any]:
        def percent(value: float | None) -> float | None:
            return round(value, 1) if value is not None else None

        return {
            "who": self.who,
            "jobs": self.jobs,
            # Hours in 3 decimals: a GPU's minute shows (0.017), not 0.0.
            "gpu_hours": round(self.held, 3),
            "gpu_hours_measured": round(self.measured, 3),
            "gpu_hours_used": round(self.used, 3),
            "gpu_hours_wasted": round(self.wasted, 3),
            "gpu_used_percent": percent(self.used_percent),
            "cpu_percent": percent(self.cpu_percent),
        }


@dataclass(frozen=True)
class WeekWaste:
    since: datetime
    users: list[WasteRow]
    groups: list[WasteRow]
    # Per GPU kind, where Slurm's accounting tracks kinds ("not tracked" for the rest).
    kinds: list[WasteRow] = dataclasses.field(default_factory=list)


def _ranked(rows: Iterable[WasteRow], limit: int) -> list[WasteRow]:
    # The largest waste first; among those not measured, the most held.
    return sorted(rows, key=lambda r: (-r.wasted, -r.held, r.who))[:limit]


def tally(
    uses: Iterable[tuple[str, dict[str, Any]]], limit: int = 20
) -> tuple[list[WasteRow], list[WasteRow]]:
    """(user, use) pairs, ranked per user and per group."""
    users: dict[str, WasteRow] = {}
    groups: dict[str, WasteRow] = {}
    for user, use in uses:
        users.setdefault(user, WasteRow(user)).add(use)
        account = str(use.get("account") or "(no account)")
        groups.setdefault(account, WasteRow(account)).add(use)
    return _ranked(users.values(), limit), _ranked(groups.values(), limit)


def by_kind(uses: Iterable[tuple[str, dict[str, Any]]]) -> list[WasteRow]:
    """The same uses per GPU kind (gpu_type of the kept use, as sacct tracked it); none where
    no kind was tracked at all."""
    kinds: dict[str, WasteRow] = {}
    for _, use in uses:
        if use.get("gpu_hours"):
            kind = str(use.get("gpu_type") or "not tracked")
            kinds.setdefault(kind, WasteRow(kind)).add(use)
    return _ranked(kinds.values(), len(kinds)) if set(kinds) - {"not tracked"} else []


def week_waste(session: Session, now: datetime, limit: int = 20) -> WeekWaste:
    """Jobs and sessions that ended in the 7 days before `now` (aware)."""
    since = now - WEEK
    # Slurm's end times are the cluster's local time, in one ISO form that sorts as text.
    ended_since = since.astimezone().strftime("%Y-%m-%dT%H:%M:%S")
    query = select(JobRecord.user, JobRecord.use).where(
        JobRecord.use.is_not(None), JobRecord.ended_at >= ended_since
    )
    uses = [
        (user, use)
        for user, use in session.execute(query)
        if use and use.get("recorded") is not False
    ]
    users, groups = tally(uses, limit)
    return WeekWaste(since, users, groups, by_kind(uses))
