"""Issue 54, item 20: `PORTAL_LOGIN=ldap make demo` on a running demo kept the hub as it was
(single sign-on, "[hub] already running") and said the other. Now deploy/local/hub.sh keeps the
settings the hub runs with in a file, finds what a second start changes, and restarts the hub
with it; `gpuportal-admin` reads the same file (item 15: root's preflight in a plain shell
warned "the hub serves plain HTTP" of a hub serving HTTPS). A hub of its own, on port 8600."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hubproc import REPO, VENV_BIN

pytestmark = [pytest.mark.integration, pytest.mark.second_lane]

HUB_SH = REPO / "deploy" / "local" / "hub.sh"


@pytest.fixture
def demo_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    # Where the service account reaches (not under pytest's root-only folder).
    state = Path("/var/lib/gpuportal-settings-check")
    shutil.rmtree(state, ignore_errors=True)
    env = {
        "PATH": os.environ["PATH"],
        "PORTAL_HUB_STATE": str(state),
        "PORTAL_HUB_PORT": "8600",
        "PORTAL_HUB_ID": "settings-check",
        "PORTAL_SETTINGS_FILE": str(tmp_path / "hub.env"),
        "PORTAL_LOGIN": "ldap",
    }
    yield env
    subprocess.run(["bash", str(HUB_SH), "stop"], env=env, capture_output=True, timeout=120)
    shutil.rmtree(state, ignore_errors=True)


def hub_sh(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["bash", str(HUB_SH), *args], env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_second_start_with_other_settings_applies_them(demo_env: dict[str, str]) -> None:
    assert "[hub] up at https://127.0.0.1:8600" in hub_sh(demo_env, "start")
    settings = Path(demo_env["PORTAL_SETTINGS_FILE"])
    assert "PORTAL_LOGIN='ldap'\n" in settings.read_text()
    assert oct(settings.stat().st_mode & 0o777) == "0o640"

    assert hub_sh(demo_env, "start").strip() == "[hub] already running at https://127.0.0.1:8600"
    said = hub_sh({**demo_env, "PORTAL_ACTIVITY_INTERVAL": "120"}, "start")
    assert said.startswith(
        "[hub] running with other settings (PORTAL_ACTIVITY_INTERVAL): restarting it"
    ), said
    assert "[hub] up at" in said
    assert "PORTAL_ACTIVITY_INTERVAL='120'\n" in settings.read_text()

    # root's preflight in a plain shell: the hub's settings from its file.
    preflight = subprocess.run(
        [str(VENV_BIN / "gpuportal-admin"), "--settings", str(settings), "preflight"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert "plain HTTP" not in preflight
    assert "public certificate:" in preflight
