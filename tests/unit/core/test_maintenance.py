"""Maintenance windows as the admins' page makes them (gpuportal_core.maintenance): the form's
rules, in its own words at each field, and the scontrol command that makes one."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from gpuportal_core.maintenance import (
    ALL_NODES,
    WindowRefused,
    check_window,
    create_argv,
    delete_argv,
    notice_text,
)

NOW = datetime(2026, 12, 1, 9, 30, 12)
KNOWN = {"gpu01", "gpu02", "mig01"}


def test_a_window_of_some_nodes_becomes_a_maint_reservation_for_root() -> None:
    window = check_window(
        datetime(2026, 12, 3, 8, 0),
        datetime(2026, 12, 3, 12, 0),
        "gpu02, gpu01",
        known=KNOWN,
        now=NOW,
    )
    assert (window.name, window.nodes) == ("maint-20261203-0800", "gpu[01-02]")
    assert create_argv(window) == [
        "create",
        "reservation",
        "ReservationName=maint-20261203-0800",
        "StartTime=2026-12-03T08:00:00",
        "EndTime=2026-12-03T12:00:00",
        "Nodes=gpu[01-02]",
        "Flags=MAINT,IGNORE_JOBS",
        "Users=root",
    ]
    assert delete_argv(window.name) == ["delete", "ReservationName=maint-20261203-0800"]
    assert notice_text(window, KNOWN) == (
        "Maintenance of gpu[01-02] from Thu 03 Dec 08:00 to 12:00: no session or job runs there "
        "then. Until it, the spawn page offers the longest time limit that ends before it."
    )


def test_no_start_is_now_and_empty_nodes_are_all() -> None:
    window = check_window(None, NOW + timedelta(hours=2), " ", known=KNOWN, now=NOW)
    assert window.start == datetime(2026, 12, 1, 9, 30)
    assert "StartTime=now" in create_argv(window)  # 09:30:00 is a moment past already
    assert window.nodes == ALL_NODES and window.node_names(KNOWN) == sorted(KNOWN)
    assert "Maintenance of the whole cluster" in notice_text(window, KNOWN)
    overnight = check_window(None, datetime(2026, 12, 2, 6, 0), "all", known=KNOWN, now=NOW)
    assert "to Wed 02 Dec 06:00" in notice_text(overnight, KNOWN)


@pytest.mark.parametrize(
    ("start", "end", "nodes", "field", "words"),
    [
        (NOW - timedelta(hours=1), NOW + timedelta(hours=1), "ALL", "starts_at", "already past"),
        (NOW + timedelta(hours=2), NOW + timedelta(hours=1), "ALL", "ends_at", "after the start"),
        (None, NOW + timedelta(days=15), "ALL", "ends_at", "more than 14 days"),
        (None, NOW + timedelta(hours=1), "gpu09", "nodes", "gpu09, which Slurm does not know"),
        (None, NOW + timedelta(hours=1), "gpu[01-", "nodes", "not a list of node names"),
    ],
)
def test_refusals_say_what_to_change_at_their_field(
    start: datetime | None, end: datetime, nodes: str, field: str, words: str
) -> None:
    with pytest.raises(WindowRefused) as refused:
        check_window(start, end, nodes, known=KNOWN, now=NOW)
    assert words in refused.value.problems[field]
    if field == "nodes" and "know" in words:
        assert "(its nodes: gpu[01-02],mig01)" in refused.value.problems[field]
