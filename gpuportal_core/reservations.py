"""Slurm's reservations, as the capacity estimate needs them: maintenance windows.

Slurm starts no job whose time limit would run into a maintenance reservation (flag MAINT) on
its nodes: an 8 h session asked for at 14:00 with maintenance at 18:00 waits until the
maintenance is over, whatever the free GPUs. The spawn page and the waiting page say so, and
offer the longest limit that starts now (gpuportal_core.capacity.LineEstimate.longest_now).
Other reservations (for a course, a project) hold nodes for their users only; the estimate,
one for every user, leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import hostlist  # type: ignore[import-untyped]

from gpuportal_core.slurm_time import slurm_datetime

# scontrol show reservation --oneliner: one line per reservation; this when there are none.
NONE_SAID = "No reservations in the system"


@dataclass(frozen=True)
class Reservation:
    name: str
    start: datetime
    end: datetime
    nodes: tuple[str, ...]
    flags: tuple[str, ...]

    @property
    def maintenance(self) -> bool:
        return "MAINT" in self.flags

    def covers(self, node: str) -> bool:
        return node in self.nodes


def parse_reservations(text: str) -> list[Reservation]:
    """Lines of `scontrol show reservation --oneliner` (Key=Value fields); a line without a
    name, times or nodes is left out."""
    found = []
    for line in text.splitlines():
        if not line.strip() or line.startswith(NONE_SAID):
            continue
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        start = slurm_datetime(fields.get("StartTime", ""))
        end = slurm_datetime(fields.get("EndTime", ""))
        nodes = fields.get("Nodes", "")
        if not fields.get("ReservationName") or start is None or end is None or not nodes:
            continue
        try:
            names = tuple(hostlist.expand_hostlist(nodes))
        except hostlist.BadHostlist:
            continue
        flags = tuple(f for f in fields.get("Flags", "").split(",") if f and f != "(null)")
        found.append(Reservation(fields["ReservationName"], start, end, names, flags))
    return found


def next_maintenance(reservations: list[Reservation], now: datetime) -> Reservation | None:
    """The maintenance reservation that ends first among those not over yet."""
    ahead = [r for r in reservations if r.maintenance and r.end > now]
    return min(ahead, key=lambda r: r.start) if ahead else None
