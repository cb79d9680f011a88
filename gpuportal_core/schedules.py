"""Schedules of notebook job definitions: a cron expression in a time zone, and its next time.

A definition's next run waits in Slurm's queue as a job with `--begin` at that time (the portal
keeps one such job queued per active definition: gpuportal_portal.schedule_service), so runs go
on with no session and no portal process in between. Debian 12's Slurm 22.05 packages ship no
`scrontab`, which would otherwise hold them; the pending job is what scrontab makes too.

croniter reads the expressions (Jupyter Scheduler, which the session carries, reads its own
with it too), so a schedule means here what the dialog meant.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

# A schedule's fields: minute hour day-of-month month day-of-week, as crontab(5) has them.
FIELDS = 5


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used: the field and what to write instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "Europe" is a folder
        raise ScheduleError(
            "timezone", f"{name!r} is not a time zone (write one like Europe/Paris or UTC)"
        ) from None


def check_schedule(expression: str, timezone: str) -> None:
    """Raise ScheduleError unless `expression` is a five-field cron schedule and `timezone` a
    zone name."""
    zone(timezone)
    fields = expression.split()
    if len(fields) != FIELDS or not croniter.is_valid(expression):
        raise ScheduleError(
            "schedule",
            f"{expression!r} is not a cron schedule: five fields, minute hour day month "
            "weekday (0 3 * * * is every day at 03:00)",
        )


def next_time(expression: str, timezone: str, after: datetime) -> datetime:
    """The first time after `after` (aware) the schedule fires, in UTC."""
    check_schedule(expression, timezone)
    local = after.astimezone(zone(timezone))
    try:
        fire: datetime = croniter(expression, local).get_next(datetime)
    except (CroniterBadCronError, CroniterBadDateError) as error:
        # A valid expression that never fires (30 2 31 2 *: 31 February).
        raise ScheduleError("schedule", f"{expression!r} never fires ({error})") from None
    return fire.astimezone(UTC)


# How many of a schedule's next times are looked at for its shortest gap: a cron expression's
# closest two times show within its first few (0-1 0 1 1 *: the first two, a year away).
GAP_LOOK = 200


def shortest_gap(expression: str, timezone: str, after: datetime) -> timedelta:
    """The shortest time between two of the schedule's next GAP_LOOK times after `after`."""
    check_schedule(expression, timezone)
    times = croniter(expression, after.astimezone(zone(timezone)))
    try:
        fires = [times.get_next(datetime) for _ in range(GAP_LOOK)]
    except (CroniterBadCronError, CroniterBadDateError) as error:
        raise ScheduleError("schedule", f"{expression!r} never fires ({error})") from None
    gaps = (later - earlier for earlier, later in itertools.pairwise(fires))
    return min(gaps, default=timedelta.max)


def check_often(expression: str, timezone: str, after: datetime, *, shortest: timedelta) -> None:
    """Raise ScheduleError when two of the schedule's runs come closer than `shortest`."""
    gap = shortest_gap(expression, timezone, after)
    if gap < shortest:
        minutes = int(shortest.total_seconds() // 60)
        raise ScheduleError(
            "schedule",
            f"{expression!r} runs {_minutes(gap)} apart at its closest: this cluster runs a "
            f"definition at most every {minutes} minutes (e.g. 0 * * * * is every hour)",
        )


def _minutes(gap: timedelta) -> str:
    minutes = int(gap.total_seconds() // 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"
