"""gpuportal_adapters.hub_service: every hub service stops when the hub asks, and dies with the
hub."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def sleeper(tmp_path: Path) -> dict[str, str]:
    """A service that ignores nothing on purpose: it only sleeps, and says when it is up."""
    (tmp_path / "sleeper.py").write_text(
        "import sys, time\nprint('up', flush=True)\ntime.sleep(600)\n"
    )
    return {**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"}


def _ignoring_sigint() -> None:
    # As a hub started with `&` by a script: its children inherit SIGINT ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_service_ends_on_the_hubs_sigint_even_when_its_parent_ignored_it(
    sleeper: dict[str, str],
) -> None:
    service = subprocess.Popen(
        [sys.executable, "-m", "gpuportal_adapters.hub_service", "sleeper"],
        env=sleeper,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=_ignoring_sigint,
    )
    assert service.stdout is not None and service.stdout.readline().strip() == "up"
    service.send_signal(signal.SIGINT)
    assert service.wait(timeout=5) == 0  # the hub would wait 10 s, then send SIGTERM


def test_a_service_dies_with_the_hub(sleeper: dict[str, str], tmp_path: Path) -> None:
    # A stand-in hub that starts the service and is then killed with -9.
    pid_file = tmp_path / "service.pid"
    hub = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            "p = subprocess.Popen("
            "[sys.executable, '-m', 'gpuportal_adapters.hub_service', 'sleeper'],"
            " stdout=subprocess.PIPE, text=True)\n"
            "p.stdout.readline()\n"
            f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
            "time.sleep(600)\n",
        ],
        env=sleeper,
    )
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    service_pid = int(pid_file.read_text())
    hub.kill()
    hub.wait()
    for _ in range(50):
        if not Path(f"/proc/{service_pid}").exists() or _zombie(service_pid):
            return
        time.sleep(0.1)
    os.kill(service_pid, signal.SIGKILL)
    pytest.fail("the service ran on after its hub was killed")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True
