"""`gpuportal jobs ... --follow` stops when the portal says the job's state is final (it keeps no
list of Slurm's states of its own), and prints every byte the job wrote, however fast."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_cli import jobs_commands


class Portal:
    """The job's answers, one per look, and its output files as they grow between looks."""

    def __init__(self, looks: list[tuple[dict[str, Any], dict[str, str]]], part: int = 64) -> None:
        self.looks: Iterator[tuple[dict[str, Any], dict[str, str]]] = iter(looks)
        self.files: dict[str, str] = {}
        self.part = part  # the portal's most per answer, small here to show the reads go on

    def portal(self, method: str, path: str, params: dict[str, Any] | None = None) -> Any:
        if path == "/jobs/7":
            job, self.files = next(self.looks)
            # What the job's page shows: its last 30 lines (the follower used to read these).
            lines = self.files.get("", "").splitlines()[-30:]
            return {**job, "output_tail": lines}
        assert path == "/jobs/7/output" and params is not None
        data = self.files.get(str(params.get("task", "")), "").encode()
        offset = int(params["offset"])
        text = data[offset : offset + self.part]
        return {
            "text": text.decode(),
            "next_offset": offset + len(text),
            "more": len(data) > offset + len(text),
        }


def follow(
    portal: Portal, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.setattr(jobs_commands.time, "sleep", lambda _: None)
    with pytest.raises(SystemExit) as ended:
        jobs_commands._follow(SimpleNamespace(client=portal), 7)
    return int(ended.value.code or 0), capsys.readouterr().out


def job(
    state: str, final: bool, exit_code: int | None = None, tasks: dict[str, str] | None = None
) -> dict[str, Any]:
    request = {"array": "0-1"} if tasks else {}
    return {
        "state": state,
        "final": final,
        "exit_code": exit_code,
        "request": request,
        "tasks": tasks or {},
    }


def test_follow_ends_when_the_portal_says_final(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    looks = [(job("RUNNING", False), {}), (job("COMPLETING", False), {})]
    looks.append((job("COMPLETED", True, 0), {}))
    assert follow(Portal(looks), monkeypatch, capsys) == (0, "")


def test_a_state_the_cli_never_heard_of_ends_it_when_final(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert follow(Portal([(job("PREEMPTED_FOR_GOOD", True), {})]), monkeypatch, capsys)[0] == 1


def test_a_burst_between_two_looks_is_printed_whole(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The CI run of 2026-11-29: torchrun printed a C++ traceback of 30 frames between two looks,
    # and the follower, reading the job's last 30 lines, never printed "epoch  3" before it.
    first = "epoch  1\nepoch  2\n"
    burst = first + "epoch  3\n" + "".join(f"frame #{n}\n" for n in range(30))
    looks = [(job("RUNNING", False), {"": first}), (job("COMPLETED", True, 0), {"": burst})]
    code, out = follow(Portal(looks), monkeypatch, capsys)
    assert (code, out) == (0, burst)


def test_an_array_jobs_tasks_each_under_a_heading(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    waiting = {"0": "RUNNING", "1": "PENDING"}
    done = {"0": "COMPLETED", "1": "COMPLETED"}
    looks = [
        (job("RUNNING", False, tasks=waiting), {"0": "a\n", "1": ""}),
        (job("COMPLETED", True, 0, tasks=done), {"0": "a\nb\n", "1": "c\n"}),
    ]
    assert follow(Portal(looks), monkeypatch, capsys) == (
        0,
        "==> task 0 <==\na\nb\n==> task 1 <==\nc\n",
    )
