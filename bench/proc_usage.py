"""CPU time and resident memory of a hub's parts, read from /proc: the hub itself, its proxy
(configurable-http-proxy), the portal service and its other services, each with its children."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = 100  # os.sysconf("SC_CLK_TCK") on Linux


@dataclass
class Usage:
    """CPU time (s) and resident memory (MB) at one moment."""

    cpu_s: float = 0.0
    rss_mb: float = 0.0

    def add(self, other: Usage) -> None:
        self.cpu_s += other.cpu_s
        self.rss_mb += other.rss_mb


def _stat_fields(pid: int) -> list[str]:
    # After the command's name, which may hold spaces and parentheses.
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_usage(pid: int) -> Usage:
    """One process: its own CPU time and that of its waited-for children, and its RSS."""
    fields = _stat_fields(pid)
    ticks = sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
    rss_kb = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmRSS")
    )
    return Usage(ticks / CLOCK_TICKS, rss_kb / 1024)


def _children_of() -> dict[int, list[int]]:
    children: dict[int, list[int]] = defaultdict(list)
    for path in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            children[int(_stat_fields(int(path.name))[1])].append(int(path.name))
    return children


def _tree(pid: int, children: dict[int, list[int]]) -> list[int]:
    found = [pid]
    for child in children.get(pid, []):
        found += _tree(child, children)
    return found


def part_of(cmdline: str) -> str:
    """Which part of the hub a child process (with its own children) is."""
    if "configurable-http-proxy" in cmdline:
        return "proxy"
    if "gpuportal_adapters.hub_service" in cmdline:
        return "portal" if "gpuportal_portal" in cmdline else "other services"
    return "hub"


def hub_usage(hub_pid: int) -> dict[str, Usage]:
    """The hub's parts: {"hub", "proxy", "portal", "other services"} -> Usage."""
    children = _children_of()
    parts: dict[str, Usage] = defaultdict(Usage)
    with contextlib.suppress(OSError):
        parts["hub"].add(process_usage(hub_pid))
    for child in children.get(hub_pid, []):
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{child}/cmdline").read_text().replace("\0", " ")
            for pid in _tree(child, children):
                with contextlib.suppress(OSError, StopIteration):
                    parts[part_of(cmdline)].add(process_usage(pid))
    return dict(parts)


def print_usage(before: dict[str, Usage], after: dict[str, Usage], seconds: float) -> None:
    """CPU % of one core over the interval and RSS at its end, per part."""
    for part in ("hub", "proxy", "portal", "other services"):
        start, end = before.get(part, Usage()), after.get(part, Usage())
        cpu = 100 * (end.cpu_s - start.cpu_s) / seconds
        print(f"    {part:<15} CPU {cpu:5.1f} % of one core, RSS {end.rss_mb:6.0f} MB")
