"""The cluster's partitions as the portal checks profiles against them (sinfo, cached)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from gpuportal_adapters.slurm import SlurmClient, SlurmError
from gpuportal_core.partitions import Partition, SinfoFormatError

log = logging.getLogger(__name__)


class ClusterUnavailable(RuntimeError):
    """Slurm could not be asked; the message says why."""


class PartitionCatalog:
    """Partition limits from one sinfo, reused for `max_age` seconds and shared by callers."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[dict[str, Partition]]],
        *,
        max_age: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._max_age = max_age
        self._clock = clock
        self._partitions: dict[str, Partition] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def from_slurm(cls, *, bin_dir: str, timeout: float, max_age: float) -> PartitionCatalog:
        client = SlurmClient(bin_dir=bin_dir, timeout=timeout)
        return cls(client.partitions, max_age=max_age)

    async def partitions(self) -> dict[str, Partition]:
        async with self._lock:
            fresh = (
                self._fetched_at is not None and self._clock() - self._fetched_at < self._max_age
            )
            if not fresh:
                try:
                    self._partitions = await self._fetch()
                except (SlurmError, SinfoFormatError, OSError) as error:
                    log.warning("Could not read the partitions from sinfo: %s", error)
                    raise ClusterUnavailable(f"Slurm did not answer sinfo: {error}") from None
                self._fetched_at = self._clock()
            return self._partitions
