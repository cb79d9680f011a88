"""The steps of a user's smoke on a hub, shared by the fresh machines' (tests/fresh) and the
Ansible role's (tests/site): a browser page, a 1-GPU session to JupyterLab's file browser, a
REST token made with the browser's hub session, a 2-node job to its end, and Stop until the
server and its job are gone; each step timed and printed."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import requests

from tests.hubproc import wait_for
from tests.integration.conftest import CHROMIUM, CHROMIUM_ARGS, user_jobs

Step = Callable[[str], AbstractContextManager[None]]


def timed(tag: str) -> Step:
    """step(name): a block whose time is printed as `[TAG] name: 12.3 s`."""

    @contextmanager
    def step(name: str) -> Iterator[None]:
        started = time.monotonic()
        yield
        print(f"[{tag}] {name}: {time.monotonic() - started:.1f} s", flush=True)

    return step


@contextmanager
def chromium_page() -> Iterator[Any]:
    assert shutil.which(CHROMIUM), "chromium is installed for the smoke"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def start_one_gpu_session(page: Any, hub: str, user: str) -> None:
    """The spawn page's 1-GPU profile, then JupyterLab until its file browser lists the home."""
    page.goto(f"{hub}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    page.click("#spawn_form button[type=submit]")
    page.wait_for_url(f"**/user/{user}/lab**", timeout=180_000)
    page.wait_for_selector(".jp-LabShell")
    page.locator(
        ".jp-DirListing-content .jp-DirListing-item", has_text="templates"
    ).first.wait_for()


ENDED = {"COMPLETED", "FAILED", "CANCELLED"}


def api_session(page: Any, hub: str, user: str, verify: str | bool = True) -> requests.Session:
    """A session with a REST token made with the hub session the browser has (as the token
    page does), with the hub's _xsrf cookie, not the one JupyterLab set for /user/NAME/."""
    xsrf = next(
        c["value"]
        for c in page.context.cookies()
        if c["name"] == "_xsrf" and c["path"].startswith("/hub")
    )
    made = page.request.post(
        f"{hub}/hub/api/users/{user}/tokens",
        headers={"X-XSRFToken": xsrf},
        data={"note": "smoke", "expires_in": 3600},
    )
    assert made.status == 201, made.text()
    api = requests.Session()
    api.verify = verify
    api.headers["Authorization"] = f"token {made.json()['token']}"
    return api


def two_node_job(api: requests.Session, hub: str, name: str) -> dict[str, Any]:
    """`printenv SLURMD_NODENAME` on 2 nodes with a GPU each, through the portal's REST API;
    the job's detail once it ended."""
    jobs = f"{hub}/services/portal/api/jobs"
    body = {
        "name": name,
        "nodes": 2,
        "gpus_per_node": 1,
        "runtime": "00:05:00",
        "launcher": "srun",
        "command": "printenv SLURMD_NODENAME",
    }
    submitted = api.post(jobs, json=body, timeout=60)
    assert submitted.status_code == 201, submitted.text
    job = submitted.json()["id"]

    def ended() -> dict[str, Any] | None:
        detail: dict[str, Any] = api.get(f"{jobs}/{job}", timeout=60).json()
        return detail if detail["state"] in ENDED else None

    detail = wait_for(ended, 300, "the 2-node job", step=2)
    assert isinstance(detail, dict)
    return detail


def stop_until_gone(api: requests.Session, hub: str, user: str) -> None:
    """Stop the user's server; wait until the hub lists none and Slurm runs no job of theirs."""
    stopped = api.delete(f"{hub}/hub/api/users/{user}/server", timeout=60)
    assert stopped.status_code in (202, 204), stopped.text

    def gone() -> bool:
        servers = api.get(f"{hub}/hub/api/users/{user}", timeout=60).json()["servers"]
        states = user_jobs(user, "%T")
        return not servers and not set(states) & {"PENDING", "RUNNING", "COMPLETING"}

    wait_for(gone, 120, f"{user}'s server and its job to end", step=1)


def two_nodes_then_stop(
    api: requests.Session, hub: str, user: str, nodes: list[str], step: Step
) -> None:
    """The 2-node job, which must end COMPLETED having run on NODES, then Stop."""
    with step("a 2-node job, submitted to its end"):
        detail = two_node_job(api, hub, f"smoke-{user}")
    assert detail["state"] == "COMPLETED", detail
    assert sorted(detail["output_tail"]) == nodes, detail["output_tail"]
    with step("Stop ends the session's job"):
        stop_until_gone(api, hub, user)
