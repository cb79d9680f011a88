"""The home page's line on the last session (gpuportal_spawner.last_session)."""

from __future__ import annotations

from datetime import datetime

from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.right_size import Suggestion
from gpuportal_spawner.last_session import advice, said

NOW = datetime(2026, 11, 25, 14, 0)
ONE = Suggestion(ResourceProfile(slug="gpu-1", title="1 GPU", gpus=1), 7200)


def test_what_it_used_in_a_sentence():
    session = {
        "name": "default",
        "ended_at": "2026-11-25T13:02:11+00:00",
        "use": {"summary": "Used 9 % of its 32 cores and 1 h 30 min of its 8 h 00 min."},
    }
    assert said(session) == (
        "Your last session (default, ended 13:02) used 9 % of its 32 cores and 1 h 30 min of "
        "its 8 h 00 min."
    )


def test_the_smaller_ask_and_when_it_would_start():
    assert advice(ONE, NOW, NOW) == "Next time gpu-1 with 2 h would do, and would start at once."
    later = datetime(2026, 11, 25, 15, 30)
    assert advice(ONE, later, NOW) == (
        "Next time gpu-1 with 2 h would do; as the cluster is now it would start about 15:30."
    )
    assert advice(ONE, None, NOW) == "Next time gpu-1 with 2 h would do."


def test_a_session_whose_use_is_not_read_yet_is_still_the_last():
    session = {"name": "long", "ended_at": "2026-11-25T13:40:00+00:00", "use": None}
    assert said(session) == (
        "Your last session (long, ended 13:40): what it used shows here once Slurm's "
        "accounting has it, in a few minutes."
    )
    gone = {**session, "recorded": False}
    assert said(gone) == (
        "Your last session (long, ended 13:40): Slurm's accounting has no record of what it used."
    )
