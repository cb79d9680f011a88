"""GPU-hours from sacct and fair share from sshare (gpuportal_core.usage)."""

from __future__ import annotations

from datetime import datetime

import pytest

from gpuportal_core.usage import (
    FairShare,
    gpu_hours,
    gpus_by_kind,
    gpus_of,
    hours_by_kind,
    limits_words,
    month_start,
    parse_fairshare,
    week_start,
)

SACCT = """\
alice|ds|billing=8,cpu=8,gres/gpu=1,mem=48G,node=1|3600
alice|ds|billing=16,cpu=16,gres/gpu=2,gres/gpu:a100=2,mem=96G,node=1|1800
bob|ds|billing=8,cpu=8,gres/gpu=1,mem=48G,node=1|7200
alice|ds|billing=4,cpu=4,mem=8G,node=1|9999
alice|ds|billing=8,cpu=8,gres/gpu=1,mem=48G,node=1|Unknown
"""
SSHARE = """\
root||||cpu=0,mem=0,gres/gpu=0
 ds|||gres/gpu=6000|cpu=90,mem=0,gres/gpu=750
  ds|alice|0.750000||cpu=0,mem=0,gres/gpu=0
 vision||||cpu=0,mem=0,gres/gpu=0
  vision|alice|0.250000||cpu=0,mem=0,gres/gpu=0
  ds|bob|0.500000||cpu=0,mem=0,gres/gpu=0
"""


def test_gpu_hours_per_user_and_account():
    assert gpus_of("cpu=8,gres/gpu=2,gres/gpu:a100=2") == 2  # counted once
    assert gpus_of("cpu=8,gres/gpu:a100=2,gres/gpu:t4=1") == 3
    assert gpus_of("cpu=4,mem=8G") == 0
    assert gpu_hours(SACCT) == {
        ("alice", "ds", ""): 1.0,
        ("alice", "ds", "a100"): 1.0,  # where the accounting tracks the kind
        ("bob", "ds", ""): 2.0,
    }
    assert hours_by_kind(gpu_hours(SACCT)) == {"": 3.0, "a100": 1.0}
    assert gpus_by_kind("cpu=8,gres/gpu=3,gres/gpu:a100=2,gres/gpu:t4=1") == {"a100": 2, "t4": 1}


def test_this_week_and_month_begin_on_monday_and_the_first():
    wednesday = datetime(2026, 11, 25, 14, 30)
    assert week_start(wednesday) == datetime(2026, 11, 23)
    assert month_start(wednesday) == datetime(2026, 11, 1)


def test_fair_share_in_words():
    ds, vision = parse_fairshare(SSHARE, "alice")
    assert (ds.account, ds.value, vision.value) == ("ds", 0.75, 0.25)
    assert ds.words().startswith("Your group ds has used less than its share lately")
    assert vision.words().startswith("Your group vision has used more than its share lately")
    assert "no fair share" in FairShare("ds", None).words()


def test_an_accounts_gpu_hour_limit_and_slurms_count_against_it():
    ds, vision = parse_fairshare(SSHARE, "alice")
    assert (ds.gpu_hours_limit, ds.gpu_hours_counted) == (100.0, 12.5)
    assert (vision.gpu_hours_limit, vision.gpu_hours_counted) == (None, None)
    assert limits_words("ds", 6, ds) == (
        "ds may hold at most 6 GPUs at once, and 100 GPU-hours in all: Slurm counts 12.5 used "
        "(87.5 left); jobs wait once it is reached."
    )
    assert limits_words("vision", None, vision) == (
        "vision has no limit on GPUs at once and no limit on GPU-hours."
    )


@pytest.mark.parametrize("line", ["", "ds|alice", "  ds|alice|n/a"])
def test_odd_sshare_lines(line):
    found = parse_fairshare(line, "alice")
    assert found == [] or found[0].value is None
