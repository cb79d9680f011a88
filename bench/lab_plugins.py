"""What each JupyterLab plugin costs a session's page (issue 59): the time its `activate` holds
the browser's main thread, and until what it returned has settled, in the page of a running
server loaded again with the browser's cache kept (JupyterLab alone, no start in it).

JupyterLab has no per-plugin timing of its own below 5 s (its JupyterPluginRegistry warns of a
plugin slower than that). Before the page's scripts run, this bench's script (INIT) takes the
bundler's chunk list (`self.rspackChunk_jupyterlab_application_top`): every module factory a
chunk brings is wrapped so that, once the module that defines JupyterPluginRegistry has run, its
`registerPlugin` wraps each plugin's `activate` with `performance.now()` around it. Nothing of
JupyterLab is changed on disk, and the page is JupyterLab's as a user gets it.

    /opt/gpuportal/venv/bin/python -m bench.lab_plugins [--loads 5] [--top 25]
    /opt/gpuportal/venv/bin/python -m bench.lab_plugins --url http://127.0.0.1:8890/lab?token=T

Without --url it starts the bench's hub (bench/click_to_lab.py's, port 8600), starts alice's
1-GPU session on the local cluster, measures, and stops it (its Slurm job cancelled).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The bundler's runtime (in main.js) sets the list's `push` to its own loader: the setter keeps
# the loader and hands it the chunks with their factories wrapped.
INIT = r"""
(() => {
  const NAME = "rspackChunk_jupyterlab_application_top";
  const timings = (window.__gpPlugins = []);
  window.__gpNavigation = performance.timeOrigin;
  const patchRegistry = (exports) => {
    const Registry = exports && exports.JupyterPluginRegistry;
    if (!Registry || Registry.prototype.__gpTimed) { return; }
    Registry.prototype.__gpTimed = true;
    const register = Registry.prototype.registerPlugin;
    Registry.prototype.registerPlugin = function (plugin) {
      const activate = plugin.activate;
      plugin.activate = function (...args) {
        const entry = {id: plugin.id, start: performance.now(), sync: 0, settled: null};
        timings.push(entry);
        let out;
        try { out = activate.apply(this, args); }
        finally { entry.sync = performance.now() - entry.start; }
        if (out && typeof out.then === "function") {
          out.then(() => { entry.settled = performance.now() - entry.start; }, () => {});
        } else { entry.settled = entry.sync; }
        return out;
      };
      return register.call(this, plugin);
    };
  };
  const wrap = (chunk) => {
    const modules = chunk && chunk[1];
    if (modules) {
      for (const key of Object.keys(modules)) {
        const factory = modules[key];
        modules[key] = function (module, exports, require) {
          const result = factory.call(this, module, exports, require);
          patchRegistry(module.exports);
          return result;
        };
      }
    }
    return chunk;
  };
  const list = (self[NAME] = self[NAME] || []);
  let loader = Array.prototype.push.bind(list);
  Object.defineProperty(list, "push", {
    configurable: true,
    // The loader as it is now: the runtime keeps the list's own push as its parent (bound
    // when it installs itself), which must not call the runtime again.
    get() { const now = loader; return (...chunks) => now(...chunks.map(wrap)); },
    set(value) { loader = value; },
  });
})();
"""


@dataclass(frozen=True)
class Activation:
    id: str
    start: float  # ms after the page's navigation began
    sync: float  # ms its activate held the main thread
    settled: float | None  # ms until what it returned settled; None: not by the page's end


@dataclass(frozen=True)
class Load:
    """One load of the lab: ms after navigation, and Chromium's main-thread totals (s)."""

    activations: list[Activation]
    shell: float
    files: float
    calls: list[tuple[str, float, float]]  # the server's API: path, began, ended (ms)
    main_thread: dict[str, float]  # Chromium's Performance metrics, seconds


# The requests the lab's page makes to the server's API (not its files), as the Resource
# Timing API has them.
CALLS = r"""performance.getEntriesByType("resource")
  .filter(e => /\/(api|lab\/api)\//.test(new URL(e.name).pathname))
  .map(e => [new URL(e.name).pathname.replace(/^.*?\/(lab\/api|api)\//, "$1/"),
             e.startTime, e.responseEnd])"""
