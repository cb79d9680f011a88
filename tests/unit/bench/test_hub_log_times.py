"""bench.hub_log_times reads the hub's own time per request from JupyterHub's log lines."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from bench.hub_log_times import Started, hub_times

LOG = """\
[I 2026-11-27 09:32:23.473 Hub log:192] 200 GET /hub/home (b1@lo) 111.10ms
[I 2026-11-27 09:32:24.000 Hub log:192] 200 GET /hub/spawn-pending/b2 (b2@lo) 20.00ms
[I 2026-11-27 09:32:24.500 Hub log:192] 302 GET /hub/spawn -> /user/b3/ (b3@lo) 9.50ms
[I 2026-11-27 09:32:25.000 Hub log:192] 200 GET /hub/api/users?limit=50 (carol@lo) 2500.00ms
[I 2026-11-27 09:32:25.100 Hub log:192] 200 GET /hub/api/users?state=ready (c@lo) 80.00ms
[W 2026-11-27 09:32:25.200 Hub session_job:291] node answers again
[I 2026-11-27 09:40:00.000 Hub log:192] 200 GET /hub/home (b1@lo) 999.00ms
"""

KINDS = {
    "home": ("GET", r"/hub/home"),
    "spawn page": ("GET", r"/hub/spawn"),
    "waiting page": ("GET", r"/hub/spawn-pending/[^/?]+"),
    "/hub/api/users": ("GET", r"/hub/api/users\?limit=50"),
}


def epoch(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").timestamp()


def test_each_kind_gets_its_own_lines_within_the_window(tmp_path: Path) -> None:
    log = tmp_path / "hub.log"
    log.write_text(LOG)
    times = hub_times(log, epoch("2026-11-27 09:32:00"), epoch("2026-11-27 09:33:00"), KINDS)
    # The 09:40 home is outside the window; the waiting page is not a spawn page (whose 302,
    # with its target, counts); the bench's own list by state is not the admin's list.
    assert times == {
        "home": [pytest.approx(0.1111)],
        "spawn page": [pytest.approx(0.0095)],
        "waiting page": [pytest.approx(0.02)],
        "/hub/api/users": [pytest.approx(2.5)],
    }


def test_a_missing_log_gives_no_times(tmp_path: Path) -> None:
    assert hub_times(tmp_path / "none.log", 0, 1, KINDS) == {name: [] for name in KINDS}


def test_the_users_whose_server_started_are_read_from_the_log(tmp_path: Path) -> None:
    log = tmp_path / "hub.log"
    log.write_text(
        LOG
        + "[I 2026-11-27 11:04:47.240 Hub base:1192] User b1 took 25.063 seconds to start\n"
        + "[I 2026-11-27 11:04:47.241 Hub base:1192] User b4 took 0.5 seconds to start\n"
        # a named server's start, and a failed one, are not the default server started
        + "[I 2026-11-27 11:04:48.000 Hub base:1192] User b2:train took 3.1 seconds to start\n"
        + "[E 2026-11-27 11:04:49.000 Hub base:1100] Unhandled error starting b3's server\n"
    )
    assert Started(log).read() == {"b1", "b4"}


def test_a_look_reads_on_from_the_last_one_and_waits_for_a_line_to_be_whole(
    tmp_path: Path,
) -> None:
    log = tmp_path / "hub.log"
    line = "[I 2026-11-27 11:04:47.240 Hub base:1192] User {} took 2.5 seconds to start\n"
    log.write_text(line.format("b1") + line.format("b2")[:30])  # b2's line half written
    watch = Started(log)
    assert watch.read() == {"b1"}
    with log.open("a") as stream:
        stream.write(line.format("b2")[30:] + line.format("b3"))
    assert watch.read() == {"b1", "b2", "b3"}
    log.write_text(line.format("b9"))  # a new log, shorter than what was read
    assert watch.read() == {"b1", "b2", "b3", "b9"}
