"""What a newcomer does right after `make demo` on a machine made from nothing (tests/fresh.sh
runs it there, against the demo `make demo` started, with the demo's users and nothing else):
sign in through single sign-on with a password and a TOTP code, start a 1-GPU session and see
JupyterLab's file browser list the home, run a 2-node job to its end, and Stop. Each step's
time is printed.

The user is dave: the lanes of this machine's own tests, which run meanwhile, look for alice's
and bob's processes by user, and a fresh machine's processes share this machine's process
table (not its Slurm, directory or network)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import requests

from tests.hubproc import wait_for
from tests.integration.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.sso import sign_in_in_browser

HUB = "https://127.0.0.1:8000"  # the README's URL
USER = "dave"
JOBS = f"{HUB}/services/portal/api/jobs"
TIMES: dict[str, float] = {}


@contextmanager
def step(name: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    TIMES[name] = time.monotonic() - started
    print(f"[smoke] {name}: {TIMES[name]:.1f} s", flush=True)


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    assert shutil.which(CHROMIUM), "tests/fresh.sh installs chromium for the smoke"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def test_sign_in_a_session_a_two_node_job_and_stop(page: Any) -> None:
    with step("single sign-on: the hub's button, the password, the TOTP code"):
        sign_in_in_browser(page, HUB, USER)
        page.wait_for_url(f"{HUB}/hub/**")
    # A fresh demo: dave has no server yet, so the hub asks what to start.
    assert "/hub/spawn" in page.url or "/hub/home" in page.url, page.url

    with step("Start with 1 GPU to JupyterLab's file browser"):
        page.goto(f"{HUB}/hub/spawn")
        page.check("input[name=profile][value=gpu-1]")
        page.click("#spawn_form button[type=submit]")
        page.wait_for_url(f"**/user/{USER}/lab**", timeout=180_000)
        page.wait_for_selector(".jp-LabShell")
        listing = page.locator(".jp-DirListing-content .jp-DirListing-item", has_text="templates")
        listing.first.wait_for()

    # A token for the REST API, made with the hub session the browser has (as the token page does).
    # The hub's _xsrf cookie, not the one JupyterLab set for /user/dave/.
    cookies = page.context.cookies()
    xsrf = next(
        c["value"] for c in cookies if c["name"] == "_xsrf" and c["path"].startswith("/hub")
    )
    made = page.request.post(
        f"{HUB}/hub/api/users/{USER}/tokens",
        headers={"X-XSRFToken": xsrf},
        data={"note": "fresh-machine smoke", "expires_in": 3600},
    )
    assert made.status == 201, made.text()
    api = requests.Session()
    api.headers["Authorization"] = f"token {made.json()['token']}"

    with step("a 2-node job, submitted to its end"):
        body = {
            "name": "fresh-two-nodes",
            "nodes": 2,
            "gpus_per_node": 1,
            "runtime": "00:05:00",
            "launcher": "srun",
            "command": "printenv SLURMD_NODENAME",
        }
        submitted = api.post(JOBS, json=body, timeout=60)
        assert submitted.status_code == 201, submitted.text
        job = submitted.json()["id"]

        def ended() -> dict[str, Any] | None:
            detail: dict[str, Any] = api.get(f"{JOBS}/{job}", timeout=60).json()
            return detail if detail["state"] in {"COMPLETED", "FAILED", "CANCELLED"} else None

        detail = wait_for(ended, 300, "the 2-node job", step=2)
    assert isinstance(detail, dict) and detail["state"] == "COMPLETED", detail
    assert sorted(detail["output_tail"]) == ["gpu01", "gpu02"], detail["output_tail"]

    with step("Stop ends the session's job"):
        stopped = api.delete(f"{HUB}/hub/api/users/{USER}/server", timeout=60)
        assert stopped.status_code in (202, 204), stopped.text

        def gone() -> bool:
            server = api.get(f"{HUB}/hub/api/users/{USER}", timeout=60).json()["servers"]
            states = subprocess.run(
                ["squeue", "-h", "-u", USER, "-o", "%T"], capture_output=True, text=True
            ).stdout.split()
            return not server and not set(states) & {"PENDING", "RUNNING", "COMPLETING"}

        wait_for(gone, 120, f"{USER}'s server and its job to end", step=1)
