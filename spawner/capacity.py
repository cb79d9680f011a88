"""Free GPUs and when each profile would start, for the spawn page (issue 11).

One ClusterSnapshot per Slurm configuration serves every user of this hub; the page shows
it when it is drawn and asks /hub/gpuportal/capacity for a fresh one while it stays open.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, ClassVar

from tornado import web

from core.capacity import describe_start, estimate_start, free_gpus
from core.cluster_snapshot import ClusterSnapshot, Snapshot
from core.profiles import ResourceProfile
from core.slurm import SlurmClient
from spawner.json_handler import JsonHandler
from spawner.metrics import record_capacity

CAPACITY_PATH = "gpuportal/capacity"


class Snapshots:
    """The hub's snapshots, one per (Slurm bin dir, timeout, TTL)."""

    _made: ClassVar[dict[tuple[str, float, float], ClusterSnapshot]] = {}

    @classmethod
    def get(cls, *, bin_dir: str, timeout: float, ttl: float) -> ClusterSnapshot:
        key = (bin_dir, timeout, ttl)
        if key not in cls._made:
            slurm = SlurmClient(bin_dir=bin_dir, timeout=timeout)

            async def take() -> tuple[Any, Any]:
                return await slurm.gpu_nodes(), await slurm.gpu_jobs()

            cls._made[key] = ClusterSnapshot(take, ttl=ttl)
        return cls._made[key]


def capacity_view(profiles: Iterable[ResourceProfile], snapshot: Snapshot | None) -> dict[str, Any]:
    """What the page shows: per profile whether it starts now; per partition free/total GPUs."""
    if snapshot is None:
        return {"known": False, "profiles": {}, "partitions": {}}
    now = datetime.now().replace(microsecond=0)
    shown: dict[str, Any] = {}
    partitions: dict[str, list[dict[str, Any]]] = {}
    for profile in profiles:
        start = estimate_start(
            snapshot.nodes,
            snapshot.jobs,
            partition=profile.partition,
            gpus=profile.gpus,
            runtime=profile.default_runtime,
            now=now,
        )
        shown[profile.slug] = {
            "now": start is not None and start <= now,
            "start": start.isoformat() if start else None,
            "text": describe_start(start, now, profile.gpus),
        }
        if profile.partition not in partitions:
            counts = free_gpus(snapshot.nodes, profile.partition)
            record_capacity(
                profile.partition,
                sum(free for free, _ in counts.values()),
                sum(total for _, total in counts.values()),
            )
            partitions[profile.partition] = [
                {"type": kind, "free": free, "total": total}
                for kind, (free, total) in sorted(counts.items())
            ]
    return {
        "known": True,
        "as_of": snapshot.as_of.strftime("%H:%M:%S"),
        "profiles": shown,
        "partitions": partitions,
    }


class CapacityHandler(JsonHandler):
    """GET /hub/gpuportal/capacity: the view for the logged-in user's profiles, as JSON."""

    @web.authenticated  # type: ignore[misc]
    async def get(self) -> None:
        if not self.require_scope("read:servers"):
            return
        self.send(await self.current_user.spawner.capacity())
