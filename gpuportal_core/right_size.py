"""What a user's last session would have needed, as the home page suggests it: "next time
gpu-1 with 2 h would start at once".

From what it used (gpuportal_portal.use_collector): the GPUs that were busy (all it had, where
its GPU use was not measured: a GPU nobody read may have been at work), the GPUs' worth of
cores and memory it used (both follow the GPUs on this cluster), and its elapsed time with a
margin. A smaller ask waits less in the queue and leaves GPUs for others; the suggestion is
made only when it asks for fewer GPUs or half the time or less.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuportal_core.profiles import ResourceProfile

# A GPU busy this much on average (percent) was used: below, it sat idle.
BUSY_MEAN_PERCENT = 5.0
HEADROOM = 1.25  # on the time it ran
STEP_S = 1800  # limits suggested in half hours
SHORTEST_S = 3600
# A session shorter than this says nothing of what the next one needs: no advice from it.
JUDGED_AFTER_S = 600


@dataclass(frozen=True)
class Suggestion:
    profile: ResourceProfile
    runtime_s: int


def needed_gpus(use: Mapping[str, Any]) -> int:
    """GPUs the session would have needed: its busy ones, or enough for its cores and memory."""
    had = int(use.get("gpus") or 0)
    if not had:
        return 0
    gpu = use.get("gpu") or {}
    if gpu.get("measured"):
        cards = gpu.get("gpus") or []
        busy = sum(1 for card in cards if (card.get("mean_percent") or 0) >= BUSY_MEAN_PERCENT)
    else:
        busy = had
    need = max(busy, 1)
    cores, cpu_percent = int(use.get("cores") or 0), use.get("cpu_percent")
    if cores and cpu_percent is not None:
        need = max(need, math.ceil(cores * cpu_percent / 100 / (cores / had) - 1e-9))
    asked, rss = use.get("requested_bytes"), use.get("max_rss_bytes")
    if asked and rss is not None:
        need = max(need, math.ceil(rss / (asked / had) - 1e-9))
    return min(need, had)


def needed_runtime(use: Mapping[str, Any]) -> int:
    """A limit that would have covered the session with a margin, in half hours (1 h at
    least); the limit it had where it ran to it."""
    limit = int(use.get("limit_s") or 0)
    elapsed = int(use.get("elapsed_s") or 0)
    if limit and elapsed >= limit * 0.95:
        return limit
    wanted = max(SHORTEST_S, math.ceil(elapsed * HEADROOM / STEP_S) * STEP_S)
    return min(wanted, limit) if limit else wanted


def suggest(use: Mapping[str, Any], profiles: Iterable[ResourceProfile]) -> Suggestion | None:
    """The user's smallest profile that would have done, and a limit; None where the session
    asked for about what it used, was too short to judge, or no profile of the user's fits."""
    had, limit = int(use.get("gpus") or 0), int(use.get("limit_s") or 0)
    if not had or int(use.get("elapsed_s") or 0) < JUDGED_AFTER_S:
        return None
    gpus, runtime = needed_gpus(use), needed_runtime(use)
    fitting = [p for p in profiles if p.gpus >= gpus and runtime <= p.max_runtime]
    if not fitting:
        return None
    profile = min(fitting, key=lambda p: (p.gpus, p.slug))
    shorter = bool(limit) and runtime <= limit / 2
    return Suggestion(profile, runtime) if profile.gpus < had or shorter else None
