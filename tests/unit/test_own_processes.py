"""tests/own_processes.py: a test's look for a user's processes leaves those of a Debian root
beside this machine alone (make test runs the Debian 13 tests there, beside the lanes)."""

from __future__ import annotations

import getpass
import os
import subprocess
import time

import pytest

from tests import own_processes


def own_line(lines: list[str]) -> bool:
    return any(line.split()[0] == str(os.getpid()) for line in lines)


def test_this_machines_processes_are_the_users() -> None:
    assert own_line(own_processes.ps_of(getpass.getuser()))


def test_a_process_whose_root_is_a_root_beside_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # This process's root is "/": where "/" counts as a root beside, it is left out.
    monkeypatch.setattr(own_processes, "ROOTS_BESIDE", "/")
    assert not own_line(own_processes.ps_of(getpass.getuser()))


def test_pgrep_leaves_out_a_process_of_another_pid_namespace() -> None:
    # As a root's processes are: a sleep in a pid namespace of its own (unshare needs root).
    marker = "sleep 4242.5"
    other = subprocess.Popen(["unshare", "--pid", "--fork", *marker.split()])
    try:
        found_anywhere = own_processes_found([], marker)
        if not found_anywhere:
            pytest.skip("unshare --pid needs root")
        assert own_processes_found(list(own_processes.HERE), marker) == []
    finally:
        other.kill()
        other.wait()


def own_processes_found(flags: list[str], pattern: str) -> list[str]:
    for _ in range(50):  # the sleep starts a moment after unshare
        pids = subprocess.run(
            ["pgrep", *flags, "-x", "-f", pattern], capture_output=True, text=True
        ).stdout.split()
        if pids or flags:
            return pids
        time.sleep(0.05)
    return []
