"""A session's clock and how far it may be extended (gpuportal_core.session_clock)."""

from __future__ import annotations

from datetime import datetime

import pytest

from gpuportal_core.jobs import JobInfo
from gpuportal_core.session_clock import (
    ExtendRefused,
    SessionClock,
    describe_left,
    extend_steps,
    extended_limit,
)

H = 3600


def job(
    state: str = "RUNNING", start: str = "2026-11-22T10:00:00", limit: str = "8:00:00"
) -> JobInfo:
    return JobInfo("7", state, "None", "gpu01", start, "alice", limit)


def test_a_running_job_ends_at_its_start_plus_its_limit() -> None:
    clock = SessionClock.of(job(limit="1-02:00:00"))
    assert clock.limit == 26 * H
    assert clock.ends == datetime(2026, 11, 23, 12, 0)
    assert clock.left(datetime(2026, 11, 23, 11, 30)) == 1800
    assert clock.left(datetime(2026, 11, 24)) == 0


def test_a_queued_jobs_start_is_slurms_guess_so_no_time_left_is_shown() -> None:
    clock = SessionClock.of(job(state="PENDING"))
    assert clock.started is None and clock.ends is None
    assert clock.left(datetime(2026, 11, 22, 11)) is None
    assert clock.limit == 8 * H


@pytest.mark.parametrize("limit", ["UNLIMITED", "INVALID", ""])
def test_no_limit_means_nothing_to_count_down_or_extend(limit: str) -> None:
    clock = SessionClock.of(job(limit=limit))
    assert clock.limit is None and clock.ends is None
    assert extend_steps(clock.limit, 24 * H) == []
    with pytest.raises(ExtendRefused, match="no time limit"):
        extended_limit(limit=None, add=H, maximum=24 * H, profile="gpu-1")


@pytest.mark.parametrize(
    ("limit", "steps"),
    [
        (8 * H, [1800, H, 2 * H, 4 * H, 16 * H]),  # ... and up to the maximum
        (21 * H, [1800, H, 2 * H, 3 * H]),  # 3 h left: the usual steps that fit, then all of it
        (23 * H + 1800, [1800]),
        (24 * H, []),
        (24 * H - 30, []),  # less than a whole minute left: Slurm counts minutes
    ],
)
def test_the_menu_offers_only_what_the_profile_still_allows(limit: int, steps: list[int]) -> None:
    assert extend_steps(limit, 24 * H) == steps


def test_an_extension_within_the_maximum_gives_the_new_limit() -> None:
    assert extended_limit(limit=8 * H, add=2 * H, maximum=24 * H, profile="gpu-1") == 10 * H


def test_an_extension_past_the_maximum_says_how_much_is_left() -> None:
    with pytest.raises(ExtendRefused) as refused:
        extended_limit(limit=23 * H, add=2 * H, maximum=24 * H, profile="gpu-1")
    assert str(refused.value) == (
        "at most 01:00:00 more: profile gpu-1 allows 24 h in all and this session has 23 h"
    )


def test_at_the_maximum_nothing_more_is_allowed() -> None:
    with pytest.raises(ExtendRefused, match="already has the maximum of 24 h"):
        extended_limit(limit=24 * H, add=60, maximum=24 * H, profile="gpu-1")


@pytest.mark.parametrize("add", [0, -60, 30, 90])
def test_an_extension_is_whole_positive_minutes(add: int) -> None:
    with pytest.raises(ExtendRefused, match="whole minutes"):
        extended_limit(limit=H, add=add, maximum=24 * H, profile="gpu-1")


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (None, ""),
        (0, "under a minute left"),
        (59, "under a minute left"),
        (3600 + 300, "1 h 5 min left"),
    ],
)
def test_time_left_in_words(seconds: int | None, words: str) -> None:
    assert describe_left(seconds) == words
