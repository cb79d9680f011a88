"""Every time the portal reads or writes for Slurm, in one place: runtimes as users type them
("HH:MM:SS"), time limits as Slurm prints them ("1-00:00:00", "8:00:00", "UNLIMITED"), and
Slurm's timestamps (the cluster's local time, without a zone)."""

from __future__ import annotations

import re
from datetime import datetime

_HMS = re.compile(r"(\d{1,3}):([0-5]\d):([0-5]\d)")
_SLURM_LIMIT = re.compile(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)")


class SlurmTimeError(ValueError):
    """A time limit in none of the forms Slurm prints."""


class RuntimeFormatError(ValueError):
    """A runtime string that is not HH:MM:SS."""


def parse_runtime(text: str) -> int:
    """Seconds in an "HH:MM:SS" runtime; hours may exceed 24 ("36:00:00").

    Only this one form is accepted, on purpose: it is what the spawn form and the API document,
    and anything looser (Slurm also takes "2-00", "90", ...) would be one more way to slip an
    unexpected value past validation.
    """
    match = _HMS.fullmatch(text)
    if match is None:
        raise RuntimeFormatError(f"runtime {text!r} is not in the form HH:MM:SS (e.g. 08:00:00)")
    hours, minutes, seconds = (int(part) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def format_runtime(seconds: int) -> str:
    """ "HH:MM:SS" for a number of seconds, as Slurm's --time accepts it."""
    if seconds < 0:
        raise ValueError("a runtime cannot be negative")
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def describe_runtime(seconds: int) -> str:
    """A short human form for pages: "8 h", "1 h 30 min", "45 min"."""
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if hours and minutes:
        return f"{hours} h {minutes} min"
    if hours:
        return f"{hours} h"
    return f"{minutes} min"


def cluster_offset_minutes() -> int:
    """This (login) host's offset from UTC now, in minutes: Slurm prints its times in this
    zone, without naming it (pages show times in the reader's zone: templates/shared/times.html)."""
    offset = datetime.now().astimezone().utcoffset()
    return int(offset.total_seconds() // 60) if offset is not None else 0


def parse_slurm_time(text: str) -> int | None:
    """Seconds in a Slurm time limit ("1-00:00:00", "8:00:00", "30:00"); None if unlimited."""
    if text.strip().lower() in ("infinite", "unlimited"):
        return None
    match = _SLURM_LIMIT.fullmatch(text.strip())
    if match is None:
        raise SlurmTimeError(f"not a Slurm time limit: {text!r}")
    days, hours, minutes, seconds = (int(part) if part else 0 for part in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def limit_seconds(limit: str) -> int | None:
    """Seconds in a time limit as squeue prints it; None for none ("UNLIMITED", "INVALID")."""
    try:
        return parse_slurm_time(limit)
    except SlurmTimeError:
        return None  # "INVALID", "NOT_SET": estimates treat it as no limit


def time_limit_hms(value: str) -> str:
    """A time limit as squeue ("8:00:00", "1-00:00:00") or scontrol ("08:00:00") print it, as
    HH:MM:SS (one way on every page, whichever command told it); others as they are."""
    try:
        seconds = parse_slurm_time(value)
    except SlurmTimeError:
        return time_or_blank(value)
    return value if seconds is None else format_runtime(seconds)


def time_or_blank(value: str) -> str:
    """Slurm's words for "no time" ("Unknown", "N/A", "None") as blank; a time as it is."""
    return "" if value in ("", "Unknown", "None", "N/A") else value


def slurm_datetime(text: str) -> datetime | None:
    """A time as squeue prints it ("2026-11-22T19:10:00"); None for "N/A" or "Unknown"."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None  # "N/A", "Unknown"


def slurm_time_with_zone(value: str) -> str:
    """A time as Slurm prints it (the cluster's local time, no zone: "2026-11-24T14:05:00") with
    this host's offset, as the API gives every time ("2026-11-24T14:05:00+01:00"); blank stays
    blank, and anything else as it is."""
    when = slurm_datetime(value)
    if when is None:
        return time_or_blank(value)
    return (when if when.tzinfo else when.astimezone()).isoformat()
