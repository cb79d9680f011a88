"""A notebook job's GPU readings (gpuportal_session.job_gpu_readings): read at the start, while
it runs and at its end, into the file a session writes, for the job's efficiency card; where
nothing can be read, the file says why."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

from gpuportal_adapters.gpu_summary import summary_path
from gpuportal_session.job_gpu_readings import JobGpuReadings


def _fake_smi(tmp_path: Path, utilisation: int) -> str:
    program = tmp_path / "nvidia-smi"
    program.write_text(f"#!/bin/sh\necho '{utilisation}, 2048, 81559'\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program)


def test_a_run_reads_its_gpu_at_the_start_meanwhile_and_at_the_end(tmp_path: Path) -> None:
    environ = {
        "SLURM_JOB_ID": "4242", "HOME": str(tmp_path), "CUDA_VISIBLE_DEVICES": "0",
        "GPUPORTAL_NVIDIA_SMI": _fake_smi(tmp_path, 60),
    }  # fmt: skip
    readings = JobGpuReadings(environ, every=0.2)
    readings.start()
    time.sleep(0.5)
    readings.stop()
    kept = json.loads(summary_path(tmp_path, "4242").read_text())
    assert kept["measured"] is True and kept["samples"] >= 3
    assert kept["gpus"][0]["mean_percent"] == 60.0
    assert kept["gpus"][0]["memory_peak_mib"] == 2048


def test_no_gpu_given_is_said_in_words_and_outside_a_job_nothing_is_written(
    tmp_path: Path,
) -> None:
    readings = JobGpuReadings({"SLURM_JOB_ID": "4243", "HOME": str(tmp_path)}, every=10)
    readings.start()
    readings.stop()
    kept = json.loads(summary_path(tmp_path, "4243").read_text())
    assert kept == {
        "job_id": "4243", "measured": False, "samples": 0,
        "note": "this job was given no GPU", "gpus": [],
    }  # fmt: skip
    outside = JobGpuReadings({"HOME": str(tmp_path)}, every=10)
    outside.start()
    outside.stop()
    assert sorted(p.name for p in summary_path(tmp_path, "x").parent.iterdir()) == ["4243.json"]
