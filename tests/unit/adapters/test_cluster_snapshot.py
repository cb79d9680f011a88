"""One look at the cluster per TTL, whatever the number of callers; Slurm down keeps the last."""

from __future__ import annotations

import asyncio
import time

from gpuportal_adapters.cluster_snapshot import ClusterSnapshot
from gpuportal_adapters.slurm import SlurmUnavailable
from gpuportal_core.capacity import GpuJob, NodeGpus

NODES = [NodeGpus("gpu01", ("gpu",), 4, 1)]


def test_a_hundred_callers_at_once_cost_one_query() -> None:
    calls = 0

    async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.05)
        return NODES, []

    async def main() -> None:
        snapshot = ClusterSnapshot(take, ttl=60)
        answers = await asyncio.gather(*(snapshot.get() for _ in range(100)))
        assert all(a is not None and a.nodes == NODES for a in answers)
        assert (calls, snapshot.queries) == (1, 1)

    asyncio.run(main())


def test_after_the_ttl_it_asks_again_and_a_failure_keeps_the_last_answer() -> None:
    answers: list[object] = [(NODES, []), SlurmUnavailable(["squeue"], 1, "down")]

    async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]

    async def main() -> None:
        snapshot = ClusterSnapshot(take, ttl=0.01)
        first = await snapshot.get()
        await asyncio.sleep(0.02)
        second = await snapshot.get()
        assert first is not None and second is first
        assert snapshot.queries == 2

    asyncio.run(main())


def test_nothing_known_before_slurm_ever_answers() -> None:
    async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
        raise SlurmUnavailable(["sinfo"], 1, "down")

    assert asyncio.run(ClusterSnapshot(take, ttl=1).get()) is None


def test_a_slow_slurm_never_holds_a_page_longer_than_asked() -> None:
    async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
        await asyncio.sleep(0.3)
        return NODES, []

    async def main() -> None:
        snapshot = ClusterSnapshot(take, ttl=60)
        assert await snapshot.get_within(0.05) is None  # nothing known yet, and no waiting
        await asyncio.sleep(0.4)  # the look went on in the background
        answer = await snapshot.get_within(0.05)
        assert answer is not None and snapshot.queries == 1

    asyncio.run(main())


def test_a_spawn_with_nothing_known_yet_waits_for_the_first_look() -> None:
    """A burst of spawns at a hub's start: the first look took longer than the page's wait,
    and the spawns failed as if Slurm did not answer (bench/scale.py: 36 of 300)."""

    async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
        await asyncio.sleep(0.3)
        return NODES, []

    async def main() -> None:
        snapshot = ClusterSnapshot(take, ttl=60)
        first = await snapshot.get_within(0.05, first=True)
        assert first is not None and first.nodes == NODES and snapshot.queries == 1

    asyncio.run(main())


def test_a_look_older_than_a_job_is_taken_again_for_it() -> None:
    async def take() -> tuple[list[NodeGpus], list[GpuJob]]:
        return NODES, []

    async def main() -> None:
        snapshot = ClusterSnapshot(take, ttl=60)
        await snapshot.get()
        submitted = time.monotonic()
        await snapshot.get()
        assert snapshot.queries == 1  # fresh enough for anyone else
        await snapshot.get(newer_than=submitted)
        await snapshot.get(newer_than=submitted)
        assert snapshot.queries == 2  # once for the job, then shared again

    asyncio.run(main())
