"""A maintenance reservation on the spawn page: a default limit that would run into it waits
for its end, and the page offers the longest limit that starts now (gpuportal_core.reservations,
LineEstimate.longest_now, gpuportal_spawner.capacity.before_maintenance)."""

from __future__ import annotations

from datetime import datetime, timedelta

from gpuportal_adapters.cluster_snapshot import Snapshot
from gpuportal_core.capacity import GpuJob, LineEstimate, NodeGpus
from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.reservations import Reservation, next_maintenance, parse_reservations
from gpuportal_spawner.capacity import capacity_view

NOW = datetime(2026, 11, 25, 14, 0, 0)
SCONTROL = (
    "ReservationName=maint StartTime=2026-11-25T16:00:00 EndTime=2026-11-25T17:00:00 "
    "Duration=01:00:00 Nodes=gpu[01-02] NodeCnt=2 CoreCnt=64 Features=(null) "
    "PartitionName=(null) Flags=MAINT,SPEC_NODES TRES=cpu=64 Users=root Groups=(null) "
    "Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) MaxStartDelay=(null)\n"
    "ReservationName=course StartTime=2026-11-25T15:00:00 EndTime=2026-11-25T18:00:00 "
    "Duration=03:00:00 Nodes=gpu02 NodeCnt=1 CoreCnt=32 Features=(null) PartitionName=gpu "
    "Flags=SPEC_NODES TRES=cpu=32 Users=(null) Groups=(null) Accounts=teaching State=INACTIVE\n"
)
NODES = [NodeGpus("gpu01", ("gpu",), 4, 0), NodeGpus("gpu02", ("gpu",), 4, 0)]
PROFILES = [ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1)]  # default 8 h


def test_scontrols_reservations_are_read_and_maintenance_told_apart():
    maint, course = parse_reservations(SCONTROL)
    assert (maint.name, maint.start, maint.end) == (
        "maint",
        datetime(2026, 11, 25, 16),
        datetime(2026, 11, 25, 17),
    )
    assert maint.nodes == ("gpu01", "gpu02") and maint.maintenance
    assert course.nodes == ("gpu02",) and not course.maintenance
    assert parse_reservations("No reservations in the system\n") == []
    assert next_maintenance([maint, course], NOW) == maint
    assert next_maintenance([maint], datetime(2026, 11, 25, 17, 30)) is None


def line(reservations: list[Reservation], jobs: list[GpuJob] = ()) -> LineEstimate:  # type: ignore[assignment]
    return LineEstimate(NODES, jobs, partition="gpu", now=NOW, reservations=reservations)


def test_a_limit_that_runs_into_maintenance_starts_after_it():
    reservations = parse_reservations(SCONTROL)
    estimate = line(reservations)
    assert estimate.new_job_start(1, 8 * 3600) == datetime(2026, 11, 25, 17)
    assert estimate.new_job_start(1, 3600) == NOW
    assert estimate.longest_now(1) == 2 * 3600
    # Without reservations nothing limits it; with every GPU taken until 20:00, nothing starts.
    assert line([]).longest_now(1) is None
    busy = [
        GpuJob(str(i), True, "gpu", 4, 1, 3600, datetime(2026, 11, 25, 20), 0, (node,))
        for i, node in enumerate(("gpu01", "gpu02"))
    ]
    assert line(reservations, busy).longest_now(1) == 0


def test_the_spawn_page_offers_the_longest_limit_that_starts_now():
    snapshot = Snapshot(NODES, [], NOW, parse_reservations(SCONTROL))
    # capacity_view reads the clock: the reservation is placed 2 h from the real now.
    now = datetime.now().replace(microsecond=0)
    moved = [
        Reservation("maint", now + timedelta(hours=2), now + timedelta(hours=3), r.nodes, r.flags)
        for r in snapshot.reservations
        if r.maintenance
    ]
    view = capacity_view(PROFILES, Snapshot(NODES, [], now, moved))
    gpu1 = view["profiles"]["gpu-1"]
    assert gpu1["now"] is False
    assert gpu1["fits_now"] == "01:55:00"  # 2 h less the 5-minute margin
    assert gpu1["text"].startswith("Maintenance from ")
    assert gpu1["text"].endswith(
        "with 08:00:00 it would start after it. Choose at most 01:55:00 to start now."
    )
    # Ten minutes before it, nothing is worth offering: only when it would start.
    soon = [
        Reservation(
            "maint", now + timedelta(minutes=10), now + timedelta(hours=1), NODES_ALL, ("MAINT",)
        )
    ]
    gpu1 = capacity_view(PROFILES, Snapshot(NODES, [], now, soon))["profiles"]["gpu-1"]
    assert gpu1["fits_now"] is None and "Choose" not in gpu1["text"]


NODES_ALL = ("gpu01", "gpu02")


def test_a_running_sessions_card_warns_of_maintenance_before_its_end():
    from gpuportal_core.jobs import JobInfo
    from gpuportal_spawner.sessions import maintenance_warning

    on_gpu01 = JobInfo("7", "RUNNING", "None", "gpu01", "2026-11-25T10:00:00", "alice", "8:00:00")
    windows = parse_reservations(SCONTROL)
    ends_late = datetime(2026, 11, 25, 18)
    assert maintenance_warning(on_gpu01, ends_late, windows, NOW) == (
        "Maintenance on gpu01 from 16:00 to 17:00, before this session's time limit: save your "
        "work before 16:00; the session may be ended then."
    )
    # Ending before it, or on a node it does not cover (the course's is no maintenance): nothing.
    assert maintenance_warning(on_gpu01, datetime(2026, 11, 25, 15, 30), windows, NOW) == ""
    elsewhere = JobInfo("8", "RUNNING", "None", "gpu03", "", "alice", "8:00:00")
    assert maintenance_warning(elsewhere, ends_late, windows, NOW) == ""
