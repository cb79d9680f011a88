"""Timed requests of many users, spread over each minute as people's browsers would send them,
and their percentiles and errors by kind."""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import requests

from bench.cluster_load import percentile


class Timings:
    """Seconds per kind of request, and what went wrong, from many threads."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter[str] = Counter()
        self._lock = threading.Lock()

    def record(self, kind: str, seconds: float, problem: str = "") -> None:
        with self._lock:
            if problem:
                self.errors[f"{kind}: {problem}"] += 1
            else:
                self.seconds[kind].append(seconds)

    def timed(self, kind: str, call: Callable[[], float | None]) -> None:
        """Run `call`, which raises on failure and may return its own measure."""
        begun = time.monotonic()
        try:
            measured = call()
        except Exception as error:  # any failure is a figure here, not a crash of the bench
            self.record(kind, 0.0, str(error) or type(error).__name__)
            return
        self.record(kind, measured if measured is not None else time.monotonic() - begun)

    def print(self, indent: str = "  ") -> None:
        for kind, values in sorted(self.seconds.items()):
            print(
                f"{indent}{kind:<16} n={len(values):<5} p50 {1000 * percentile(values, 50):6.0f} ms"
                f"  p95 {1000 * percentile(values, 95):6.0f} ms"
                f"  p99 {1000 * percentile(values, 99):6.0f} ms"
                f"  max {1000 * max(values):6.0f} ms"
            )
        total = sum(self.errors.values())
        print(f"{indent}errors: {total}")
        for problem, count in self.errors.most_common():
            print(f"{indent}  {count} x {problem}")


def get_page(session: requests.Session, url: str, ok: tuple[int, ...] = (200,)) -> None:
    """One page as a browser asks it (redirects not followed: they are timed on their own)."""
    answer = session.get(url, allow_redirects=False, timeout=60)
    if answer.status_code not in ok:
        raise RuntimeError(f"HTTP {answer.status_code}")


def every_minute(
    tasks: list[Callable[[], None]], seconds: float, workers: int = 32, period: float = 60
) -> list[float]:
    """Each task once a period, the tasks' starts spread evenly over it, for `seconds`.

    Returns how late each one started after its time: above zero, every worker was still
    waiting for earlier answers (the hub slower than the requests came), which the requests'
    own times would not show. An interrupted run drops the requests not yet started.
    """
    if not tasks:
        time.sleep(seconds)
        return []
    lags: list[float] = []

    def run(task: Callable[[], None], due: float) -> None:
        lags.append(time.monotonic() - due)
        task()

    begun = time.monotonic()
    gap = period / len(tasks)
    pool = ThreadPoolExecutor(workers)
    try:
        for turn in range(int(seconds / gap)):
            due = begun + turn * gap
            time.sleep(max(0.0, due - time.monotonic()))
            pool.submit(run, tasks[turn % len(tasks)], due)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return lags
