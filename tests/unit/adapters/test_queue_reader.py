"""The one reader of job states, shared by the hub and the portal through a file."""

import asyncio
import logging
import os
import stat
from pathlib import Path

import pytest

from gpuportal_adapters.queue_reader import QueueReader, load
from gpuportal_adapters.slurm import SlurmUnavailable
from tests.unit.adapters.test_poller import Clock, CountingSlurm, running


@pytest.fixture
def slurm() -> CountingSlurm:
    return CountingSlurm([running("1"), running("2", "bob", "gpuportal:session:hub:bob:")])


async def test_the_hub_and_the_portal_share_one_read_through_the_file(
    slurm: CountingSlurm, tmp_path: Path
) -> None:
    """Two readers on one file (the hub's process and the portal's): a read either took recently
    enough serves the other, which runs no squeue of its own."""
    clock = Clock()
    shared = tmp_path / "queue.json"
    hub = QueueReader(slurm, shared=shared, clock=clock)
    portal = QueueReader(slurm, shared=shared, clock=clock)
    first = await hub.read(max_age=0)
    clock.now += 2
    theirs = await portal.read(max_age=5)
    assert (hub.queries, portal.queries) == (1, 0)
    assert theirs == first and theirs.jobs["2"].comment == "gpuportal:session:hub:bob:"
    clock.now += 4  # now older than the portal accepts: it reads, and the hub takes that one
    await portal.read(max_age=5)
    await hub.read(max_age=5)
    assert (hub.queries, portal.queries) == (1, 1)


async def test_the_file_is_readable_by_its_account_alone(
    slurm: CountingSlurm, tmp_path: Path
) -> None:
    shared = tmp_path / "queue.json"
    await QueueReader(slurm, shared=shared).read(max_age=0)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["queue.json"]  # no temporary file left


async def test_a_read_older_than_asked_is_never_taken(slurm: CountingSlurm, tmp_path: Path) -> None:
    clock = Clock()
    shared = tmp_path / "queue.json"
    await QueueReader(slurm, shared=shared, clock=clock).read(max_age=0)
    clock.now += 10
    other = QueueReader(slurm, shared=shared, clock=clock)
    read = await other.read(max_age=5)
    assert other.queries == 1 and read.as_of == clock.now
    fresh = await other.read(max_age=60, newer_than=clock.now + 1)  # a job submitted since
    assert other.queries == 2 and fresh.as_of == clock.now


async def test_a_damaged_or_unwritable_file_leaves_each_reading_for_itself(
    slurm: CountingSlurm, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    shared = tmp_path / "queue.json"
    shared.write_text("{not json")
    assert load(shared) is None
    reader = QueueReader(slurm, shared=shared)
    assert set((await reader.read(max_age=0)).jobs) == {"1", "2"}
    unwritable = QueueReader(slurm, shared=tmp_path / "missing" / "queue.json")
    assert set((await unwritable.read(max_age=0)).jobs) == {"1", "2"}
    assert "Could not share the queue's read" in caplog.text


async def test_a_silent_slurm_is_raised_never_an_empty_queue(
    slurm: CountingSlurm, tmp_path: Path
) -> None:
    reader = QueueReader(slurm, shared=tmp_path / "queue.json")
    slurm.fail = True
    with pytest.raises(SlurmUnavailable):
        await reader.read(max_age=0)
    assert not (tmp_path / "queue.json").exists()


async def test_askers_during_a_read_take_it(slurm: CountingSlurm) -> None:
    reader = QueueReader(slurm)
    slurm.delay = 0.05
    reads = await asyncio.gather(*(reader.read(max_age=0) for _ in range(20)))
    assert slurm.queries == 1 and len({id(read) for read in reads}) == 1
