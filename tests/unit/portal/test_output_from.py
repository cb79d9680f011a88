"""A job's output by byte offset (GET /jobs/{id}/output): read with the real `dd` the sudo rule
allows, in parts, never cutting a character in two, and an array job's by task."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_portal import job_output


def AsItself() -> SlurmClient:
    """Runs the read as this process's user: the boundary is sudo, not dd."""
    return SlurmClient(run_as=(), timeout=10)


def job(output: Path | str, tasks: dict[str, str] | None = None) -> Any:
    return SimpleNamespace(user="alice", slurm_job_id="41", output=str(output), tasks=tasks or {})


def read_all(record: Any, size: int, task: str | None = None) -> tuple[str, int]:
    text, offset, reads = "", 0, 0
    while True:
        part = asyncio.run(job_output.output_from(AsItself(), record, offset, task, size))
        text, offset, reads = text + part.text, part.next_offset, reads + 1
        if not part.more:
            return text, reads


def test_parts_add_up_to_the_file_and_keep_characters_whole(tmp_path: Path) -> None:
    written = "épochs ✓\n" * 40 + "done\n"
    (tmp_path / "train.out").write_text(written)
    text, reads = read_all(job(tmp_path / "train.out"), size=7)  # cuts inside é and ✓
    assert text == written and "\ufffd" not in text
    assert reads > 40


def test_from_an_offset_and_at_the_end(tmp_path: Path) -> None:
    (tmp_path / "train.out").write_text("one\ntwo\n")
    record = job(tmp_path / "train.out")
    part = asyncio.run(job_output.output_from(AsItself(), record, 4))
    assert (part.text, part.next_offset, part.more) == ("two\n", 8, False)
    end = asyncio.run(job_output.output_from(AsItself(), record, 8))
    assert (end.text, end.next_offset, end.more) == ("", 8, False)


def test_a_file_not_written_yet_is_empty_not_an_error(tmp_path: Path) -> None:
    part = asyncio.run(job_output.output_from(AsItself(), job(tmp_path / "later.out"), 0))
    assert (part.text, part.next_offset, part.more) == ("", 0, False)


def test_an_array_job_is_read_by_task(tmp_path: Path) -> None:
    (tmp_path / "sweep-1.out").write_text("task one\n")
    record = job(f"{tmp_path}/sweep-%a.out", {"0": "RUNNING", "1": "RUNNING"})
    assert read_all(record, 100, "1") == ("task one\n", 1)
    with pytest.raises(job_output.TaskNeeded, match="task=N"):
        job_output.output_file(record, None)
    with pytest.raises(job_output.NoSuchOutput, match=r"no task '5' \(its tasks: 0, 1\)"):
        job_output.output_file(record, "5")
