"""Maintenance windows as the admins' page makes them: a Slurm reservation with the MAINT flag.

While one is ahead, Slurm starts no job whose time limit would run into it on its nodes, the
spawn and waiting pages say so and offer the longest limit that ends before it
(gpuportal_core.reservations). IGNORE_JOBS lets it be made while jobs run there (they are not
ended: a job still running at the start keeps running, as an admin expects to drain first).
Users=root: nobody's jobs run in it. Times are the cluster's local time, as Slurm shows them
and as a browser's date field sends them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

import hostlist  # type: ignore[import-untyped]

# The page's own windows are named so; others the site made by hand are listed all the same.
NAME_PREFIX = "maint-"
# Every node of the cluster (Slurm's own word, kept as is).
ALL_NODES = "ALL"
# Longer is a mistake more often than a plan; a longer one is made by hand.
LONGEST = timedelta(days=14)
SLURM_TIME = "%Y-%m-%dT%H:%M:%S"


class WindowRefused(ValueError):
    """What is wrong, per field of the form (starts_at, ends_at, nodes)."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {text}" for field, text in problems.items()))
        self.problems = problems


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    nodes: str  # ALL_NODES, or a Slurm hostlist of known nodes
    starts_now: bool = False  # Slurm's own "now": the minute's start may be a moment past

    @property
    def name(self) -> str:
        return f"{NAME_PREFIX}{self.start:%Y%m%d-%H%M}"

    def node_names(self, known: Collection[str]) -> list[str]:
        return sorted(known) if self.nodes == ALL_NODES else hostlist.expand_hostlist(self.nodes)


def check_window(
    start: datetime | None, end: datetime, nodes: str, *, known: Collection[str], now: datetime
) -> Window:
    """The window asked for, or WindowRefused saying what to change. No start: now."""
    problems: dict[str, str] = {}
    begins = (start or now).replace(second=0, microsecond=0)
    ends = end.replace(second=0, microsecond=0)
    if start is not None and begins < now.replace(second=0, microsecond=0):
        problems["starts_at"] = "is already past: leave it empty to start now"
    if ends <= begins:
        problems["ends_at"] = "must be after the start"
    elif ends - begins > LONGEST:
        problems["ends_at"] = (
            f"is more than {LONGEST.days} days after the start: make a longer one with "
            "scontrol create reservation"
        )
    asked = nodes.strip() or ALL_NODES
    if asked.upper() == ALL_NODES:
        asked = ALL_NODES
    else:
        try:
            names = hostlist.expand_hostlist(asked.replace(" ", ""))
        except hostlist.BadHostlist:
            names = None
        if not names:
            problems["nodes"] = "is not a list of node names: e.g. gpu01,gpu02 or gpu[01-02]"
        elif unknown := [n for n in names if n not in known]:
            problems["nodes"] = (
                f"has {', '.join(unknown)}, which Slurm does not know "
                f"(its nodes: {hostlist.collect_hostlist(sorted(known))})"
            )
        else:
            asked = hostlist.collect_hostlist(names)
    if problems:
        raise WindowRefused(problems)
    return Window(begins, ends, asked, starts_now=start is None)


def create_argv(window: Window) -> list[str]:
    """scontrol's arguments that make the window."""
    return [
        "create",
        "reservation",
        f"ReservationName={window.name}",
        "StartTime=now" if window.starts_now else f"StartTime={window.start.strftime(SLURM_TIME)}",
        f"EndTime={window.end.strftime(SLURM_TIME)}",
        f"Nodes={window.nodes}",
        "Flags=MAINT,IGNORE_JOBS",
        "Users=root",
    ]


def delete_argv(name: str) -> list[str]:
    return ["delete", f"ReservationName={name}"]


def notice_text(window: Window, known: Collection[str]) -> str:
    """What users read on every page until the window ends."""
    where = (
        "the whole cluster"
        if window.nodes == ALL_NODES
        else hostlist.collect_hostlist(window.node_names(known))
    )
    same_day = window.start.date() == window.end.date()
    until = f"{window.end:%H:%M}" if same_day else f"{window.end:%a %d %b %H:%M}"
    return (
        f"Maintenance of {where} from {window.start:%a %d %b %H:%M} to {until}: no session or "
        "job runs there then. Until it, the spawn page offers the longest time limit that ends "
        "before it."
    )
