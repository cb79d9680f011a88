"""Schedules of notebook job definitions: cron read as Jupyter Scheduler reads it, in a zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpuportal_core.schedules import (
    ScheduleError,
    check_often,
    check_schedule,
    next_time,
    shortest_gap,
)


def test_the_next_time_is_read_in_the_definitions_zone() -> None:
    after = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
    # 03:00 in Paris is 02:00 UTC in winter.
    assert next_time("0 3 * * *", "Europe/Paris", after) == datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
    assert next_time("* * * * *", "UTC", after) == datetime(2026, 11, 29, 18, 1, tzinfo=UTC)


def test_a_summer_time_change_keeps_the_local_hour() -> None:
    # Paris goes to summer time on 2027-03-28: 03:00 local is then 01:00 UTC.
    after = datetime(2027, 3, 27, 12, 0, tzinfo=UTC)
    assert next_time("0 3 * * *", "Europe/Paris", after) == datetime(2027, 3, 28, 1, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "zone", "field", "words"),
    [
        ("every night", "UTC", "schedule", "not a cron schedule: five fields"),
        ("0 3 * *", "UTC", "schedule", "not a cron schedule"),
        ("0 3 * * * *", "UTC", "schedule", "not a cron schedule"),
        ("61 * * * *", "UTC", "schedule", "not a cron schedule"),
        ("0 3 * * *", "Mars/Olympus", "timezone", "is not a time zone"),
        ("0 3 * * *", "Europe", "timezone", "is not a time zone"),
        ("0 3 * * *", "x" * 64, "timezone", "is not a time zone"),
    ],
)
def test_what_cannot_be_used_is_refused_at_its_field(
    schedule: str, zone: str, field: str, words: str
) -> None:
    with pytest.raises(ScheduleError, match=words) as refused:
        check_schedule(schedule, zone)
    assert refused.value.field == field


def test_a_schedule_that_never_fires_says_so() -> None:
    with pytest.raises(ScheduleError, match="never fires") as refused:
        next_time("0 0 31 2 *", "UTC", datetime(2026, 1, 1, tzinfo=UTC))
    assert refused.value.field == "schedule"


@pytest.mark.parametrize(
    ("schedule", "gap_minutes"),
    [
        ("*/5 * * * *", 5),
        ("0 * * * *", 60),
        ("0,1 3 * * *", 1),  # twice a day, a minute apart: its closest, not its mean
        ("0 3 * * 1", 7 * 24 * 60),
    ],
)
def test_a_schedules_shortest_gap_is_its_closest_two_runs(schedule: str, gap_minutes: int) -> None:
    after = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
    assert shortest_gap(schedule, "UTC", after).total_seconds() == gap_minutes * 60


def test_a_schedule_that_runs_too_often_is_refused_at_its_field() -> None:
    after = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
    with pytest.raises(ScheduleError, match="1 minute apart at its closest") as refused:
        check_often("0,1 3 * * *", "UTC", after, shortest=timedelta(minutes=15))
    assert refused.value.field == "schedule"
    check_often("*/15 * * * *", "UTC", after, shortest=timedelta(minutes=15))