MAIN_THREAD = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


def measure(page: Any, url: str) -> Load:
    """One load of the lab: each plugin's activation, when (ms after navigation) the shell was
    drawn and the file browser listed its folder, the API calls, the main thread's work."""
    from bench.click_to_lab import wait_for_lab

    devtools = page.context.new_cdp_session(page)
    page.goto(url, wait_until="commit")
    devtools.send("Performance.enable")
    # The page's own marks (click_to_lab.DRAWN), in ms after navigation.
    drawn = wait_for_lab(page)
    origin = page.evaluate("performance.timeOrigin") / 1000
    shell, files = ((mark - origin) * 1000 for mark in drawn)
    metrics = {m["name"]: m["value"] for m in devtools.send("Performance.getMetrics")["metrics"]}
    devtools.detach()
    time.sleep(1.0)  # the plugins that activate after the listing (deferred ones) too
    raw = page.evaluate("window.__gpPlugins || []")
    calls = [(path, began, ended) for path, began, ended in page.evaluate(CALLS)]
    return Load(
        [Activation(**entry) for entry in raw],
        shell,
        files,
        [c for c in calls if c[1] <= files],
        {name: metrics.get(name, 0.0) for name in MAIN_THREAD},
    )


# The main thread's work in one load, by Chromium's trace events: what is not plugins.
TRACE_CATEGORIES = ["devtools.timeline", "v8", "disabled-by-default-devtools.timeline"]
TRACED = (
    ("EvaluateScript", "scripts evaluated (bundles run, modules defined)"),
    ("v8.compile", "scripts compiled"),
    ("v8.produceCache", "V8's code cache made"),
    ("FunctionCall", "callbacks (promises, timers, events)"),
    ("V8.GCScavenger", "garbage collected (minor)"),
    ("MajorGC", "garbage collected (major)"),
    ("UpdateLayoutTree", "styles recalculated"),
    ("Layout", "layout"),
    ("Paint", "paint"),
)


def traced_load(browser: Any, page: Any, url: str) -> None:
    """One more load under Chromium's tracing: the main thread's busy time by kind, and its
    longest tasks (ms after the first)."""
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    page.goto(url, wait_until="commit")
    page.wait_for_selector(".jp-DirListing-content .jp-DirListing-item", timeout=60_000)
    raw = browser.stop_tracing()
    if os.environ.get("BENCH_TRACE_FILE"):  # for chrome://tracing or Perfetto
        Path(os.environ["BENCH_TRACE_FILE"]).write_bytes(raw)
    events = json.loads(raw)["traceEvents"]
    threads = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"
    }
    spans = [e for e in events if (e["pid"], e["tid"]) in threads and e.get("ph") == "X"]
    tasks = [e for e in spans if e["name"] == "RunTask"]
    if not tasks:
        print("the trace has no task of the page's main thread")
        return
    first = min(e["ts"] for e in tasks)
    ended = max(e["ts"] + e.get("dur", 0) for e in tasks)
    busy = sum(e.get("dur", 0) for e in tasks) / 1000
    print(f"one load traced: its main thread busy {busy:.0f} ms of {(ended - first) / 1000:.0f} ms")
    for name, words in TRACED:
        total = sum(e.get("dur", 0) for e in spans if e["name"] == name) / 1000
        print(f"  {total:7.0f} ms  {words} ({name})")
    longest = sorted(tasks, key=lambda e: -e.get("dur", 0))[:5]
    said = ", ".join(f"{e['dur'] / 1000:.0f} ms at {(e['ts'] - first) / 1000:.0f}" for e in longest)
    print(f"  its longest tasks: {said}")


