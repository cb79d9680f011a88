"""The audit stream: JSON lines, rotated, read back newest first with filters
(gpuportal_adapters.audit)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gpuportal_adapters.audit import AuditLog, Filter, parse_since, read_events


def test_events_are_json_lines_read_back_newest_first(tmp_path: Path) -> None:
    hub, portal = AuditLog(tmp_path, "hub"), AuditLog(tmp_path, "portal")
    hub.write("login", user="alice", address="10.0.0.7", groups=["ds"])
    time.sleep(0.002)  # times have millisecond resolution; two files cannot break a tie
    portal.write("job_submit", user="alice", job="42", launcher="torchrun")
    time.sleep(0.002)
    hub.write("spawn", user="bob", profile="gpu-2", gpus=2, job="43")
    line = json.loads(hub.path.read_text().splitlines()[0])
    assert line["action"] == "login" and line["source"] == "hub" and line["time"].endswith("Z")
    assert oct(hub.path.stat().st_mode & 0o777) == "0o600"

    files = [hub.path, portal.path]
    assert [e["action"] for e in read_events(files)] == ["spawn", "job_submit", "login"]
    assert [e["action"] for e in read_events(files, Filter(user="alice"))] == [
        "job_submit",
        "login",
    ]
    assert [e["job"] for e in read_events(files, Filter(action="spawn"))] == ["43"]
    assert read_events(files, Filter(since="2999-01-01")) == []
    assert len(read_events(files, Filter(limit=1))) == 1


def test_the_stream_rotates_and_old_files_are_still_read(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, "hub", max_bytes=400)
    for number in range(20):
        log.write("login", user=f"user{number:02d}")
    assert (tmp_path / "audit-hub.jsonl.1").is_file()
    users = [e["user"] for e in read_events([log.path], Filter(limit=1000))]
    assert users[0] == "user19" and len(users) > 5
    # A torn line (a crash mid-write) is skipped, not an error.
    with log.path.open("a") as stream:
        stream.write('{"time": "9999", "action": "lo')
    assert read_events([log.path])[0]["user"] == "user19"


def test_only_known_actions_are_recorded(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown audit action"):
        AuditLog(tmp_path, "hub").write("dance", user="alice")


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("2026-11-23", "2026-11-23T00:00:00"),
        ("2026-11-23T07:00", "2026-11-23T07:00:00"),
        ("2026-11-23 07:00:30", "2026-11-23T07:00:30"),
        ("2026-11-23T08:00+01:00", "2026-11-23T07:00:00"),
        ("", ""),
    ],
)
def test_since_as_people_type_it(typed: str, kept: str) -> None:
    assert parse_since(typed) == kept


def test_a_since_that_is_no_time_says_how_to_write_one() -> None:
    with pytest.raises(ValueError, match="'abc' is not a time: write a UTC date and time"):
        parse_since("abc")
