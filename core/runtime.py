"""Slurm wall-clock limits as users type them ("HH:MM:SS") and as seconds."""

from __future__ import annotations

import re
from datetime import datetime

_HMS = re.compile(r"(\d{1,3}):([0-5]\d):([0-5]\d)")


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
