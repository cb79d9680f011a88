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

(the last two by the page's own clock: the frame after each is in the document, DRAWN).

With --reloads N, the last round's lab is then loaded N times more, its server running and the
browser's cache kept: what JupyterLab's page alone takes on this machine, with no start in it (the
floor under "lab page" + "shell drawn" + "files listed").

The server's start is split at its logs' marks (SERVER_MARKS: the session's own, written by
gpuportal_session.singleuser, Jupyter's "is running at", the hub's "took N seconds"; where the
imports' time goes per package: bench/session_imports.py), and the lab's requests are counted
as Chromium's DevTools protocol tells them (bench/browser_network.py): how many, how many from
the browser's cache, the bytes on the wire, and the slowest API calls.

With --stock, the same rounds then run against stock JupyterHub + batchspawner + wrapspawner
(bench/stock_jupyterhub_config.py, JupyterHub's own pages, no internal TLS) on the same cluster
with the same browser, and the returning rounds' medians are compared: ours / stock.

    /opt/gpuportal/venv/bin/python -m bench.click_to_lab [--rounds 4] [--requests] [--reloads 4]
        [--stock]
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench.browser_network import Fetch, NetworkLog
from tests.hubproc import Hub, wait_for
from tests.integration.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.integration.test_live_profiles import log_in

PORT = 8600
USER, PASSWORD = "alice", "alice-demo"
STARTED = re.compile(rf"^\[I (\S+ \S+) \w+ .*User {USER} took [\d.]+ seconds to start")
# The session's own marks (gpuportal_session.singleuser.log_mark), then Jupyter's.
MARK_PYTHON = re.compile(r"^\[I (\S+ \S+) gpuportal\] start: Python .* up ([\d.]+) s after")
SESSION_MARKS = (
    re.compile(r"^\[I (\S+ \S+) gpuportal\] start: port \d+ told"),
    re.compile(r"^\[I (\S+ \S+) gpuportal\] start: home, TensorBoard and Dask prepared"),
    re.compile(r"^\[I (\S+ \S+) gpuportal\] start: jupyterhub-singleuser imported"),
    re.compile(r"^\[I (\S+ \S+) ServerApp\] Jupyter Server \S+ is running at"),
)
MARKS = ("spawn answered", "server ready", "lab page", "shell drawn", "files listed")
SERVER_MARKS = (
    "job's process began",  # sbatch, Slurm's placing and launch, the job script
    "Python up",  # the interpreter and gpuportal_session imported
    "port told",  # to the hub
    "home prepared",  # templates, TensorBoard, Dask's TLS
    "singleuser imported",  # jupyterhub.singleuser, Jupyter Server with it
    "server listening",  # the extensions imported and loaded, "is running at"
    "hub saw it",  # the hub's "took N seconds"
)


@dataclass
class Assets:
    """The lab's requests in one round, after its HTML (bench/browser_network.py)."""

    requests: int = 0
    wire: int = 0  # bytes as transferred (compressed where the server compressed)
    cached: Counter[str] = field(default_factory=Counter)  # disk, memory, prefetch
    largest: list[tuple[int, str]] = field(default_factory=list)
    slowest: list[tuple[float, str]] = field(default_factory=list)  # API calls, not files

    @classmethod
    def of(cls, fetches: list[Fetch]) -> Assets:
        assets = cls()
        for fetch in fetches:
            if fetch.kind == "Document" or fetch.url.startswith("data:"):
                continue
            assets.requests += 1
            path = urlparse(fetch.url).path.split(f"/user/{USER}/", 1)[-1]
            if fetch.cache:
                assets.cached[fetch.cache] += 1
                continue
            assets.wire += fetch.wire
            assets.largest.append((fetch.wire, path))
            if fetch.kind in ("XHR", "Fetch"):
                assets.slowest.append((fetch.seconds, path))
        return assets


@dataclass(frozen=True)
class Arm:
    """A hub to click Start on: ours, or stock JupyterHub + batchspawner (wrapspawner's
    profiles: a <select>, JupyterHub's own pages) on the same cluster, for the same browser."""

    name: str
    port: int
    config: Path | None = None  # None: deploy/jupyterhub_config.py
    env: tuple[tuple[str, str], ...] = ()

    @property
    def stock(self) -> bool:
        return self.config is not None

    def pick(self, page: Any) -> None:
        """The 1-GPU profile on the spawn page."""
        if self.stock:
            page.select_option("select[name=profile]", "gpu-1")
        else:
            page.check("input[name=profile][value=gpu-1]")


OURS = Arm("ours", PORT)
# No internal TLS: batchspawner has none for jobs on other hosts (bench/spawn_latency.py).
STOCK = Arm(
    "stock JupyterHub + batchspawner",
    PORT + 10,
    Path(__file__).parent / "stock_jupyterhub_config.py",
    (("PORTAL_INTERNAL_TLS", "0"),),
)


@contextmanager
def bench_hub(arm: Arm = OURS) -> Iterator[Hub]:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as state:
        if arm.config is None:
            hub = Hub(Path(state), arm.port)
        else:
            hub = Hub(Path(state), arm.port, config=arm.config, env=dict(arm.env))
        hub.start()
        try:
            yield hub
        finally:
            hub.stop()


@dataclass
class Round:
    """One click on Start: the steps' seconds (MARKS), the server's start split
    (SERVER_MARKS), and the lab's requests."""

    steps: list[float]
    server: list[float] | None
    assets: Assets


def one_round(page: Any, hub: Hub, *, show_requests: bool = False, arm: Arm = OURS) -> Round:
    network = NetworkLog()
    network.attach(page)
    page.goto(f"{hub.url}/hub/spawn")
    arm.pick(page)
    clicked = time.time()  # one clock for the marks, the browser's requests and the logs
    with page.expect_response(lambda r: r.request.method == "POST" and "/hub/spawn" in r.url):
        page.click("#spawn_form [type=submit]")
    answered = time.time()
    page.wait_for_url(f"**/user/{USER}/lab**", wait_until="commit", timeout=120_000)
    lab_page = time.time()
    shell, files = wait_for_lab(page)
    network.detach()
    server = server_split(hub, clicked)
    ready = server[1] if server else lab_page
    marks = [clicked, answered, max(answered, min(ready, lab_page)), lab_page, shell, files]
    steps = [later - earlier for earlier, later in itertools.pairwise(marks)]
    server_steps = (
        [later - earlier for earlier, later in itertools.pairwise([clicked, *server[0]])]
        if server
        else None
    )
    if show_requests:
        print_requests(network.between(lab_page, files), lab_page)
    return Round(steps, server_steps, Assets.of(network.between(lab_page, files)))


# When the page draws the shell and the listing, by the page's own clock (epoch seconds, the
# clock time.time() reads): the frame after each is in the document. Playwright's waits notice
# them later, as late as 0.25 s on a busy main thread (it polls, then answers over the DevTools
# connection), so its waits only say when to read these.
DRAWN = r"""
(() => {
  const drawn = (window.__gpDrawn = {});
  const now = () => (performance.timeOrigin + performance.now()) / 1000;
  const frameAfter = (key) => requestAnimationFrame(() => setTimeout(() => {
    drawn[key] = now();
  }, 0));
  const observer = new MutationObserver(() => {
    if (!("shell" in drawn) && document.querySelector(".jp-LabShell")) {
      drawn.shell = null;
      frameAfter("shell");
    }
    if (!("files" in drawn) && document.querySelector(
      ".jp-DirListing-content .jp-DirListing-item")) {
      drawn.files = null;
      frameAfter("files");
      observer.disconnect();  // both seen: the page's later changes cost it nothing more
    }
  });
  observer.observe(document, {childList: true, subtree: true});
})();
"""


def wait_for_lab(page: Any) -> tuple[float, float]:
    """When (time.time()) JupyterLab's shell is drawn, then its file browser lists the home:
    the page's marks (DRAWN, when the page has it as an init script), else when Playwright saw
    them."""
    page.wait_for_selector(".jp-LabShell", timeout=60_000)
    shell = time.time()
    page.wait_for_selector(".jp-DirListing-content .jp-DirListing-item", timeout=60_000)
    files = time.time()
    page.wait_for_function("!window.__gpDrawn || window.__gpDrawn.files", timeout=10_000)
    drawn = page.evaluate("window.__gpDrawn || {}")
    return drawn.get("shell") or shell, drawn.get("files") or files


def reload_lab(page: Any, hub: Hub) -> list[float]:
    """The running server's lab loaded again: seconds to its HTML, the shell, the listing."""
    begun = time.time()
    page.goto(f"{hub.url}/user/{USER}/lab", wait_until="commit")
    html = time.time()
    shell, files = wait_for_lab(page)
    return [html - begun, shell - html, files - shell]


def print_requests(fetches: list[Fetch], since: float) -> None:
    """Each request after the lab's HTML: when it began and how long it took (s), where its
    answer came from, its status, kind and bytes on the wire."""
    for f in sorted(fetches, key=lambda fetch: fetch.began):
        path = urlparse(f.url).path[-72:]
        print(
            f"  {f.began - since:6.2f} {f.seconds:5.2f} {f.cache or 'network':8} {f.status} "
            f"{f.kind:10} {f.wire:8} {path}"
        )


def server_split(hub: Hub, since: float) -> tuple[list[float], float] | None:
    """The server's start (time.time()), from the session's log (gpuportal_session.singleuser's
    marks, Jupyter's "is running at") and the hub's ("took N seconds": the hub has seen it
    answer), in SERVER_MARKS' order; None where a mark is missing."""
    ready = _first(hub.log_path.read_text(errors="replace").splitlines(), STARTED, since)
    logs = sorted(Path(f"~{USER}/.jupyterhub-logs").expanduser().glob("jupyter-*.log"),
                  key=lambda path: path.stat().st_mtime)  # fmt: skip
    if ready is None or not logs:
        return None
    session_log = logs[-1].read_text(errors="replace").splitlines()
    python_up = _first(session_log, MARK_PYTHON, since)
    age = next((float(m.group(2)) for m in map(MARK_PYTHON.match, session_log) if m), None)
    marks = [_first(session_log, pattern, since) for pattern in SESSION_MARKS]
    if python_up is None or age is None or None in marks:
        return None
    return [python_up - age, python_up, *marks, ready], ready  # type: ignore[list-item]


def _first(lines: list[str], pattern: re.Pattern[str], since: float) -> float | None:
    for line in lines:
        found = pattern.match(line)
        if found is None:
            continue
        when = datetime.fromisoformat(found.group(1)).timestamp()
        if when >= since:
            return when
    return None


def stop_server(hub: Hub) -> None:
    session = hub.login(USER)
    hub.stop_server(session, USER)
    wait_for(lambda: not _jobs(), 60, "alice's job to end", step=0.2)


def _jobs() -> list[str]:
    return subprocess.run(
        ["squeue", "-h", "-u", USER, "-o", "%i"], capture_output=True, text=True, check=True
    ).stdout.split()


def report(title: str, rounds: list[Round]) -> None:
    totals = [sum(r.steps) for r in rounds]
    print(f"{title}: {len(rounds)} rounds, click to files listed median {_s(totals)}")
    for index, mark in enumerate(MARKS):
        print(f"  -> {mark:<16} {_s([r.steps[index] for r in rounds])}")
    splits = [r.server for r in rounds if r.server]
    if splits:
        print("  the server's start, from the click (hub's and session's logs):")
        for index, mark in enumerate(SERVER_MARKS):
            print(f"     -> {mark:<20} {_s([split[index] for split in splits])}")
    a = rounds[-1].assets
    cached = ", ".join(f"{n} {where}" for where, n in sorted(a.cached.items())) or "none"
    print(
        f"  the lab's requests (last round): {a.requests}, from the browser's cache: {cached}; "
        f"{a.wire / 1e6:.2f} MB on the wire"
    )
    for size, path in sorted(a.largest, reverse=True)[:3]:
        print(f"     {size / 1e6:6.2f} MB  {path}")
    print("  its slowest API calls:")
    for seconds, path in sorted(a.slowest, reverse=True)[:5]:
        print(f"     {seconds:6.2f} s   {path}")


def _s(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"


def run_arm(browser: Any, arm: Arm, args: argparse.Namespace) -> list[Round]:
    """The rounds of one arm (its first in a fresh browser profile), then its reloads."""
    subprocess.run(["scancel", "-u", USER], check=False)
    wait_for(lambda: not _jobs(), 60, "alice's jobs to end", step=0.2)
    rounds: list[Round] = []
    reloads: list[list[float]] = []
    with bench_hub(arm) as hub:
        page = log_in(browser, hub, USER, PASSWORD)  # a fresh browser profile
        page.add_init_script(DRAWN)
        try:
            for index in range(args.rounds):
                rounds.append(one_round(page, hub, show_requests=args.requests, arm=arm))
                steps = ", ".join(f"{v:.2f}" for v in rounds[-1].steps)
                print(f"{arm.name}, round {index + 1}: {steps}", flush=True)
                if index == args.rounds - 1:
                    time.sleep(6)  # past the deferred Dask extension's load (5 s)
                    for _ in range(args.reloads):
                        reloads.append(reload_lab(page, hub))
                        time.sleep(2)
                stop_server(hub)
        finally:
            page.context.close()
            subprocess.run(["scancel", "-u", USER], check=False)
    if rounds:
        report(f"{arm.name}, first visit (nothing cached)", rounds[:1])
    if rounds[1:]:
        report(f"{arm.name}, returning (browser cache kept)", rounds[1:])
    if reloads:
        totals = [sum(r) for r in reloads]
        print(f"the lab again, its server running: {len(reloads)} loads, median {_s(totals)}")
        for index, mark in enumerate(("lab page", "shell drawn", "files listed")):
            print(f"  -> {mark:<16} {_s([r[index] for r in reloads])}")
    return rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--requests", action="store_true", help="print each round's requests after the lab page"
    )
    parser.add_argument(
        "--reloads", type=int, default=0, help="then load the last round's lab this often again"
    )
    parser.add_argument(
        "--stock", action="store_true", help="then the same with stock JupyterHub + batchspawner"
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ours = run_arm(browser, OURS, args)
            stock = run_arm(browser, STOCK, args) if args.stock else []
        finally:
            browser.close()
    if ours[1:] and stock[1:]:
        mine = statistics.median(sum(r.steps) for r in ours[1:])
        theirs = statistics.median(sum(r.steps) for r in stock[1:])
        print(
            f"returning, click to files listed (medians): ours {mine:.2f} s, stock "
            f"{theirs:.2f} s: ours / stock = {mine / theirs:.2f}"
        )


if __name__ == "__main__":
    main()
