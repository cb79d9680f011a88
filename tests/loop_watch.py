"""Installed as `sitecustomize` in the hub's and the portal's processes by
tests/integration/test_loop_blocking.py (a folder of its own put first on PYTHONPATH, with a
`records` folder beside it): it makes the process a site's, and writes down what blocks a loop.

- A site's directory and DNS: every name lookup (socket; not of an address literal, which asks
  no DNS) and user or group lookup (pwd, grp) answers after 150 ms, as sssd over LDAP or a DNS
  server a few hops away can. Here they come
  from /etc files in microseconds, which hides a lookup made on an event loop.
- asyncio's debug mode: each callback of a loop that runs over 100 ms (its
  slow_callback_duration) is logged by asyncio; those lines are written down, with the frames
  of the product's own code that a sampler of the loop's thread (every 10 ms) saw during it.
- Such a lookup made on a thread that runs an event loop is written down with its stack, so
  that a slow callback comes with its cause; so is a call that waits by its nature, whatever
  it takes here: a child process waited for, a sleep, a blocking socket's connect.

Inert in any process that cannot write the records folder (a user's session job, to which the
hub passes PYTHONPATH): the folder is the hub's service account's alone.
"""

from __future__ import annotations

import asyncio
import functools
import grp
import ipaddress
import json
import logging
import os
import pwd
import re
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

RECORDS = Path(__file__).with_name("records")
LOOKUP_SECONDS = 0.15
LOOKUPS: dict[ModuleType, tuple[str, ...]] = {
    socket: ("gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getaddrinfo"),
    pwd: ("getpwnam", "getpwuid", "getpwall"),
    grp: ("getgrnam", "getgrgid", "getgrall", "getgrouplist"),
}
_write = threading.Lock()
_sleep = time.sleep


def record(kind: str, **fields: Any) -> None:
    line = json.dumps({"kind": kind, "at": time.time(), "pid": os.getpid(), **fields})
    with _write, (RECORDS / f"{os.getpid()}.jsonl").open("a") as out:
        out.write(line + "\n")


def on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def asks_nobody(
    module: ModuleType, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """A name "lookup" that consults no DNS: of an address literal (tornado checks a forwarded
    address so), or with AI_NUMERICHOST."""
    if module is not socket or name == "gethostbyaddr":
        return False
    host = args[0] if args else kwargs.get("host")
    flags = args[5] if len(args) > 5 else kwargs.get("flags", 0)
    if host is None or (flags or 0) & socket.AI_NUMERICHOST:
        return True
    try:
        ipaddress.ip_address(host.decode() if isinstance(host, bytes) else str(host))
    except ValueError:
        return False
    return True


def slowed(module: ModuleType, name: str) -> Callable[..., Any]:
    real = getattr(module, name)

    @functools.wraps(real)
    def lookup(*args: Any, **kwargs: Any) -> Any:
        if asks_nobody(module, name, args, kwargs):
            return real(*args, **kwargs)
        if on_a_loop():
            stack = traceback.format_stack(limit=14)[:-1]
            record("lookup on a loop", call=f"{module.__name__}.{name}{args!r}"[:200], stack=stack)
        _sleep(LOOKUP_SECONDS)
        return real(*args, **kwargs)

    return lookup


def blocks(*_: Any, **__: Any) -> bool:
    return True


def waits(_: subprocess.Popen[Any], timeout: float | None = None) -> bool:
    return timeout is None or timeout > 0


def sleeps(seconds: float) -> bool:
    return seconds > 0


def blocking_socket(sock: socket.socket, *_: Any) -> bool:
    return sock.gettimeout() != 0.0  # asyncio's sockets are non-blocking


# Calls that wait however fast they answer here, with when a call of them does.
WAITS: dict[Any, tuple[tuple[str, Callable[..., bool]], ...]] = {
    subprocess.Popen: (("wait", waits), ("communicate", blocks)),
    time: (("sleep", sleeps),),
    socket.socket: (("connect", blocking_socket),),
}


def watched(owner: Any, name: str, waits_now: Callable[..., bool]) -> Callable[..., Any]:
    real = getattr(owner, name)

    @functools.wraps(real)
    def call(*args: Any, **kwargs: Any) -> Any:
        if on_a_loop() and waits_now(*args, **kwargs):
            stack = traceback.format_stack(limit=14)[:-1]
            record("waited on a loop", call=f"{owner.__name__}.{name}", stack=stack)
        return real(*args, **kwargs)

    return call


# The product's own files (the editable install's, or a checkout's on PYTHONPATH).
OURS = re.compile(r"/(portal|spawner|gpuportal_[a-z]+)/[^/]+\.py$")
SAMPLE_EVERY = 0.01
# (monotonic time, the main thread's stack as "file:line function", innermost first)
_samples: deque[tuple[float, tuple[str, ...]]] = deque(maxlen=400)


def sample_forever(thread: int) -> None:
    """What the main thread (the hub's or the portal's loop) runs, every 10 ms: the frames of
    the callback it runs, down to asyncio's Handle._run (what is below, the program's main and
    the loop's run_forever, is on every sample)."""
    while True:
        frame = sys._current_frames().get(thread)
        stack = []
        while frame is not None and len(stack) < 60:
            code = frame.f_code
            if code.co_name == "_run" and code.co_filename.endswith("asyncio/events.py"):
                break
            stack.append(f"{code.co_filename}:{frame.f_lineno} {code.co_name}")
            frame = frame.f_back
        _samples.append((time.monotonic(), tuple(stack)))
        _sleep(SAMPLE_EVERY)


class SlowCallbacks(logging.Handler):
    """asyncio's "Executing <Handle ...> took 0.150 seconds" lines (debug mode), logged on the
    loop's thread right after the callback, with the product's frames the samples taken during
    it show: the product's code held the loop, or only its libraries did."""

    def emit(self, entry: logging.LogRecord) -> None:
        message = entry.getMessage()
        took = re.search(r"took ([0-9.]+) seconds", message)
        if not message.startswith("Executing ") or took is None:
            return
        end = time.monotonic()
        during = [stack for at, stack in list(_samples) if end - float(took[1]) <= at <= end]
        ours = sorted(
            {line for stack in during for line in stack if OURS.search(line.split(":")[0])}
        )
        innermost = sorted({stack[0] for stack in during if stack})
        record("slow callback", message=message[:600], ours=ours, innermost=innermost[:8])


def install() -> None:
    os.environ["PYTHONASYNCIODEBUG"] = "1"  # read when each loop is made
    for module, names in LOOKUPS.items():
        for name in names:
            if hasattr(module, name):
                setattr(module, name, slowed(module, name))
    for owner, calls in WAITS.items():
        for name, waits_now in calls:
            setattr(owner, name, watched(owner, name, waits_now))
    watcher = logging.getLogger("asyncio")
    watcher.addHandler(SlowCallbacks())
    watcher.setLevel(logging.WARNING)
    main = threading.main_thread().ident
    if main is not None:
        threading.Thread(target=sample_forever, args=(main,), daemon=True).start()
    record("watching", argv=" ".join(sys.argv[:4]))  # the test checks whom it watched


if os.access(RECORDS, os.W_OK):
    install()
