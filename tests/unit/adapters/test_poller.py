"""The hub's view of its servers' jobs (JobPoller, TaggedJobs) over the one queue reader."""

import asyncio

import pytest

from gpuportal_adapters.poller import JobPoller
from gpuportal_adapters.queue_reader import QueueReader
from gpuportal_adapters.slurm import SlurmUnavailable
from gpuportal_core.jobs import JobInfo


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingSlurm:
    """Stands in for SlurmClient.queue: counts each squeue and answers from a list."""

    def __init__(self, jobs: list[JobInfo]) -> None:
        self.jobs = jobs
        self.queries = 0
        self.fail = False
        self.delay = 0.01

    async def queue(self) -> list[JobInfo]:
        self.queries += 1
        await asyncio.sleep(self.delay)
        if self.fail:
            raise SlurmUnavailable(["squeue"], 1, "Unable to contact slurm controller")
        return list(self.jobs)


def running(job_id: str, user: str = "alice", tag: str = "") -> JobInfo:
    return JobInfo(job_id, "RUNNING", "None", "gpu01", "", user, comment=tag)


def tag(user: str, server: str = "") -> str:
    return f"gpuportal:session:hub:{user}:{server}"


@pytest.fixture
def slurm() -> CountingSlurm:
    return CountingSlurm([running(str(i), f"u{i}", tag(f"u{i}")) for i in range(1, 51)])


def poller_of(slurm: CountingSlurm, clock: Clock | None = None) -> JobPoller:
    clock = clock or Clock()
    return JobPoller(QueueReader(slurm, clock=clock), clock=clock)


async def test_fifty_servers_polling_at_once_make_one_query(slurm: CountingSlurm) -> None:
    poller = poller_of(slurm)
    answers = await asyncio.gather(*(poller.job(str(i), max_age=10) for i in range(1, 51)))
    assert [a.job_id for a in answers if a is not None] == [str(i) for i in range(1, 51)]
    assert slurm.queries == 1 == poller.queries


async def test_fresh_answers_are_reused_and_stale_ones_refreshed(slurm: CountingSlurm) -> None:
    clock = Clock()
    poller = poller_of(slurm, clock)
    await poller.job("1", max_age=10)
    clock.now += 5
    await poller.job("1", max_age=10)
    assert slurm.queries == 1
    clock.now += 6
    await poller.job("1", max_age=10)
    assert slurm.queries == 2


async def test_a_read_from_before_a_job_was_first_asked_about_does_not_say_it_ended(
    slurm: CountingSlurm,
) -> None:
    """A job submitted after the last read is not in it: that read cannot say it has ended."""
    clock = Clock()
    poller = poller_of(slurm, clock)
    await poller.job("1", max_age=60)
    clock.now += 1
    slurm.jobs.append(running("51"))  # submitted after the read
    info = await poller.job("51", max_age=60)
    assert info is not None and info.job_id == "51" and slurm.queries == 2
    clock.now += 1
    assert (await poller.job("51", max_age=60)) is not None and slurm.queries == 2


async def test_a_job_slurm_no_longer_lists_is_none(slurm: CountingSlurm) -> None:
    poller = poller_of(slurm)
    assert await poller.job("999", max_age=0) is None
    poller.untrack("999")
    assert "999" not in poller.tracked


async def test_controller_down_raises_instead_of_saying_gone(slurm: CountingSlurm) -> None:
    poller = poller_of(slurm)
    slurm.fail = True
    with pytest.raises(SlurmUnavailable):
        await poller.job("1", max_age=0)
    slurm.fail = False
    assert (await poller.job("1", max_age=0)) is not None


async def test_cancelled_waiter_does_not_wedge_the_poller(slurm: CountingSlurm) -> None:
    poller = poller_of(slurm)
    slurm.delay = 0.2
    waiter = asyncio.ensure_future(poller.job("1", max_age=0))
    await asyncio.sleep(0.05)
    waiter.cancel()
    slurm.delay = 0.0
    await asyncio.sleep(0.25)
    assert (await poller.job("2", max_age=0)) is not None


async def test_an_empty_job_id_asks_nothing(slurm: CountingSlurm) -> None:
    """A look for no job (a server stopped meanwhile) answers None and asks nothing."""
    poller = poller_of(slurm)
    assert await poller.job("", max_age=0) is None
    assert "" not in poller.tracked and slurm.queries == 0


async def test_fifty_stops_at_once_share_one_squeue(slurm: CountingSlurm) -> None:
    slurm.jobs += [running("99", "u1", tag("u1", "other")), running("98", "u2", tag("u1"))]
    poller = poller_of(slurm)
    users = [f"u{i}" for i in range(1, 51)]
    found = await asyncio.gather(*(poller.tagged.of(u, tag(u), max_age=0.5) for u in users))
    assert slurm.queries == 1
    # Each stop gets its own server's job only: not another server's of the same user, nor a
    # job of another user's that carries the tag.
    assert [[job.job_id for job in jobs] for jobs in found] == [[str(i)] for i in range(1, 51)]


async def test_tagged_jobs_leave_out_ended_ones(slurm: CountingSlurm) -> None:
    slurm.jobs = [JobInfo("7", "CANCELLED", "None", "", "", "u1", comment=tag("u1"))]
    assert await poller_of(slurm).tagged.of("u1", tag("u1"), max_age=0) == []


async def test_a_look_that_must_follow_a_stop_takes_no_read_under_way(
    slurm: CountingSlurm,
) -> None:
    """newer_than: a server started again right after its stop asks for a read started after
    it asked, not the stop's, which may still list the cancelled job."""
    clock = Clock()
    poller = poller_of(slurm, clock)
    slurm.delay = 0.05
    stop = asyncio.ensure_future(poller.tagged.of("u1", tag("u1"), max_age=0.5))
    await asyncio.sleep(0.01)  # the stop's read is under way
    clock.now += 0.01
    spawn = poller.tagged.of("u1", tag("u1"), max_age=0.0, newer_than=clock.now)
    await asyncio.gather(stop, spawn)
    assert slurm.queries == 2


async def test_a_silent_slurm_is_said_to_every_stop_waiting_and_the_next_asks_again(
    slurm: CountingSlurm,
) -> None:
    poller = poller_of(slurm)
    slurm.fail = True
    results = await asyncio.gather(
        *(poller.tagged.of(u, tag(u), max_age=0.5) for u in ("u1", "u2")),
        return_exceptions=True,
    )
    assert all(isinstance(result, SlurmUnavailable) for result in results)
    slurm.fail = False
    assert [job.job_id for job in await poller.tagged.of("u1", tag("u1"), max_age=0.5)] == ["1"]
