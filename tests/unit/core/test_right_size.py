"""The home page's suggestion from the last session's use (gpuportal_core.right_size)."""

from __future__ import annotations

from typing import Any

from gpuportal_core.profiles import ResourceProfile
from gpuportal_core.right_size import needed_gpus, needed_runtime, suggest

PROFILES = [
    ResourceProfile(slug=f"gpu-{n}", title=f"{n} GPU", gpus=n) for n in (1, 2, 4)
]  # 8 cores and 48 GB per GPU, 8 h by default
GIB = 1024**3


def _use(**changes: Any) -> dict[str, Any]:
    """A 4-GPU session of 8 h that ran 1 h 30 min: 9 % of 32 cores, 3 GB of 192 GB."""
    use = {
        "gpus": 4,
        "cores": 32,
        "cpu_percent": 9.0,
        "requested_bytes": 192 * GIB,
        "max_rss_bytes": 3 * GIB,
        "elapsed_s": 5400,
        "limit_s": 8 * 3600,
        "gpu": {"measured": False, "note": "nvidia-smi is not installed on gpu01"},
    }
    return use | changes


def _cards(*means: float) -> dict[str, Any]:
    return {"measured": True, "gpus": [{"mean_percent": m, "peak_percent": 99} for m in means]}


def test_busy_gpus_and_the_cores_and_memory_used_say_how_many_gpus():
    assert needed_gpus(_use(gpu=_cards(60, 40, 0, 1))) == 2
    assert needed_gpus(_use(gpu=_cards(0, 0, 0, 0))) == 1  # a session needs one to start
    # GPUs nobody read may have been busy: all of them.
    assert needed_gpus(_use()) == 4
    # 3 cores' worth of 8 per GPU, and 100 GB of 48 GB per GPU: 3 GPUs' worth of memory.
    assert needed_gpus(_use(gpu=_cards(50, 0, 0, 0), max_rss_bytes=100 * GIB)) == 3
    assert needed_gpus(_use(gpu=_cards(50, 0, 0, 0), cpu_percent=70.0)) == 3  # 22.4 cores


def test_the_time_it_ran_with_a_margin_in_half_hours():
    assert needed_runtime(_use()) == 2 * 3600  # 1 h 30 min x 1.25, up to 2 h
    assert needed_runtime(_use(elapsed_s=600)) == 3600  # an hour at least
    assert needed_runtime(_use(elapsed_s=8 * 3600)) == 8 * 3600  # ran to its limit


def test_the_smallest_profile_that_would_have_done():
    suggestion = suggest(_use(gpu=_cards(60, 0, 0, 0)), PROFILES)
    assert suggestion is not None
    assert (suggestion.profile.slug, suggestion.runtime_s) == ("gpu-1", 2 * 3600)
    # Unmeasured GPUs: the same GPUs, but a quarter of the time.
    same = suggest(_use(), PROFILES)
    assert same is not None and (same.profile.slug, same.runtime_s) == ("gpu-4", 2 * 3600)
    # About what it used (busy GPUs, 7 h of 8): nothing to suggest.
    assert suggest(_use(gpu=_cards(60, 50, 40, 30), elapsed_s=7 * 3600), PROFILES) is None
    assert suggest(_use(gpus=0), PROFILES) is None


def test_no_advice_from_a_session_too_short_to_judge():
    # 3 s of an 8 h session said "gpu-1 with 1 h would do" (issue 34, item 4).
    assert suggest(_use(elapsed_s=3, gpu=_cards(0, 0, 0, 0)), PROFILES) is None
    assert suggest(_use(elapsed_s=599, gpu=_cards(0, 0, 0, 0)), PROFILES) is None
    assert suggest(_use(elapsed_s=600, gpu=_cards(0, 0, 0, 0)), PROFILES) is not None
