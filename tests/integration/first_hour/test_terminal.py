"""Issue 20, item 2: the JupyterLab terminal has the session's environment: its `python` (with
the environment's packages), `pip` and `jupyter`, as the kernels do. In Chromium, as alice, in
the PyTorch environment (a venv layered on the session's: until it had the session's Jupyter
config and data, JupyterLab itself was missing from sessions in it)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Hub, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

ANSWER = Path("/home/alice/terminal-check.txt")


def test_the_terminal_runs_the_sessions_python_and_jupyter(
    hub: Hub, clean: None, browser: Any
) -> None:
    subprocess.run(["rm", "-f", str(ANSWER)], check=True)
    # The browser logs in first: with a running server, the login goes on to JupyterLab.
    page = log_in(browser, hub, "alice", "alice-demo")
    alice = hub.login("alice")
    options = {"profile": "gpu-1", "environment": "torch"}
    response = hub.api(alice, "POST", "/users/alice/server", json={"user_options": options})
    assert response.status_code in (201, 202), response.text
    hub.wait_ready(alice, "alice")

    page.goto(f"{hub.url}/user/alice/lab?reset")  # the launcher, not a layout of an earlier run
    page.click(".jp-LauncherCard[title='Start a new terminal session']", timeout=90_000)
    page.wait_for_selector(".jp-Terminal .xterm-helper-textarea", state="attached", timeout=90_000)
    page.locator(".jp-Terminal .xterm-helper-textarea").focus()
    # What a user types first; the answers go to a file the test can read.
    page.keyboard.type(
        'echo "$(command -v python) $(command -v pip) $(command -v jupyter) '
        "$(python -c 'import torch; print(torch.__version__)')\" > ~/terminal-check.txt\n"
    )
    wait_for(lambda: ANSWER.exists() and ANSWER.read_text().strip(), 60, "the terminal's answer")
    python, pip, jupyter, torch = ANSWER.read_text().split()
    assert python == "/opt/gpuportal/envs/torch/bin/python"
    assert pip == "/opt/gpuportal/envs/torch/bin/pip"
    assert jupyter.startswith("/opt/gpuportal/")
    assert torch.startswith("2.")
    page.context.close()
    hub.stop_server(alice, "alice")
