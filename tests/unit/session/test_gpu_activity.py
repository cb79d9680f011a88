"""The session's GPU reading: nvidia-smi's output, the GPUs of the job, and the report."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuportal_adapters.gpu_summary import GpuReading, remove_old_summaries, summary_path
from gpuportal_session.gpu_activity import (
    GpuReporter,
    GpuWatch,
    NotMeasured,
    parse_readings,
    read_gpus,
)


def test_parse():
    assert parse_readings("37, 1024, 81559\n0, [N/A], [N/A]\n") == [
        GpuReading(37, 1024, 81559),
        GpuReading(0, None, None),
    ]
    assert parse_readings("5\n") == [GpuReading(5)]
    with pytest.raises(NotMeasured, match="gave no utilisation"):
        parse_readings("[N/A], 3, 80\n")
    with pytest.raises(NotMeasured, match="listed no GPU"):
        parse_readings("\n")


def test_a_job_without_gpus_is_not_measured():
    with pytest.raises(NotMeasured, match="given no GPU"):
        asyncio.run(read_gpus({}))


def test_no_nvidia_smi_says_where(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    environ = {"CUDA_VISIBLE_DEVICES": "0", "SLURMD_NODENAME": "gpu01"}
    with pytest.raises(NotMeasured, match=r"^nvidia-smi is not installed on gpu01$"):
        asyncio.run(read_gpus(environ))


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
    assert asyncio.run(read_gpus(environ)) == [GpuReading(50), GpuReading(50)]


def test_a_failing_nvidia_smi_is_not_measured(tmp_path):
    program = _fake_smi(
        tmp_path, "echo 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate' >&2; exit 9"
    )
    environ = {"CUDA_VISIBLE_DEVICES": "0", "GPUPORTAL_NVIDIA_SMI": program}
    with pytest.raises(NotMeasured, match="nvidia-smi failed: NVIDIA-SMI has failed"):
        asyncio.run(read_gpus(environ))


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


class _Log:
    def warning(self, *args: object) -> None:
        raise AssertionError(args)


def test_the_summary_over_the_session_is_kept_in_the_home(tmp_path):
    # Two GPUs read three times: mean and peak utilisation, peak memory, per GPU.
    readings = iter(["90, 1000, 81559\n0, 3, 81559", "60, 30000, 81559\n0, 3, 81559",
                     "30, 2000, 81559\n6, 500, 81559"])  # fmt: skip
    script = tmp_path / "readings"
    environ = {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_ID": "77", "HOME": str(tmp_path)}
    environ["GPUPORTAL_NVIDIA_SMI"] = _fake_smi(tmp_path, f"cat {script}")
    reporter = GpuReporter(environ, _Log())
    for text in readings:
        script.write_text(text + "\n")
        asyncio.run(reporter.sample())
    path = summary_path(tmp_path, "77")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    summary = json.loads(path.read_text())
    assert summary["measured"] is True and summary["samples"] == 3
    assert summary["gpus"] == [
        {"mean_percent": 60.0, "peak_percent": 90, "memory_peak_mib": 30000,
         "memory_total_mib": 81559},
        {"mean_percent": 2.0, "peak_percent": 6, "memory_peak_mib": 500,
         "memory_total_mib": 81559},
    ]  # fmt: skip


def test_a_session_that_cannot_read_its_gpus_leaves_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    environ = {"CUDA_VISIBLE_DEVICES": "0", "SLURMD_NODENAME": "gpu01"}
    environ |= {"SLURM_JOB_ID": "78", "HOME": str(tmp_path)}
    asyncio.run(GpuReporter(environ, _Log()).sample())
    summary = json.loads(summary_path(tmp_path, "78").read_text())
    assert summary == {
        "job_id": "78",
        "measured": False,
        "samples": 0,
        "note": "nvidia-smi is not installed on gpu01",
        "gpus": [],
    }


def test_a_sessions_start_removes_summaries_older_than_a_week(tmp_path):
    folder = summary_path(tmp_path, "1").parent
    folder.mkdir(parents=True)
    old, recent = folder / "1.json", folder / "2.json"
    for path in (old, recent):
        path.write_text("{}")
    now = recent.stat().st_mtime
    os.utime(old, (now - 8 * 86400, now - 8 * 86400))
    assert remove_old_summaries(tmp_path, now) == 1
    assert not old.exists() and recent.exists()
