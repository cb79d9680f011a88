"""When a session is culled, and the words that tell its user why (issue 13).

Three rules, each a per-profile limit in seconds (0: never), a field of the profile's spec that
names its rule (gpuportal_core.profiles.culling_fields; a `Reason` here, by its value):

- idle: nobody used JupyterLab for `idle_limit` (the hub's last_activity, which the idle
  culler reads);
- GPU idle: the job's GPUs were measured idle for `gpu_idle_limit`, even while an open browser
  tab keeps JupyterLab "active" (the session measures them: gpuportal_session.gpu_activity);
- queued: the job waited in Slurm's queue for `queue_limit`. jupyterhub-idle-culler never looks
  at a server that is still starting, so the spawner's own wait loop applies this one.

The idle culler (a hub service) asks the hub before it stops a server (gpuportal_spawner.culling),
and the hub answers from here; the answer and the home page's note use the same words.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpuportal_core.profiles import ProfileSpec, culling_fields
from gpuportal_core.slurm_time import describe_runtime


class Reason(enum.Enum):
    IDLE = "idle"
    GPU_IDLE = "gpu_idle"
    QUEUED = "queued"


# "As long as Slurm keeps the job": the hub's wait for a spawn needs a number (a week).
UNLIMITED_QUEUE_WAIT = 7 * 24 * 3600


@dataclass(frozen=True)
class CullLimits:
    """A profile's culling limits, in seconds; 0 means never. One field per `Reason`, named by
    its value."""

    idle: int = 0
    gpu_idle: int = 0
    queued: int = 0

    @classmethod
    def of(cls, spec: ProfileSpec) -> CullLimits:
        """The limits of a profile, from the spec's culling fields."""
        return cls(**{rule: getattr(spec, name) for rule, (name, _) in culling_fields().items()})

    def as_state(self) -> dict[str, int]:
        return {reason.value: self.limit(reason) for reason in Reason}

    @classmethod
    def from_state(cls, state: Any) -> CullLimits:
        if not isinstance(state, Mapping):
            return cls()
        return cls(**{reason.value: _seconds(state.get(reason.value)) for reason in Reason})

    def limit(self, reason: Reason) -> int:
        seconds: int = getattr(self, reason.value)
        return seconds

    def start_wait(self, startup: int) -> int:
        """How long the hub may wait for such a session to start, in seconds: its time in the
        queue plus `startup`, what JupyterLab may take once its job runs.

        The hub ends a spawn that takes longer than this (its start_timeout), so it must not be
        shorter than the queue limit: a GPU job often waits longer than any fixed timeout, and
        the queue limit (applied by the spawner, with words saying so) is what ends such a
        wait. With no queue limit, the session waits as long as Slurm keeps its job.
        """
        return startup + (self.queued or UNLIMITED_QUEUE_WAIT)


def _seconds(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


class GpuReportError(ValueError):
    """A GPU report from a session that does not have the expected shape."""


@dataclass(frozen=True)
class GpuUse:
    """What a session measured of its GPUs, as it last reported.

    busy_at: the last sample in which one of its GPUs was at work (None: none yet, so idle
    since `since`, when measuring began). Not measured: `note` says why ("no nvidia-smi on
    gpu01"), and the GPU rule does not apply.
    """

    measured: bool
    since: datetime
    busy_at: datetime | None = None
    note: str = ""
    utilisation: tuple[int, ...] = ()

    def idle_seconds(self, now: datetime) -> float | None:
        if not self.measured:
            return None
        return max(0.0, (now - (self.busy_at or self.since)).total_seconds())

    def describe(self, now: datetime) -> str:
        """One line for the session card: what the GPUs do, or why it is not known."""
        if not self.measured:
            return f"GPU use not measured: {self.note or 'no reading'}"
        used = ", ".join(f"{value}%" for value in self.utilisation) or "no GPUs"
        idle = self.idle_seconds(now) or 0.0
        if idle < 60:
            return f"GPU use now: {used}"
        return f"GPU use now: {used}; idle for {describe_runtime(int(idle))}"

    @classmethod
    def from_report(cls, report: Any) -> GpuUse:
        """A report as the session posts it; GpuReportError names what is wrong."""
        if not isinstance(report, Mapping):
            raise GpuReportError("the report must be a JSON object")
        measured = report.get("measured")
        if not isinstance(measured, bool):
            raise GpuReportError("'measured' must be true or false")
        since = _when(report.get("since"), "since")
        if since is None:
            raise GpuReportError("'since' is needed: when measuring began (ISO 8601)")
        values = report.get("utilisation") or []
        if not isinstance(values, list) or not all(
            isinstance(v, int) and 0 <= v <= 100 for v in values
        ):
            raise GpuReportError("'utilisation' must be a list of percentages (0-100)")
        note = report.get("note") or ""
        if not isinstance(note, str):
            raise GpuReportError("'note' must be text")
        return cls(
            measured=measured,
            since=since,
            busy_at=_when(report.get("busy_at"), "busy_at"),
            note=note[:200],
            utilisation=tuple(values[:16]),
        )


def _when(value: Any, name: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        raise GpuReportError(f"'{name}' must be an ISO 8601 time, got {value!r}") from None
    if when.tzinfo is None:
        raise GpuReportError(f"'{name}' must carry its time zone (e.g. +00:00)")
    return when


@dataclass(frozen=True)
class CullPlan:
    """The rule that culls a session first, and in how many seconds (0 or less: now)."""

    reason: Reason | None
    in_seconds: float

    @property
    def due(self) -> bool:
        return self.reason is not None and self.in_seconds <= 0


NEVER = CullPlan(None, math.inf)


def plan(limits: CullLimits, *, inactive: float, gpu: GpuUse | None, now: datetime) -> CullPlan:
    """Which rule culls a running session first: inactive is seconds since last activity."""
    candidates: list[CullPlan] = []
    if limits.idle:
        candidates.append(CullPlan(Reason.IDLE, limits.idle - inactive))
    gpu_idle = gpu.idle_seconds(now) if gpu is not None else None
    if limits.gpu_idle and gpu_idle is not None:
        candidates.append(CullPlan(Reason.GPU_IDLE, limits.gpu_idle - gpu_idle))
    return min(candidates, key=lambda p: p.in_seconds, default=NEVER)


def cull_message(reason: Reason, limit: int, job_id: str) -> str:
    """What the home page says of a culled session."""
    limit_words = describe_runtime(limit)
    if reason is Reason.IDLE:
        return (
            f"Your session (job {job_id}) was stopped after {limit_words} without use, its "
            "profile's idle limit, so that its GPUs go to others who wait. Your files are kept."
        )
    if reason is Reason.GPU_IDLE:
        return (
            f"Your session (job {job_id}) was stopped because its GPUs were idle for "
            f"{limit_words}, its profile's limit, even though JupyterLab was open. Your files "
            "are kept."
        )
    return (
        f"Your session waited in the queue for {limit_words}, its profile's limit, so its job "
        f"{job_id} was cancelled rather than start later with nobody there. Pick a profile "
        "with free GPUs, or try again later."
    )


def warning(plan: CullPlan, limits: CullLimits) -> str:
    """The warning JupyterLab and the session card show before a cull."""
    if plan.reason is None:
        return ""
    left = describe_runtime(max(60, int(plan.in_seconds)))
    limit = describe_runtime(limits.limit(plan.reason))
    if plan.reason is Reason.GPU_IDLE:
        return (
            f"Your GPUs have been idle; this session is stopped in {left} unless they are used "
            f"(GPU idle limit {limit})."
        )
    return f"This session is stopped in {left} unless it is used (idle limit {limit})."