def report(loads: list[Load], top: int) -> None:
    listed = statistics.median(load.files for load in loads)
    by_id: dict[str, list[Activation]] = defaultdict(list)
    for load in loads:
        for activation in load.activations:
            by_id[activation.id].append(activation)
    medians = {
        plugin: (
            statistics.median(a.sync for a in runs),
            statistics.median(a.start for a in runs),
            statistics.median(a.settled for a in runs if a.settled is not None)
            if any(a.settled is not None for a in runs) else None,
        )
        for plugin, runs in by_id.items()
    }  # fmt: skip
    before = [m for m in medians.values() if m[1] <= listed]
    print(
        f"{len(loads)} loads of the lab, its server running, the browser's cache kept: "
        f"shell drawn {statistics.median(load.shell for load in loads) / 1000:.2f} s, files "
        f"listed {listed / 1000:.2f} s after navigation (medians)"
    )
    work = ", ".join(
        f"{name.removesuffix('Duration').lower()} "
        f"{statistics.median(load.main_thread[name] for load in loads):.2f} s"
        for name in MAIN_THREAD
    )
    print(f"the page's main thread until the listing (Chromium): {work}")
    first = min(medians.values(), key=lambda m: m[1])[1] if medians else 0.0
    last = max(m[1] for m in before) if before else 0.0
    print(
        f"{len(medians)} plugins activated, {len(before)} before the listing, from "
        f"{first:.0f} to {last:.0f} ms; their activate held the main thread "
        f"{sum(m[0] for m in before):.0f} ms in all"
    )
    print("the API calls before the listing (ms after navigation, last load):")
    for path, began, ended in sorted(loads[-1].calls, key=lambda c: c[1]):
        print(f"  {began:6.0f} {ended:6.0f} {ended - began:5.0f}  {path[:70]}")
    print(f"the {top} plugins longest on the main thread (ms, medians):")
    print(f"  {'sync':>6} {'settled':>8} {'at':>6}  plugin")
    for plugin, (sync, start, settled) in sorted(medians.items(), key=lambda kv: -kv[1][0])[:top]:
        shown = f"{settled:8.0f}" if settled is not None else "       -"
        print(f"  {sync:6.1f} {shown} {start:6.0f}  {plugin}")
    # Lumino draws the shell once every plugin started at first has settled: the last of them
    # say what the shell waits for.
    ends = {p: m[1] + m[2] for p, m in medians.items() if m[2] is not None}
    print(f"the {min(top, 8)} plugins that settled last (ms after navigation, medians):")
    for plugin, end in sorted(ends.items(), key=lambda kv: -kv[1])[: min(top, 8)]:
        print(f"  {end:6.0f}  {plugin}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--url", help="a running JupyterLab's /lab URL (with its token)")
    parser.add_argument("--trace", action="store_true", help="then one load under Chromium's trace")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from bench.click_to_lab import DRAWN, PASSWORD, USER, bench_hub, stop_server, wait_for_lab
    from tests.integration.conftest import CHROMIUM, CHROMIUM_ARGS
    from tests.integration.test_live_profiles import log_in

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if args.url:
                page = browser.new_page()
                page.add_init_script(INIT)
                page.add_init_script(DRAWN)
                page.goto(args.url)  # a first load fills the cache (and takes the token)
                wait_for_lab(page)
                loads = [measure(page, args.url.split("?")[0]) for _ in range(args.loads)]
                report(loads, args.top)
                if args.trace:
                    traced_load(browser, page, args.url.split("?")[0])
            else:
                subprocess.run(["scancel", "-u", USER], check=False)
                with bench_hub() as hub:
                    page = log_in(browser, hub, USER, PASSWORD)
                    page.add_init_script(INIT)
                    page.add_init_script(DRAWN)
                    page.goto(f"{hub.url}/hub/spawn")
                    page.check("input[name=profile][value=gpu-1]")
                    page.click("#spawn_form button[type=submit]")
                    page.wait_for_url(f"**/user/{USER}/lab**", timeout=120_000)
                    wait_for_lab(page)
                    time.sleep(6)  # past the deferred Dask extension's load (5 s)
                    url = f"{hub.url}/user/{USER}/lab"
                    loads = [measure(page, url) for _ in range(args.loads)]
                    report(loads, args.top)
                    if args.trace:
                        traced_load(browser, page, url)
                    stop_server(hub)
        finally:
            browser.close()
            if not args.url:
                subprocess.run(["scancel", "-u", USER], check=False)


if __name__ == "__main__":
    main()
