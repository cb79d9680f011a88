"""One user alone, in Chromium: from the click on Start to JupyterLab's file browser on screen
(issue 22), and where the time goes.

Starts a hub of the bench's own (deploy/jupyterhub_config.py, port 8600) on the local cluster,
logs alice in through the form, and N times: opens the spawn page, picks the 1-GPU profile,
clicks Start and waits until the file browser lists the home folder; then stops the server.
The first round runs in a fresh browser profile (nothing cached), the others in the same one
(a returning user). Each round is split at the marks the browser and the hub's log give:

    click -> spawn answered     the form's POST, to the hub's answer (the waiting page)
    -> server ready             sbatch, Slurm placing the job, JupyterLab's start (hub log)
    -> lab page                 the waiting page's redirect, to the lab's HTML received
    -> shell drawn              JupyterLab's JavaScript and its extensions loaded and run
    -> files listed             the contents API, the file browser's first listing

and the lab's assets are counted: requests, bytes on the wire against bytes served, how many
came compressed and how many from the browser's cache.

    /opt/gpuportal/venv/bin/python -m bench.click_to_lab [--rounds 4]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.hubproc import Hub, wait_for
from tests.integration.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.integration.test_live_profiles import log_in

PORT = 8600
USER, PASSWORD = "alice", "alice-demo"
STARTED = re.compile(rf"^\[I (\S+ \S+) \w+ .*User {USER} took [\d.]+ seconds to start")
MARKS = ("spawn answered", "server ready", "lab page", "shell drawn", "files listed")


@dataclass
class Assets:
    """The lab's responses in one round (from /user/<name>/, after its HTML)."""

    requests: int = 0
    wire: int = 0  # bytes as transferred (compressed where the server compressed)
    served: int = 0  # bytes of the bodies as the page uses them
    compressed: int = 0  # responses with a Content-Encoding
    cached: int = 0  # answered from the browser's cache
    largest: list[tuple[int, str]] = field(default_factory=list)

    def add(self, response: Any) -> None:
        """Count one response (after the round: Playwright's calls are not made inside its
        own event handlers)."""
        request = response.request
        if f"/user/{USER}/" not in request.url or request.resource_type == "document":
            return
        self.requests += 1
        if response.from_service_worker or _from_cache(response):
            self.cached += 1
            return
        sizes = request.sizes()
        self.wire += sizes["responseBodySize"]
        body = len(response.body()) if response.ok else 0
        self.served += body
        if response.headers.get("content-encoding"):
            self.compressed += 1
        self.largest.append((body, request.url.split(f"/user/{USER}/", 1)[1].split("?")[0]))


def _from_cache(response: Any) -> bool:
    # Playwright has no flag for a memory/disk cache hit; its timing shows none of the
    # network phases then (every field -1 but the start).
    timing = response.request.timing
    return timing.get("requestStart", -1) == -1 and timing.get("responseStart", -1) == -1


@contextmanager
def bench_hub() -> Iterator[Hub]:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as state:
        hub = Hub(Path(state), PORT)
        hub.start()
        try:
            yield hub
        finally:
            hub.stop()


def hub_ready_time(hub: Hub, since: float) -> float | None:
    """When the hub logged the user's server started ("User alice took 2.0 seconds to start"),
    the first such line after `since` (time.time() clock)."""
    for line in hub.log_path.read_text(errors="replace").splitlines():
        found = STARTED.match(line)
        if found is None:
            continue
        when = datetime.fromisoformat(found.group(1)).timestamp()
        if when >= since:
            return when
    return None


def one_round(page: Any, hub: Hub) -> tuple[list[float], Assets]:
    assets = Assets()
    responses: list[Any] = []

    def keep(response: Any) -> None:  # a function of its own: Playwright marks its handlers
        responses.append(response)

    page.on("response", keep)
    page.goto(f"{hub.url}/hub/spawn")
    page.check("input[name=profile][value=gpu-1]")
    clicked_wall, clicked = time.time(), time.monotonic()
    with page.expect_response(lambda r: r.request.method == "POST" and "/hub/spawn" in r.url):
        page.click("#spawn_form button[type=submit]")
    answered = time.monotonic()
    page.wait_for_url(f"**/user/{USER}/lab**", wait_until="commit", timeout=120_000)
    lab_page = time.monotonic()
    page.wait_for_selector(".jp-LabShell", timeout=60_000)
    shell = time.monotonic()
    page.wait_for_selector(".jp-DirListing-content .jp-DirListing-item", timeout=60_000)
    files = time.monotonic()
    page.remove_listener("response", keep)
    for response in responses:
        with contextlib.suppress(Exception):  # a response the page dropped (a redirect)
            assets.add(response)
    ready_wall = hub_ready_time(hub, clicked_wall)
    ready = clicked + (ready_wall - clicked_wall) if ready_wall else lab_page
    marks = [clicked, answered, max(answered, min(ready, lab_page)), lab_page, shell, files]
    return [later - earlier for earlier, later in itertools.pairwise(marks)], assets


def stop_server(hub: Hub) -> None:
    session = hub.login(USER)
    hub.stop_server(session, USER)
    wait_for(lambda: not _jobs(), 60, "alice's job to end", step=0.2)


def _jobs() -> list[str]:
    return subprocess.run(
        ["squeue", "-h", "-u", USER, "-o", "%i"], capture_output=True, text=True, check=True
    ).stdout.split()


def report(title: str, splits: list[list[float]], assets: list[Assets]) -> None:
    totals = [sum(split) for split in splits]
    print(f"{title}: {len(splits)} rounds, click to files listed median {_s(totals)}")
    for index, mark in enumerate(MARKS):
        print(f"  -> {mark:<16} {_s([split[index] for split in splits])}")
    a = assets[-1]
    print(
        f"  assets (last round): {a.requests} requests, {a.cached} from the browser's cache, "
        f"{a.compressed} compressed; {a.wire / 1e6:.2f} MB on the wire for "
        f"{a.served / 1e6:.2f} MB served"
    )
    for size, path in sorted(a.largest, reverse=True)[:5]:
        print(f"     {size / 1e6:6.2f} MB  {path}")


def _s(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    subprocess.run(["scancel", "-u", USER], check=False)
    wait_for(lambda: not _jobs(), 60, "alice's jobs to end", step=0.2)
    with bench_hub() as hub, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = log_in(browser, hub, USER, PASSWORD)  # a fresh browser profile
        cold: tuple[list[float], Assets] | None = None
        warm: list[tuple[list[float], Assets]] = []
        try:
            for index in range(args.rounds):
                split, assets = one_round(page, hub)
                if index == 0:
                    cold = (split, assets)
                else:
                    warm.append((split, assets))
                print(f"round {index + 1}: " + ", ".join(f"{v:.2f}" for v in split), flush=True)
                stop_server(hub)
        finally:
            browser.close()
            subprocess.run(["scancel", "-u", USER], check=False)
    if cold is not None:
        report("first visit (nothing cached)", [cold[0]], [cold[1]])
    if warm:
        report("returning (browser cache kept)", [s for s, _ in warm], [a for _, a in warm])


if __name__ == "__main__":
    main()
