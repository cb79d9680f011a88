"""The waiting page's words: place in line, expected start, time waited, a bar that moves."""

from __future__ import annotations

from datetime import datetime, timedelta

from gpuportal_core.capacity import GpuJob, LineEstimate, NodeGpus
from gpuportal_core.queue_view import QueuePlace, describe_queue, queue_place, queue_progress

NOW = datetime(2026, 11, 22, 14, 0, 0)
NODES = [NodeGpus("gpu01", ("gpu",), 4, 4)]


def waiting(job_id: str, priority: int, gpus: int = 4) -> GpuJob:
    return GpuJob(job_id, False, "gpu", gpus, 1, 3600, None, priority)


RUNNING = GpuJob("1", True, "gpu", 4, 1, None, NOW + timedelta(minutes=30), 0, ("gpu01",))


def place(job_id: str, jobs: list[GpuJob]) -> QueuePlace:
    line = LineEstimate(NODES, jobs, partition="gpu", now=NOW)
    return queue_place(line, job_id=job_id, gpus=4, runtime=3600)


def test_place_in_line_follows_priority_and_the_estimate_counts_only_those_ahead() -> None:
    jobs = [RUNNING, waiting("7", 900), waiting("8", 500), waiting("9", 100)]
    second = place("8", jobs)
    assert (second.position, second.waiting) == (2, 3)
    # Job 7 runs from 30 to 90 min; job 8 follows it.
    assert second.start == NOW + timedelta(minutes=90)
    assert place("7", jobs).start == NOW + timedelta(minutes=30)


def test_a_job_the_snapshot_does_not_show_yet_is_last_in_line() -> None:
    jobs = [RUNNING, waiting("7", 900)]
    new = place("12", jobs)
    assert (new.position, new.waiting, new.start) == (2, 2, NOW + timedelta(minutes=90))


def test_the_words_prefer_slurms_own_estimate_and_say_whose_it_is() -> None:
    here = QueuePlace(2, 3, NOW + timedelta(minutes=90))
    ours = describe_queue(here, partition="gpu", slurm_start=None, waited=70, now=NOW)
    assert ours == (
        "2nd of 3 waiting for partition gpu. Expected start about 15:30 (in 90 min, estimated "
        "from the running jobs' time limits). Waiting 1 min so far."
    )
    slurms = describe_queue(
        here, partition="gpu", slurm_start=NOW + timedelta(minutes=25), waited=5, now=NOW
    )
    assert "about 14:25 (in 25 min, Slurm's estimate). Waiting 5 s so far." in slurms
    assert describe_queue(
        QueuePlace(11, 12, None), partition="gpu", slurm_start=None, waited=0, now=NOW
    ).startswith("11th of 12 waiting")


def test_the_bar_moves_with_the_share_of_the_wait_that_passed() -> None:
    assert queue_progress(0, NOW + timedelta(minutes=10), NOW) == 15
    assert queue_progress(600, NOW + timedelta(minutes=10), NOW) == 37  # half the wait
    assert queue_progress(600, NOW, NOW) == 60
    assert queue_progress(600, None, NOW) == 15


def test_an_estimate_of_now_is_said_as_any_moment() -> None:
    words = describe_queue(
        QueuePlace(1, 1, NOW), partition="gpu", slurm_start=None, waited=3, now=NOW
    )
    assert words == (
        "1st of 1 waiting for partition gpu. It should start any moment. Waiting 3 s so far."
    )


def test_a_job_of_one_kind_waits_in_that_kinds_line_and_says_so() -> None:
    nodes = [
        NodeGpus("gpu01", ("gpu",), 4, 4, "a100", kinds=(("a100", 4, 4),)),
        NodeGpus("gpu02", ("gpu",), 4, 0, "h100", kinds=(("h100", 4, 0),)),
    ]
    a100_ahead = GpuJob("7", False, "gpu", 4, 1, 3600, None, 900, gpu_type="a100")
    running = GpuJob("1", True, "gpu", 4, 1, None, NOW + timedelta(minutes=30), 0, ("gpu01",))
    jobs = [running, a100_ahead]
    h100 = LineEstimate(nodes, jobs, partition="gpu", now=NOW, gpu_type="h100")
    mine = queue_place(h100, job_id="12", gpus=2, runtime=3600)
    # The A100 job waiting ahead is in the A100s' line, not in this one: the H100s are free.
    assert (mine.position, mine.waiting, mine.start) == (1, 1, NOW)
    words = describe_queue(
        mine, partition="gpu", gpu_type="h100", slurm_start=None, waited=2, now=NOW
    )
    assert words.startswith("1st of 1 waiting for h100 GPUs in partition gpu. It should start")
