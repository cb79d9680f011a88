"""`gpuportal jobs ... --follow` stops when the portal says the job's state is final (it keeps no
list of Slurm's states of its own)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from gpuportal_cli import jobs_commands


def follow(answers: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(jobs_commands.time, "sleep", lambda _: None)
    replies = iter(answers)
    client = SimpleNamespace(portal=lambda method, path: next(replies))
    with pytest.raises(SystemExit) as ended:
        jobs_commands._follow(SimpleNamespace(client=client), 7)
    return int(ended.value.code or 0)


def job(state: str, final: bool, exit_code: int | None = None) -> dict[str, Any]:
    return {"state": state, "final": final, "exit_code": exit_code, "output_tail": []}


def test_follow_ends_when_the_portal_says_final(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = [job("RUNNING", False), job("COMPLETING", False), job("COMPLETED", True, 0)]
    assert follow(answers, monkeypatch) == 0


def test_a_state_the_cli_never_heard_of_ends_it_when_final(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert follow([job("PREEMPTED_FOR_GOOD", True)], monkeypatch) == 1
