"""Slurm's times, read and written in one place (gpuportal_core.slurm_time)."""

from datetime import datetime

import pytest

from gpuportal_core.slurm_time import (
    SlurmTimeError,
    limit_seconds,
    parse_slurm_time,
    slurm_time_with_zone,
    time_limit_hms,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1-00:00:00", 86400),
        ("8:00:00", 28800),
        ("30:00", 1800),
        ("2-12:30:05", 2 * 86400 + 12 * 3600 + 30 * 60 + 5),
        ("UNLIMITED", None),
        ("infinite", None),
    ],
)
def test_parse_slurm_time_reads_sinfo_limits(text: str, seconds: int | None) -> None:
    assert parse_slurm_time(text) == seconds


def test_parse_slurm_time_refuses_garbage() -> None:
    with pytest.raises(SlurmTimeError, match="not a Slurm time limit"):
        parse_slurm_time("8h")


def test_limits_as_every_page_shows_them() -> None:
    assert time_limit_hms("8:00:00") == "08:00:00"  # squeue
    assert time_limit_hms("1-00:00:00") == "24:00:00"
    assert time_limit_hms("UNLIMITED") == "UNLIMITED"
    assert time_limit_hms("N/A") == ""
    assert limit_seconds("INVALID") is None


def test_slurm_times_get_the_clusters_zone() -> None:
    assert slurm_time_with_zone("Unknown") == ""
    with_zone = datetime.fromisoformat(slurm_time_with_zone("2026-11-24T14:05:00"))
    assert with_zone.utcoffset() is not None
    assert with_zone.replace(tzinfo=None) == datetime(2026, 11, 24, 14, 5)
