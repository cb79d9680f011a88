"""Issue 34, item 2: in the default session the terminal's python lacks PyTorch, which the
notebooks' PyTorch kernel has: the terminal says so at once, and how to use it there. In
Chromium, as erin (second lane)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.hubproc import SECOND_LANE_USERS
from tests.integration.conftest import Hub, forget_lab_layout, wait_for
from tests.integration.test_live_profiles import log_in

pytestmark = pytest.mark.integration

ANSWER = Path("/home/erin/torch-check.txt")


def test_the_terminal_says_where_pytorch_is_and_that_works(
    second_lane_hub: Hub, second_lane_clean: None, browser: Any
) -> None:
    hub = second_lane_hub
    subprocess.run(["rm", "-f", str(ANSWER)], check=True)
    page = log_in(browser, hub, "erin", SECOND_LANE_USERS["erin"])
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.click("#spawn_form button[type=submit]")  # the default environment
    page.wait_for_url("**/user/erin/lab**", timeout=120_000)
    page.goto(f"{hub.url}/user/erin/lab?reset")
    # xterm draws on a canvas; in screen-reader mode it also keeps its rows as text to read.
    xsrf = next(c["value"] for c in page.context.cookies() if c["name"] == "_xsrf")
    settings = f"{hub.url}/user/erin/lab/api/settings/@jupyterlab/terminal-extension:plugin"
    saved = page.request.put(
        settings,
        data=json.dumps({"raw": json.dumps({"screenReaderMode": True})}),
        headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"},
    )
    assert saved.ok, saved.text()
    page.reload()
    page.click(".jp-LauncherCard[title='Start a new terminal session']", timeout=90_000)
    terminal = page.locator(".jp-Terminal .xterm-accessibility-tree")
    expected = "to use it here: source /opt/gpuportal/envs/torch/bin/activate"
    terminal.locator(f"text={expected}").wait_for(timeout=60_000)
    assert "python here: /opt/gpuportal/venv/bin/python" in terminal.inner_text()

    # Doing what it says works.
    page.locator(".jp-Terminal .xterm-helper-textarea").focus()
    page.keyboard.type(
        "source /opt/gpuportal/envs/torch/bin/activate && "
        "python -c 'import torch; print(torch.__version__)' > ~/torch-check.txt\n"
    )
    wait_for(lambda: ANSWER.exists() and ANSWER.read_text().strip(), 60, "the terminal's answer")
    assert ANSWER.read_text().startswith("2.")
    page.context.close()
    forget_lab_layout("erin")  # the screen-reader setting with it
