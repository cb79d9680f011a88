"""A running session's clock: when it ends, how long is left, and how far it may be extended.

Slurm keeps time limits in whole minutes and lets only operators raise one, so an extension is
decided here (within the profile's maximum) and carried out by the hub (gpuportal_spawner.sessions).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from gpuportal_core.jobs import JobInfo
from gpuportal_core.slurm_time import (
    describe_runtime,
    format_runtime,
    limit_seconds,
    slurm_datetime,
)
from gpuportal_core.states import Phase

# What the extend menu offers, before trimming to what the profile still allows.
EXTEND_STEPS = (30 * 60, 3600, 2 * 3600, 4 * 3600)


class ExtendRefused(ValueError):
    """An extension that is not allowed; the message says what is."""


@dataclass(frozen=True)
class SessionClock:
    """When a job started and its time limit (seconds; None: Slurm sets none)."""

    started: datetime | None
    limit: int | None

    @classmethod
    def of(cls, info: JobInfo) -> SessionClock:
        limit = limit_seconds(info.time_limit) if info.time_limit else None
        started = info.phase in (Phase.RUNNING, Phase.SUSPENDED)
        return cls(slurm_datetime(info.start) if started else None, limit)

    @property
    def ends(self) -> datetime | None:
        if self.started is None or self.limit is None:
            return None
        return self.started + timedelta(seconds=self.limit)

    def left(self, now: datetime) -> int | None:
        """Seconds until the time limit, never below 0; None when not known."""
        ends = self.ends
        return None if ends is None else max(0, int((ends - now).total_seconds()))


def extension_room(limit: int | None, maximum: int) -> int:
    """How many more seconds the profile allows, in whole minutes (0: none)."""
    if limit is None:
        return 0
    return max(0, (maximum - limit) // 60 * 60)


def extend_steps(limit: int | None, maximum: int) -> list[int]:
    """The menu: the usual steps that fit, and all that is left (up to the maximum)."""
    room = extension_room(limit, maximum)
    steps = [step for step in EXTEND_STEPS if step <= room]
    if room and room not in steps:
        steps.append(room)
    return sorted(steps)


def extended_limit(*, limit: int | None, add: int, maximum: int, profile: str) -> int:
    """The new time limit for adding `add` seconds, or ExtendRefused saying why not."""
    if limit is None:
        raise ExtendRefused("this session has no time limit to extend")
    if add < 60 or add % 60:
        raise ExtendRefused("add whole minutes, at least 00:01:00 (e.g. 01:00:00)")
    room = extension_room(limit, maximum)
    if room == 0:
        raise ExtendRefused(
            f"this session already has the maximum of {describe_runtime(maximum)} "
            f"that profile {profile} allows"
        )
    if add > room:
        raise ExtendRefused(
            f"at most {format_runtime(room)} more: profile {profile} allows "
            f"{describe_runtime(maximum)} in all and this session has {describe_runtime(limit)}"
        )
    return limit + add


def describe_left(seconds: int | None) -> str:
    """ "2 h 5 min left", "under a minute left", or "" when not known."""
    if seconds is None:
        return ""
    if seconds < 60:
        return "under a minute left"
    return f"{describe_runtime(seconds)} left"
