"""The hub's own time for the requests a bench timed, read from its log: JupyterHub logs each
request with the time it took from when its handler got it. A page the client waited 5 s for
but the hub served in 50 ms waited elsewhere (the proxy, TLS, the hub's accept queue behind a
busy loop, the client's own threads); one the hub took 5 s for waited inside the hub."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from bench.cluster_load import percentile

# [I 2026-11-27 09:32:23.473 GpuPortalHub log:192] 200 GET /hub/home (bench001@127.0.0.1) 111.10ms
# [I 2026-11-27 11:09:50.041 GpuPortalHub log:192] 302 GET /hub/spawn -> /user/b1/ (...) 7.79ms
_LINE = re.compile(
    r"^\[\w (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \S+ [^\]]*\] "
    r"(?P<status>\d{3}) (?P<method>[A-Z]+) (?P<path>\S+)(?: -> \S+)? \([^)]*\) (?P<ms>[\d.]+)ms$"
)


def hub_times(
    log: Path, since: float, until: float, kinds: Mapping[str, tuple[str, str]]
) -> dict[str, list[float]]:
    """Seconds the hub logged for each kind of request between the epoch times since and
    until; kinds maps a name to (method, a regular expression the whole path and query must
    match), e.g. "home": ("GET", "/hub/home")."""
    found: dict[str, list[float]] = {name: [] for name in kinds}
    if not log.exists():
        return found
    for line in log.read_text(errors="replace").splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        # The hub logs its local time, as datetime.fromtimestamp gives it.
        when = datetime.strptime(match["when"], "%Y-%m-%d %H:%M:%S.%f").timestamp()
        if not since <= when <= until:
            continue
        for name, (method, pattern) in kinds.items():
            if match["method"] == method and re.fullmatch(pattern, match["path"]):
                found[name].append(float(match["ms"]) / 1000)
    return found


# [I 2026-11-27 11:04:47.240 GpuPortalHub base:1192] User bench001 took 25.063 seconds to start
_STARTED = re.compile(r"\] User (?P<user>[^\s:/]+) took [\d.]+ seconds to start$")


class Started:
    """The users whose default server JupyterHub has logged as started (its spawn finished and
    the server answered), read on from where the last look stopped. A bench that asked the
    hub's list of ready servers every few seconds instead took a quarter of the hub's loop in
    the burst it measured; one that read the whole log again each time read megabytes a look
    on the same two cores."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.users: set[str] = set()
        self._offset = 0

    def read(self) -> set[str]:
        if not self.log.exists():
            return self.users
        with self.log.open("rb") as stream:
            if stream.seek(0, 2) < self._offset:
                self._offset = 0  # a new log under the same name: from its start
            stream.seek(self._offset)
            chunk = stream.read()
        # Only whole lines: the hub may be halfway through writing the last one.
        whole = chunk[: chunk.rfind(b"\n") + 1]
        self._offset += len(whole)
        for line in whole.decode(errors="replace").splitlines():
            if (match := _STARTED.search(line)) is not None:
                self.users.add(match["user"])
        return self.users


def print_hub_times(times: Mapping[str, list[float]], indent: str = "    ") -> None:
    """As bench.page_load.Timings prints the client's times, to be read beside them."""
    for name, values in times.items():
        if not values:
            print(f"{indent}{name:<16} none logged")
            continue
        print(
            f"{indent}{name:<16} n={len(values):<5} p50 {1000 * percentile(values, 50):6.0f} ms"
            f"  p95 {1000 * percentile(values, 95):6.0f} ms"
            f"  max {1000 * max(values):6.0f} ms"
        )
