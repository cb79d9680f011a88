"""Free GPUs and when each profile would start, for the spawn page (issue 11).

One ClusterSnapshot per Slurm configuration serves every user of this hub; the page shows
it when it is drawn and asks /hub/gpuportal/capacity for a fresh one while it stays open.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from tornado import web

from gpuportal_adapters.cluster_snapshot import ClusterSnapshot, Snapshot
from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.accounting import Associations, GroupUse
from gpuportal_core.capacity import LineEstimate, describe_start, free_gpus
from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.reservations import Reservation, next_maintenance
from gpuportal_core.slurm_time import format_runtime
from gpuportal_spawner.hub_state import HubState
from gpuportal_spawner.json_handler import JsonHandler
from gpuportal_spawner.metrics import record_capacity

CAPACITY_PATH = "gpuportal/capacity"
log = logging.getLogger(__name__)
# A limit offered to start before a maintenance window: this much short of it (the look is up to
# a TTL old, and the job starts a few seconds after the click), in steps of this much, and not
# offered at all when shorter than the last.
FIT_MARGIN_S = 300
FIT_STEP_S = 300
FIT_SHORTEST_S = 900


# The accounts' GPU limits (sacctmgr) are read at most this often for the whole hub: they
# change when an admin edits them, not with every job.
GROUP_LIMITS_TTL_S = 60.0


def snapshot(state: HubState, *, bin_dir: str, timeout: float, ttl: float) -> ClusterSnapshot:
    """The hub's snapshot for this Slurm (bin dir, timeout) and TTL."""
    key = (bin_dir, timeout, ttl)
    if key not in state.snapshots:
        slurm = SlurmClient(bin_dir=bin_dir, timeout=timeout)
        state.snapshots[key] = ClusterSnapshot.of(slurm, ttl=ttl)
    return state.snapshots[key]


async def group_limits(state: HubState, *, bin_dir: str, timeout: float) -> Associations:
    """The accounts' GPU limits, as last read within GROUP_LIMITS_TTL_S."""
    key = (bin_dir, timeout)
    read_at, assocs = state.group_limits.get(key, (0.0, Associations()))
    if time.monotonic() - read_at < GROUP_LIMITS_TTL_S:
        return assocs
    try:
        assocs = await SlurmClient(bin_dir=bin_dir, timeout=timeout).associations()
    except SlurmError as error:
        # A cluster without accounting has no group limits to show; ask again later.
        log.info("No group GPU limits from Slurm's accounting: %s", error.message)
    state.group_limits[key] = (time.monotonic(), assocs)
    return assocs


def capacity_view(
    profiles: Iterable[ResourceProfile],
    snapshot: Snapshot | None,
    group: GroupUse | None = None,
) -> dict[str, Any]:
    """What the page shows: per profile whether it starts now; per partition free/total GPUs;
    the user's group's use of its GPU limit, where it has one."""
    if snapshot is None:
        return {"known": False, "profiles": {}, "partitions": {}, "group": ""}
    now = datetime.now().replace(microsecond=0)
    shown: dict[str, Any] = {}
    partitions: dict[str, list[dict[str, Any]]] = {}
    for profile in profiles:
        start = snapshot.line(profile.partition, profile.gpu_type).new_job_start(
            profile.gpus, profile.default_runtime
        )
        shown[profile.slug] = {
            "now": start is not None and start <= now,
            "start": start.isoformat() if start else None,
            "text": describe_start(start, now, profile.gpus, profile.gpu_type),
            "fits_now": None,
        }
        maintenance = next_maintenance(snapshot.reservations, now)
        if start is not None and start > now and maintenance is not None:
            shown[profile.slug].update(
                before_maintenance(
                    snapshot.line(profile.partition, profile.gpu_type), profile, maintenance, now
                )
            )
        if group is not None and not group.fits(profile.gpus):
            # Free GPUs or not, Slurm holds it until the group is under its limit: a shorter
            # time limit would not start it either, so none is offered.
            shown[profile.slug].update(
                now=False, start=None, text=group.waits(profile.gpus), fits_now=None
            )
        if profile.partition not in partitions:
            counts = free_gpus(snapshot.nodes, profile.partition)
            record_capacity(profile.partition, counts)
            partitions[profile.partition] = [
                {"type": kind, "free": free, "total": total}
                for kind, (free, total) in sorted(counts.items())
            ]
    return {
        "known": True,
        "as_of": snapshot.as_of.strftime("%H:%M:%S"),
        "profiles": shown,
        "partitions": partitions,
        "group": group.describe() if group is not None else "",
    }


def before_maintenance(
    line: LineEstimate, profile: ResourceProfile, maintenance: Reservation, now: datetime
) -> dict[str, Any]:
    """A profile whose default limit runs into a maintenance window: what the page says, and
    the longest limit that starts now (fits_now, "HH:MM:SS"), if one is long enough to offer."""
    window = f"{_clock(maintenance.start, now)} to {_clock(maintenance.end, now)}"
    default = format_runtime(profile.default_runtime)
    said = f"Maintenance from {window}: with {default} it would start after it."
    longest = line.longest_now(profile.gpus)
    if longest is None or longest - FIT_MARGIN_S < FIT_SHORTEST_S:
        return {"text": said}
    fits = (longest - FIT_MARGIN_S) // FIT_STEP_S * FIT_STEP_S
    limit = format_runtime(fits)
    return {"text": f"{said} Choose at most {limit} to start now.", "fits_now": limit}


def _clock(moment: datetime, now: datetime) -> str:
    return moment.strftime("%H:%M" if moment.date() == now.date() else "%a %H:%M")


class CapacityHandler(JsonHandler):
    """GET /hub/gpuportal/capacity: the view for the logged-in user's profiles, as JSON."""

    @web.authenticated
    async def get(self) -> None:
        if not self.require_scope("read:servers"):
            return
        self.send(await self.current_user.spawner.capacity())
