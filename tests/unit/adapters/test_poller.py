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


class TaggingSlurm:
    """Stands in for SlurmClient.tagged(users=...): records each query's users."""

    def __init__(self, jobs: list[JobInfo]):
        self.queries: list[frozenset[str]] = []
        self.jobs = jobs
        self.fail = False

    async def tagged(self, *, users):
        self.queries.append(frozenset(users))
        await asyncio.sleep(0.01)
        if self.fail:
            raise SlurmUnavailable(["squeue"], 1, "Unable to contact slurm controller")
        return [job for job in self.jobs if job.user in users]


def tagged_job(job_id: str, user: str, tag: str) -> JobInfo:
    return JobInfo(job_id, "RUNNING", "None", "gpu01", "", user, comment=tag)


def tag(user: str, server: str = "") -> str:
    return f"gpuportal:session:hub:{user}:{server}"


@pytest.fixture
def tagging() -> TaggingSlurm:
    return TaggingSlurm(
        [tagged_job(str(i), f"u{i}", tag(f"u{i}")) for i in range(1, 51)]
        + [tagged_job("99", "u1", tag("u1", "other")), tagged_job("98", "u2", tag("u1"))]
    )


async def test_fifty_stops_at_once_make_two_squeues_not_fifty(tagging):
    poller = JobPoller(tagging)  # type: ignore[arg-type]
    users = [f"u{i}" for i in range(1, 51)]
    found = await asyncio.gather(*(poller.tagged.of(u, tag(u), max_age=0.5) for u in users))
    # The first stop's, under way when the others asked; then one for all of them.
    assert tagging.queries == [frozenset({"u1"}), frozenset(users[1:])]
    # Each stop gets its own server's job only: not another server's of the same user, nor a
    # job of another user's that carries the tag.
    assert [[job.job_id for job in jobs] for jobs in found] == [[str(i)] for i in range(1, 51)]


async def test_users_asked_for_during_a_query_share_the_next_one(tagging):
    poller = JobPoller(tagging)  # type: ignore[arg-type]
    first = asyncio.ensure_future(poller.tagged.of("u1", tag("u1"), max_age=0.5))
    await asyncio.sleep(0)  # u1's query is under way
    later = [poller.tagged.of(u, tag(u), max_age=0.5) for u in ("u2", "u3", "u4")]
    answers = await asyncio.gather(first, *later)
    assert tagging.queries == [frozenset({"u1"}), frozenset({"u2", "u3", "u4"})]
    assert [[job.job_id for job in jobs] for jobs in answers] == [["1"], ["2"], ["3"], ["4"]]


async def test_a_listing_is_reused_while_fresh_for_the_users_it_covered(tagging):
    clock = Clock()
    poller = JobPoller(tagging, clock=clock)  # type: ignore[arg-type]
    await poller.tagged.of("u1", tag("u1"), max_age=0.5)
    await poller.tagged.of("u1", tag("u1"), max_age=0.5)
    assert len(tagging.queries) == 1
    await poller.tagged.of("u2", tag("u2"), max_age=0.5)  # not covered: asked afresh
    clock.now += 1
    await poller.tagged.of("u2", tag("u2"), max_age=0.5)  # stale: asked afresh
    assert len(tagging.queries) == 3


async def test_a_silent_slurm_is_said_to_every_stop_waiting_and_the_next_asks_again(tagging):
    poller = JobPoller(tagging)  # type: ignore[arg-type]
    tagging.fail = True
    results = await asyncio.gather(
        *(poller.tagged.of(u, tag(u), max_age=0.5) for u in ("u1", "u2")),
        return_exceptions=True,
    )
    assert all(isinstance(result, SlurmUnavailable) for result in results)
    tagging.fail = False
    assert [job.job_id for job in await poller.tagged.of("u1", tag("u1"), max_age=0.5)] == ["1"]
