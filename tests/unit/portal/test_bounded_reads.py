"""Every read the portal and the hub make of a user's file is bounded in bytes and time, and a
session's readings are never read through a link (gpuportal_adapters.slurm's readers, as the
portal and the hub call them). The reads run as this process's user: the boundary is sudo."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_adapters.slurm import SlurmClient, SlurmUnavailable
from gpuportal_adapters.slurm_commands import run_command
from gpuportal_portal import job_output, notebook_outputs, use_collector
from gpuportal_spawner.job_files import JobFiles

SLURM = SlurmClient(run_as=(), timeout=10)


def record(output: str, tasks: dict[str, str] | None = None) -> Any:
    return SimpleNamespace(user="alice", slurm_job_id="41", output=output, tasks=tasks or {})


def test_the_last_lines_of_a_sparse_output_with_no_newline_read_its_end_only(
    tmp_path: Path,
) -> None:
    out = tmp_path / "train.out"
    with out.open("wb") as handle:  # 4 GiB of nothing, no newline (tail -n read it whole)
        handle.seek(4 * 2**30)
        handle.write(b"\nepoch 9 loss 0.1\nlast line, no newline")
    started = time.monotonic()
    lines = asyncio.run(job_output.output_tail(SLURM, record(str(out))))
    assert time.monotonic() - started < 5
    assert lines[-2:] == ["epoch 9 loss 0.1", "last line, no newline"]
    assert sum(len(line) for line in lines) <= job_output.TAIL_BYTES


def test_an_arrays_tasks_keep_their_headings_and_their_own_last_lines(tmp_path: Path) -> None:
    for task in ("0", "1"):
        (tmp_path / f"run-{task}.out").write_text("".join(f"{task}:{n}\n" for n in range(50)))
    tasks = {"0": "COMPLETED", "1": "RUNNING"}
    lines = asyncio.run(
        job_output.output_tail(SLURM, record(str(tmp_path / "run-%a.out"), tasks), lines=2)
    )
    assert lines == [
        f"==> {tmp_path}/run-0.out <==", "0:48", "0:49", "",
        f"==> {tmp_path}/run-1.out <==", "1:48", "1:49",
    ]  # fmt: skip


def test_readings_that_link_to_a_device_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readings = tmp_path / "41.json"
    readings.symlink_to("/dev/zero")  # `tail -c +1` of it grew the portal until its timeout
    monkeypatch.setattr(use_collector, "summary_path", lambda home, job_id: readings)
    monkeypatch.setattr(use_collector.pwd, "getpwnam", lambda user: SimpleNamespace(pw_dir="/"))
    started = time.monotonic()
    gpu = asyncio.run(use_collector.gpu_readings(SLURM, "alice", "41"))
    assert time.monotonic() - started < 5
    assert gpu["measured"] is False


def test_readings_too_large_are_refused_and_a_fifo_is_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readings = tmp_path / "41.json"
    monkeypatch.setattr(use_collector, "summary_path", lambda home, job_id: readings)
    monkeypatch.setattr(use_collector.pwd, "getpwnam", lambda user: SimpleNamespace(pw_dir="/"))
    readings.write_text(json.dumps({"measured": True, "pad": "x" * use_collector.READINGS_MAX}))
    gpu = asyncio.run(use_collector.gpu_readings(SLURM, "alice", "41"))
    assert gpu == {"measured": False, "note": "its GPU readings are over 65536 bytes"}
    readings.unlink()
    os.mkfifo(readings)  # no writer: a plain open would wait for one until the timeout
    started = time.monotonic()
    gpu = asyncio.run(use_collector.gpu_readings(SLURM, "alice", "41"))
    assert time.monotonic() - started < 5 and gpu["measured"] is False


def test_a_report_is_not_read_through_a_link(tmp_path: Path) -> None:
    report = tmp_path / "train.html"
    report.symlink_to("/dev/zero")
    with pytest.raises(notebook_outputs.ReportUnreadable):
        asyncio.run(notebook_outputs.read_report(SLURM, "alice", str(report)))


def test_a_sessions_log_is_read_by_its_end(tmp_path: Path) -> None:
    log = tmp_path / "jupyter-12.log"
    with log.open("wb") as handle:
        handle.seek(2**30)
        handle.write(b"\nServer error: port in use\nlast")
    files = JobFiles(SLURM, user="root", server="", log_dir_template=str(tmp_path), hub="t")
    assert asyncio.run(files.log_tail("12", 2)) == "Server error: port in use\nlast"


def test_a_command_that_prints_without_end_is_killed_at_its_bound() -> None:
    started = time.monotonic()
    with pytest.raises(SlurmUnavailable, match="printed over 1048576 bytes"):
        asyncio.run(run_command(["cat", "/dev/zero"], timeout=30, max_output=2**20))
    cut = asyncio.run(
        run_command(["cat", "/dev/zero"], timeout=30, max_output=1000, keep_truncated=True)
    )
    assert cut.truncated and cut.raw_stdout == b"\0" * 1000
    # And its words: only the first 64 KiB are kept of a command that says too much.
    loud = asyncio.run(run_command(["sh", "-c", "head -c 9000000 /dev/zero >&2"], timeout=30))
    assert len(loud.stderr) == 64 * 1024 and loud.returncode == 0
    assert time.monotonic() - started < 10
