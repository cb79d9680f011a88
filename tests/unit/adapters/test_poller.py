import asyncio

import pytest

from gpuportal_adapters.poller import JobPoller
from gpuportal_adapters.slurm import SlurmUnavailable
from gpuportal_core.jobs import JobInfo


class CountingSlurm:
    """Stands in for SlurmClient.jobs: records each query and answers from a dict."""

    def __init__(self):
        self.queries: list[frozenset[str]] = []
        self.known: dict[str, JobInfo] = {}
        self.fail = False
        self.delay = 0.01

    async def jobs(self, ids):
        self.queries.append(frozenset(ids))
        await asyncio.sleep(self.delay)
        if self.fail:
            raise SlurmUnavailable(["squeue"], 1, "Unable to contact slurm controller")
        return {i: self.known[i] for i in ids if i in self.known}


def running(job_id):
    return JobInfo(job_id, "RUNNING", "None", "gpu01", "", "alice")


class Clock:
    now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture
def slurm():
    fake = CountingSlurm()
    fake.known = {str(i): running(str(i)) for i in range(1, 51)}
    return fake


async def test_fifty_servers_polling_at_once_make_one_query(slurm):
    poller = JobPoller(slurm)  # type: ignore[arg-type]
    for i in range(1, 51):
        poller.track(str(i))
    answers = await asyncio.gather(*(poller.job(str(i), max_age=10) for i in range(1, 51)))
    assert [a.job_id for a in answers] == [str(i) for i in range(1, 51)]
    assert len(slurm.queries) == 1
    assert slurm.queries[0] == frozenset(str(i) for i in range(1, 51))


async def test_fresh_answers_are_reused_and_stale_ones_refreshed(slurm):
    clock = Clock()
    poller = JobPoller(slurm, clock=clock)  # type: ignore[arg-type]
    await poller.job("1", max_age=10)
    clock.now += 5
    await poller.job("1", max_age=10)
    assert len(slurm.queries) == 1
    clock.now += 6
    await poller.job("1", max_age=10)
    assert len(slurm.queries) == 2


async def test_a_job_not_in_the_last_query_is_asked_for(slurm):
    poller = JobPoller(slurm)  # type: ignore[arg-type]
    await poller.job("1", max_age=60)
    info = await poller.job("2", max_age=60)
    assert info is not None and info.job_id == "2"
    assert slurm.queries[-1] == {"1", "2"}


async def test_ended_job_is_none_and_untracked_jobs_leave_the_query(slurm):
    poller = JobPoller(slurm)  # type: ignore[arg-type]
    assert await poller.job("999", max_age=0) is None
    poller.untrack("999")
    await poller.job("1", max_age=0)
    assert slurm.queries[-1] == {"1"}


async def test_controller_down_raises_instead_of_saying_gone(slurm):
    poller = JobPoller(slurm)  # type: ignore[arg-type]
    slurm.fail = True
    with pytest.raises(SlurmUnavailable):
        await poller.job("1", max_age=0)
    slurm.fail = False
    assert (await poller.job("1", max_age=0)) is not None


async def test_cancelled_waiter_does_not_wedge_the_poller(slurm):
    poller = JobPoller(slurm)  # type: ignore[arg-type]
    slurm.delay = 0.2
    waiter = asyncio.ensure_future(poller.job("1", max_age=0))
    await asyncio.sleep(0.05)
    waiter.cancel()
    slurm.delay = 0.0
    await asyncio.sleep(0.25)
    assert (await poller.job("2", max_age=0)) is not None


async def test_an_empty_job_id_is_never_part_of_the_shared_query(slurm):
    """A look for no job (a server stopped meanwhile) answers None and asks nothing: in the
    shared query it failed the squeue of every server (bench/scale.py, 53 stops answered 500)."""
    poller = JobPoller(slurm)  # type: ignore[arg-type]
    assert await poller.job("", max_age=0) is None
    assert "" not in poller.tracked and slurm.queries == []
    assert (await poller.job("1", max_age=0)).job_id == "1"
    assert slurm.queries == [frozenset({"1"})]
