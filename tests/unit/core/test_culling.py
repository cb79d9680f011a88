"""The culling rules: which limit culls a session first, GPU readings, and the words."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from gpuportal_core.culling import (
    CullLimits,
    GpuReportError,
    GpuUse,
    Reason,
    cull_message,
    plan,
    warning,
)
from gpuportal_core.profiles import (
    ProfileError,
    culling_fields,
    profile_from_config,
    profile_from_record,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def gpu(idle_minutes: float, *, measured: bool = True) -> GpuUse:
    return GpuUse(
        measured=measured,
        since=NOW - timedelta(hours=5),
        busy_at=NOW - timedelta(minutes=idle_minutes),
        utilisation=(0, 0),
        note="" if measured else "nvidia-smi is not installed on gpu01",
    )


def test_no_limits_never_cull():
    assert plan(CullLimits(), inactive=10**6, gpu=gpu(10**4), now=NOW).reason is None


def test_idle_past_its_limit_is_due():
    result = plan(CullLimits(idle=3600), inactive=3601, gpu=None, now=NOW)
    assert (result.reason, result.due) == (Reason.IDLE, True)


def test_active_session_is_kept_and_told_when():
    result = plan(CullLimits(idle=3600), inactive=600, gpu=None, now=NOW)
    assert (result.reason, result.due, result.in_seconds) == (Reason.IDLE, False, 3000)


def test_idle_gpus_cull_a_session_a_browser_keeps_active():
    limits = CullLimits(idle=3600, gpu_idle=1800)
    result = plan(limits, inactive=5, gpu=gpu(31), now=NOW)
    assert (result.reason, result.due) == (Reason.GPU_IDLE, True)


def test_busy_gpus_do_not_cull():
    limits = CullLimits(gpu_idle=1800)
    assert not plan(limits, inactive=10**5, gpu=gpu(2), now=NOW).due


def test_unmeasured_gpus_never_cull():
    limits = CullLimits(gpu_idle=60)
    assert plan(limits, inactive=0, gpu=gpu(10**4, measured=False), now=NOW).reason is None
    assert gpu(1, measured=False).describe(NOW) == (
        "GPU use not measured: nvidia-smi is not installed on gpu01"
    )


def test_gpus_never_busy_count_from_when_measuring_began():
    use = GpuUse(measured=True, since=NOW - timedelta(minutes=40))
    assert use.idle_seconds(NOW) == 2400
    assert use.describe(NOW) == "GPU use now: no GPUs; idle for 40 min"


def test_report_round_trip_and_refusals():
    report = {
        "server": "",
        "measured": True,
        "since": "2026-11-23T10:00:00+00:00",
        "busy_at": "2026-11-23T11:30:00+00:00",
        "utilisation": [37, 0],
        "note": "",
    }
    use = GpuUse.from_report(report)
    assert use.utilisation == (37, 0)
    assert use.idle_seconds(NOW) == 1800
    with pytest.raises(GpuReportError, match="'utilisation' must be a list of percentages"):
        GpuUse.from_report({**report, "utilisation": [101]})
    with pytest.raises(GpuReportError, match="time zone"):
        GpuUse.from_report({**report, "since": "2026-11-23T10:00:00"})
    with pytest.raises(GpuReportError, match="'measured' must be true or false"):
        GpuUse.from_report({**report, "measured": "yes"})


def test_limits_travel_in_the_spawner_state():
    limits = CullLimits(idle=60, gpu_idle=0, queued=7200)
    assert CullLimits.from_state(limits.as_state()) == limits
    assert CullLimits.from_state(None) == CullLimits()
    assert CullLimits.from_state({"idle": "60", "queued": -5}) == CullLimits()


def test_words():
    assert cull_message(Reason.IDLE, 3600, "42") == (
        "Your session (job 42) was stopped after 1 h without use, its profile's idle limit, so "
        "that its GPUs go to others who wait. Your files are kept."
    )
    assert "its GPUs were idle for 2 h" in cull_message(Reason.GPU_IDLE, 7200, "42")
    assert "waited in the queue for 4 h" in cull_message(Reason.QUEUED, 4 * 3600, "42")
    upcoming = plan(CullLimits(idle=3600), inactive=3000, gpu=None, now=NOW)
    assert warning(upcoming, CullLimits(idle=3600)) == (
        "This session is stopped in 10 min unless it is used (idle limit 1 h)."
    )


def test_profile_limits_are_checked_and_read_from_the_portal():
    with pytest.raises(ProfileError, match="idle_limit: must be 00:00:00 \\(never\\) or at least"):
        profile_from_config({"slug": "gpu-1", "gpus": 1, "idle_limit": 30})
    record = {
        "slug": "gpu-1",
        "title": "1 GPU",
        "gpus": 1,
        "partition": "gpu",
        "cores_per_gpu": 8,
        "mem_per_gpu_gb": 48,
        "default_runtime": "08:00:00",
        "max_runtime": "24:00:00",
        "idle_limit": "01:00:00",
        "queue_limit": "00:00:00",
    }
    profile = profile_from_record(record)
    # A limit left out is the spec's default (2 h with idle GPUs), as for a new profile.
    assert CullLimits.of(profile) == CullLimits(idle=3600, gpu_idle=7200, queued=0)


@pytest.mark.parametrize(
    ("queued", "startup", "wait"),
    [
        (4 * 3600, 300, 4 * 3600 + 300),  # the default profile: 4 h in the queue, then 5 min
        (60, 300, 360),  # the queue limit ends the wait first, with words saying so
        (0, 300, 7 * 24 * 3600 + 300),  # no queue limit: as long as Slurm keeps the job
    ],
)
def test_the_hub_waits_for_a_start_as_long_as_the_queue_limit_allows(queued, startup, wait):
    assert CullLimits(queued=queued).start_wait(startup) == wait


def test_each_rule_is_a_field_of_the_profiles_spec_and_each_culling_field_a_rule():
    """Issue 56, item 5: a culling limit is a spec field that names its rule; the limits, their
    state and the admin list follow from it, so the two lists must name the same rules."""
    rules = {reason.value for reason in Reason}
    assert set(culling_fields()) == rules
    assert {f.name for f in dataclasses.fields(CullLimits)} == rules
    limits = CullLimits(idle=1, gpu_idle=2, queued=3)
    assert CullLimits.from_state(limits.as_state()) == limits
    assert [limits.limit(reason) for reason in Reason] == [1, 2, 3]
