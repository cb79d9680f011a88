"""The session's GPU reading: nvidia-smi's output, the GPUs of the job, and the report."""

from __future__ import annotations

import asyncio
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuportal_session.gpu_activity import (
    GpuWatch,
    NotMeasured,
    parse_utilisation,
    read_utilisation,
)


def test_parse():
    assert parse_utilisation("37\n0\n") == [37, 0]
    with pytest.raises(NotMeasured, match="gave no utilisation"):
        parse_utilisation("[N/A]\n")
    with pytest.raises(NotMeasured, match="listed no GPU"):
        parse_utilisation("\n")


def test_a_job_without_gpus_is_not_measured():
    with pytest.raises(NotMeasured, match="given no GPU"):
        asyncio.run(read_utilisation({}))


def test_no_nvidia_smi_says_where(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    environ = {"CUDA_VISIBLE_DEVICES": "0", "SLURMD_NODENAME": "gpu01"}
    with pytest.raises(NotMeasured, match=r"^nvidia-smi is not installed on gpu01$"):
        asyncio.run(read_utilisation(environ))


def _fake_smi(tmp_path: Path, body: str) -> str:
    program = tmp_path / "nvidia-smi"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program)


def test_reads_the_jobs_gpus_only(tmp_path):
    # The fake prints its arguments' --id back as one line per GPU, at 50 %.
    program = _fake_smi(tmp_path, 'for a; do case $a in --id=*) ids=${a#--id=};; esac; done\n'
                        'echo "$ids" | tr , "\\n" | sed "s/.*/50/"')  # fmt: skip
    environ = {"CUDA_VISIBLE_DEVICES": "1,3", "GPUPORTAL_NVIDIA_SMI": program}
    assert asyncio.run(read_utilisation(environ)) == [50, 50]


def test_a_failing_nvidia_smi_is_not_measured(tmp_path):
    program = _fake_smi(
        tmp_path, "echo 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate' >&2; exit 9"
    )
    environ = {"CUDA_VISIBLE_DEVICES": "0", "GPUPORTAL_NVIDIA_SMI": program}
    with pytest.raises(NotMeasured, match="nvidia-smi failed: NVIDIA-SMI has failed"):
        asyncio.run(read_utilisation(environ))


def test_watch_keeps_the_last_busy_time():
    start = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    watch = GpuWatch(since=start)
    watch.take([80, 0], start + timedelta(minutes=1))
    watch.take([0, 2], start + timedelta(minutes=2))  # under BUSY_PERCENT: idle
    report = watch.report("")
    assert report["busy_at"] == (start + timedelta(minutes=1)).isoformat()
    assert report["utilisation"] == [0, 2]
    watch.missed("nvidia-smi gave no answer within 10 s")
    assert watch.report("")["measured"] is False
