"""A job's use against its request, from sacct (gpuportal_core.efficiency)."""

from __future__ import annotations

import dataclasses

import pytest

from gpuportal_core.efficiency import (
    cpu_seconds,
    gpu_summary,
    mean_gpu_percent,
    parse_use,
    size_bytes,
)

# One core of four burned for a minute, in a 10-minute job that asked for 8 GB (Slurm 22.05).
ONE_OF_FOUR = """\
291|COMPLETED|00:01:00|00:10:00|01:00.512|4|8G|
291.batch|COMPLETED|00:01:00||01:00.510|4||5340K
291.extern|COMPLETED|00:01:00||00:00.002|4||0
"""
# The same job on a cluster without an accounting gatherer (JobAcctGatherType=none).
NOT_GATHERED = """\
292|COMPLETED|00:01:00|00:10:00|00:00:00|4|8G|
292.batch|COMPLETED|00:01:00||00:00:00|4||
292.extern|COMPLETED|00:01:00||00:00:00|4||
"""


def test_one_core_of_four_is_a_quarter():
    use = parse_use(ONE_OF_FOUR)
    assert use is not None
    assert use.cpu_percent == pytest.approx(25.2, abs=0.1)
    assert use.time_percent == 10.0
    assert use.max_rss_bytes == 5340 * 1024 and use.requested_bytes == 8 * 1024**3
    assert use.summary() == (
        "Used 25 % of its 4 cores, 5 MB of its 8.0 GB of memory (0 %) and 1 min of its 10 min."
    )


def test_without_a_gatherer_use_is_not_measured_not_zero():
    use = parse_use(NOT_GATHERED)
    assert use is not None
    assert use.cpu_percent is None and use.memory_percent is None
    assert use.time_percent == 10.0
    assert use.summary() == (
        "Ran 1 min of its 10 min; Slurm's accounting has no CPU or memory figures for it."
    )
    assert parse_use("") is None
    # A job shorter than the gatherer's first sample: said so, not blamed on the cluster.
    short = dataclasses.replace(use, elapsed_s=3)
    assert short.summary() == (
        "Ran 3 s of its 10 min; too short for Slurm's accounting to measure its CPU and memory use."
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("00:16.123", 16.123), ("01:02:03", 3723.0), ("1-00:00:00", 86400.0), ("x", None)],
)
def test_cpu_times(text, seconds):
    assert cpu_seconds(text) == (pytest.approx(seconds) if seconds else None)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("8G", 8 * 1024**3),
        ("3500M", 3500 * 1024**2),
        ("1234K", 1234 * 1024),
        ("4000Mn", 4000 * 1024**2),
        ("0", 0),
        ("", None),
    ],
)
def test_sizes(text, size):
    assert size_bytes(text) == size


def test_gpus_and_account_from_the_allocation():
    text = (
        "300|COMPLETED|01:00:00|08:00:00|00:10:00|16|96G||"
        "billing=16,cpu=16,gres/gpu:a100=2,gres/gpu=2,mem=96G,node=1|ds\n"
    )
    use = parse_use(text)
    assert use is not None
    assert (use.gpus, use.account, use.gpu_hours) == (2, "ds", 2.0)
    assert use.gpu_type == "a100"  # the accounting tracks the kind (AccountingStorageTRES)
    untyped = parse_use(text.replace("gres/gpu:a100=2,", ""))
    assert untyped is not None and (untyped.gpus, untyped.gpu_type) == (2, "")


def test_a_sessions_gpu_readings_in_words():
    two = {
        "measured": True,
        "gpus": [
            {"mean_percent": 90, "peak_percent": 100, "memory_peak_mib": 30000,
             "memory_total_mib": 81559},
            {"mean_percent": 30, "peak_percent": 70, "memory_peak_mib": 1000,
             "memory_total_mib": 81559},
        ],
    }  # fmt: skip
    assert gpu_summary(two, 2) == (
        "Its 2 GPUs: 60 % busy on average (peak 100 %), at most 29 GB of their 159 GB."
    )
    assert mean_gpu_percent(two) == 60
    unmeasured = {"measured": False, "note": "nvidia-smi is not installed on gpu01"}
    assert gpu_summary(unmeasured, 1) == (
        "GPU use not measured: nvidia-smi is not installed on gpu01."
    )
    assert gpu_summary(unmeasured, 0) == ""  # asked for no GPU: nothing to say


def test_each_step_of_a_job_with_several():
    # A batch script that waits while torchrun's srun step works its 8 cores.
    text = (
        "400|COMPLETED|00:10:00|01:00:00|01:00:30|8|48G||cpu=8,gres/gpu=1,mem=48G|ds\n"
        "400.batch|COMPLETED|00:10:00||00:00:30|8||100M|cpu=8|ds\n"
        "400.extern|COMPLETED|00:10:00||00:00:00|8||0|cpu=8|ds\n"
        "400.0|COMPLETED|00:09:00||01:00:00|8||6G|cpu=8|ds\n"
    )
    use = parse_use(text)
    assert use is not None
    assert [(s.step, s.cores, s.cpu_percent) for s in use.steps] == [
        ("batch", 8, pytest.approx(0.6, abs=0.1)),
        ("0", 8, pytest.approx(83.3, abs=0.1)),
    ]
    assert use.as_dict()["steps"][1]["max_rss_bytes"] == 6 * 1024**3
    # One step (besides extern): nothing more to say than the job's own line.
    assert parse_use(ONE_OF_FOUR).steps == ()  # type: ignore[union-attr]
