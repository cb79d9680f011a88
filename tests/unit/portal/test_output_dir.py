"""Job output folders are made as the user once a minute at most, and made again after that
(a user who removed the folder must not get jobs whose output Slurm cannot open)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from gpuportal_portal import job_output


class Recorder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def run_as_user(self, user: str, argv: list[str]) -> SimpleNamespace:
        self.calls.append(argv)
        return SimpleNamespace(returncode=0, stderr="")


def test_the_output_folder_is_made_again_after_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(job_output.time, "monotonic", lambda: now[0])
    slurm = Recorder()
    make = job_output.OutputFolders().make
    asyncio.run(make(slurm, "alice", "/home/alice/.gpuportal-jobs"))  # type: ignore[arg-type]
    asyncio.run(make(slurm, "alice", "/home/alice/.gpuportal-jobs"))  # type: ignore[arg-type]
    assert len(slurm.calls) == 1
    now[0] += 61
    asyncio.run(make(slurm, "alice", "/home/alice/.gpuportal-jobs"))  # type: ignore[arg-type]
    assert len(slurm.calls) == 2
    # Another app's folders (a second portal in the process, a test's): its own record.
    other = job_output.OutputFolders().make
    asyncio.run(other(slurm, "alice", "/home/alice/.gpuportal-jobs"))  # type: ignore[arg-type]
    assert len(slurm.calls) == 3
