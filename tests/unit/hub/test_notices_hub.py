"""Which of the portal's notices the hub shows a user now (gpuportal_spawner.notices.showing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gpuportal_spawner.notices import showing

NOW = datetime(2026, 11, 25, 14, tzinfo=UTC)


def notice(i: int, starts: float, ends: float, groups: list[str]) -> dict[str, object]:
    return {
        "id": i,
        "text": f"notice {i}",
        "level": "warning",
        "starts_at": (NOW + timedelta(hours=starts)).isoformat(),
        "ends_at": (NOW + timedelta(hours=ends)).isoformat(),
        "groups": groups,
        "created_by": "carol",
    }


def test_a_user_sees_the_running_notices_for_everyone_and_for_their_groups():
    notices = [
        notice(1, -1, 1, []),  # everyone, now
        notice(2, -1, 1, ["vision"]),  # dave's team
        notice(3, 1, 2, []),  # later
        notice(4, -2, -1, []),  # over
    ]
    assert [n["id"] for n in showing(notices, ["ds"], NOW)] == [1]
    shown = showing(notices, ["ds", "vision"], NOW)
    assert [n["id"] for n in shown] == [1, 2]
    # What the pages get: no groups or author of the notice.
    assert set(shown[0]) == {"id", "text", "level", "ends_at"}
