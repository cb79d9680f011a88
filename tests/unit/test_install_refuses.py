"""install.sh names the Debian it found and refuses any other system before it changes anything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

INSTALL = Path(__file__).resolve().parents[2] / "deploy" / "local" / "install.sh"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="install.sh runs as root only")


def run_on(tmp_path: Path, os_release: str) -> subprocess.CompletedProcess[str]:
    release = tmp_path / "os-release"
    release.write_text(os_release)
    # Were it to go on, it would build its venv in tmp_path (the tests check it did not).
    env = {
        "PATH": "/usr/bin:/bin",
        "PORTAL_OS_RELEASE": str(release),
        "PORTAL_VENV": str(tmp_path / "venv"),
    }
    return subprocess.run(
        ["bash", str(INSTALL)], capture_output=True, text=True, env=env, timeout=60
    )


def test_another_system_is_refused_with_what_to_do(tmp_path: Path) -> None:
    done = run_on(tmp_path, 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nVERSION_ID="24.04"\n')
    assert done.returncode == 1
    assert "this is Ubuntu 24.04.1 LTS" in done.stderr
    assert "Debian 12 (bookworm) or Debian 13 (trixie) only" in done.stderr
    assert "install-on-a-site.md" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_an_older_debian_is_refused_too(tmp_path: Path) -> None:
    done = run_on(
        tmp_path, 'PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\nID=debian\nVERSION_ID="11"\n'
    )
    assert done.returncode == 1 and "this is Debian GNU/Linux 11 (bullseye)" in done.stderr
