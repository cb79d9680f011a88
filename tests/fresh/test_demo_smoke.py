"""What a newcomer does right after `make demo` on a machine made from nothing (tests/fresh.sh
runs it there, against the demo `make demo` started, with the demo's users and nothing else):
sign in through single sign-on with a password and a TOTP code, start a 1-GPU session and see
JupyterLab's file browser list the home, run a 2-node job to its end, and Stop. Each step's
time is printed.

The user is dave: the lanes of this machine's own tests, which run meanwhile, look for alice's
and bob's processes by user, and a fresh machine's processes share this machine's process
table (not its Slurm, directory or network)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.smoke import (
    api_session,
    chromium_page,
    start_one_gpu_session,
    timed,
    two_nodes_then_stop,
)
from tests.sso import sign_in_in_browser

HUB = "https://127.0.0.1:8000"  # the README's URL
USER = "dave"
step = timed("smoke")  # tests/fresh.sh prints these lines


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def test_sign_in_a_session_a_two_node_job_and_stop(page: Any) -> None:
    with step("single sign-on: the hub's button, the password, the TOTP code"):
        sign_in_in_browser(page, HUB, USER)
        page.wait_for_url(f"{HUB}/hub/**")
    # A fresh demo: dave has no server yet, so the hub asks what to start.
    assert "/hub/spawn" in page.url or "/hub/home" in page.url, page.url

    with step("Start with 1 GPU to JupyterLab's file browser"):
        start_one_gpu_session(page, HUB, USER)
    two_nodes_then_stop(api_session(page, HUB, USER), HUB, USER, ["gpu01", "gpu02"], step)
