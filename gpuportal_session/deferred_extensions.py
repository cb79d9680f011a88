"""A Jupyter server extension of the session: server extensions nobody needs before the lab is on
screen load after the server answers, not before.

jupyter_server imports and loads every enabled extension before it listens. Dask's
(dask_labextension: the Dask panel's cluster list and dashboards) imports Dask and distributed,
0.37 s of a 2-core node's start, for URLs the lab asks for seconds later. Here it is disabled in
the session's Jupyter config and loaded by this extension once the server runs
(`_start_jupyter_server_extension`): its heavy imports in a thread, then its own load on the
server's loop, as jupyter_server would have done, LOAD_AFTER_SECONDS after the start. A request
that comes for its URLs before that waits for it and is sent to the same URL again (307), which
by then the extension answers.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import time
from dataclasses import dataclass, field
from typing import Any

from jupyter_server.utils import url_path_join
from tornado import web
from tornado.routing import PathMatches, Rule

# How long a request for a deferred extension's URL waits for it before it is told to retry.
WAIT_SECONDS = 60
# When the deferred extensions load, after the server's start: past the lab's own first requests
# (its page, settings, contents: 2-4 s on a 2-core node), which a load at once slowed by 0.5 s.
LOAD_AFTER_SECONDS = 5.0


@dataclass
class Deferred:
    """One server extension loaded after the start: its module, the URL prefixes it serves
    (under the base URL), and the modules a thread imports first (those that are safe to import
    off the server's loop; the extension itself is imported on it)."""

    module: str
    prefixes: tuple[str, ...]
    prepare: tuple[str, ...] = ()
    loaded: asyncio.Event = field(default_factory=asyncio.Event)
    rules: list[Rule] = field(default_factory=list)


# dask_labextension's manager takes IOLoop.current() at import: it is imported on the loop.
DEFERRED = (Deferred("dask_labextension", ("dask/",), prepare=("dask.distributed", "yaml")),)


class WaitForExtension(web.RequestHandler):
    """A request for a deferred extension's URL before it has loaded."""

    def initialize(self, deferred: Deferred) -> None:
        self.deferred = deferred

    async def prepare(self) -> None:
        try:
            await asyncio.wait_for(self.deferred.loaded.wait(), WAIT_SECONDS)
        except TimeoutError:
            self.set_status(503)
            self.set_header("Retry-After", "5")
            self.finish(f"{self.deferred.module} is still loading; try again in a few seconds.")
            return
        # The same request again, now to the extension's own handler (this rule is gone).
        self.redirect(self.request.uri or "/", status=307)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpuportal_session.deferred_extensions"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    router = serverapp.web_app.default_router
    base_url = serverapp.web_app.settings["base_url"]
    for deferred in installed():
        for prefix in deferred.prefixes:
            pattern = url_path_join(base_url, prefix) + ".*"
            rule = router.process_rule(
                Rule(PathMatches(pattern), WaitForExtension, {"deferred": deferred})
            )
            router.rules.insert(0, rule)
            deferred.rules.append(rule)


async def _start_jupyter_server_extension(serverapp: Any) -> None:
    # Not awaited here: jupyter_server awaits each extension's start before the next.
    for deferred in installed():
        asyncio.get_running_loop().create_task(load_later(serverapp, deferred))


def installed() -> list[Deferred]:
    """The deferred extensions this environment has (a session's venv may lack Dask's)."""
    return [d for d in DEFERRED if importlib.util.find_spec(d.module) is not None]


async def load_later(serverapp: Any, deferred: Deferred, after: float = LOAD_AFTER_SECONDS) -> None:
    await asyncio.sleep(after)
    begun = time.monotonic()
    try:
        for name in deferred.prepare:
            await asyncio.to_thread(importlib.import_module, name)
        module = importlib.import_module(deferred.module)
        load = (
            getattr(module, "_load_jupyter_server_extension", None)
            or module.load_jupyter_server_extension
        )
        load(serverapp)
    except Exception as error:  # as jupyter_server does: a broken extension does not stop it
        serverapp.log.warning("%s | extension failed loading: %r", deferred.module, error)
    else:
        serverapp.log.info(
            "%s | extension loaded after the start, in %.2f s",
            deferred.module,
            time.monotonic() - begun,
        )
    finally:
        router = serverapp.web_app.default_router
        for rule in deferred.rules:
            if rule in router.rules:
                router.rules.remove(rule)
        deferred.loaded.set()
