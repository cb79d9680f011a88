"""A slow database query holds up only the request that made it (issue 21, item 3), or the
background loop that made it (issue 37, item 5).

Routes that use the synchronous SQLAlchemy session are plain functions, which FastAPI runs in
its thread pool; an `async def` route with the same session would stop the event loop, and
every other request with it, until its query returned.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading
import time
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import event

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_portal import routers
from gpuportal_portal.app import create_app
from gpuportal_portal.deps import get_session
from gpuportal_portal.identity import COOKIE_NAME, HubIdentity
from gpuportal_portal.settings import PortalSettings
from tests.unit.portal.conftest import API, hub_says

SLOW_QUERY_SECONDS = 1.5


@pytest.mark.parametrize(
    "slow_path",
    [f"{API}/jobs", f"{API}/jobs/1", f"{API}/profiles", "/services/portal/jobs"],
)
def test_a_slow_query_does_not_hold_up_other_requests(
    client: tuple[TestClient, HubIdentity], slow_path: str
) -> None:
    test_client = client[0]
    test_client.cookies.set(COOKIE_NAME, "full")  # the page asks for a cookie
    in_query = threading.Event()

    def slow(*_: Any) -> None:
        # Only the first query of the slow request: the other request asks nothing of it.
        if not in_query.is_set():
            in_query.set()
            time.sleep(SLOW_QUERY_SECONDS)

    engine = test_client.app.state.database.engine  # type: ignore[attr-defined]
    finished: list[str] = []

    def ask_slowly() -> None:
        test_client.get(slow_path, headers={"Authorization": "token full"})
        finished.append("slow")

    event.listen(engine, "before_cursor_execute", slow)
    try:
        slow_request = threading.Thread(target=ask_slowly)
        slow_request.start()
        assert in_query.wait(10), "the slow request never reached the database"
        # The API docs page needs no database: it is answered while the query is running.
        docs = test_client.get("/services/portal/docs")
        finished.append("other")
        slow_request.join(10)
    finally:
        event.remove(engine, "before_cursor_execute", slow)
    assert docs.status_code == 200
    assert finished == ["other", "slow"], "the event loop waited for the slow query"


def _needs_the_database(dependant: Any) -> bool:
    return any(
        sub.call is get_session or _needs_the_database(sub) for sub in dependant.dependencies
    )


def test_no_async_route_takes_the_synchronous_database_session() -> None:
    """Every route given the sync SQLAlchemy session (directly or through a dependency) is a
    plain function: FastAPI runs it in the thread pool, never on the event loop."""
    routes = [
        route
        for module in pkgutil.iter_modules(routers.__path__)
        for route in importlib.import_module(f"{routers.__name__}.{module.name}").router.routes
        if isinstance(route, APIRoute)
    ]
    on_the_loop = [
        f"{sorted(r.methods)} {r.path}"
        for r in routes
        if inspect.iscoroutinefunction(r.endpoint) and _needs_the_database(r.dependant)
    ]
    assert len(routes) > 20
    assert on_the_loop == []


class QuietSlurm:
    """A cluster with no jobs, for the background loops."""

    async def tagged(self, **_: object) -> list[object]:
        return []

    async def queue(self, **_: object) -> list[object]:
        return []

    async def partitions(self) -> dict[str, object]:
        return {}


@pytest.mark.parametrize("loop", ["job_look_seconds", "use_look_seconds"])
def test_a_slow_query_of_a_background_loop_does_not_hold_up_requests(
    tmp_path: Path, loop: str
) -> None:
    """The job watcher and the use collector use the database from a worker thread: a slow
    query of theirs leaves the event loop free for every request."""
    every: dict[str, Any] = {"job_look_seconds": 0, "use_look_seconds": 0, loop: 0.05}
    settings = PortalSettings(
        database_url=f"sqlite:///{tmp_path / 'portal.db'}", hub_api_token="hub-secret", **every
    )
    identity = HubIdentity(settings, check_token=hub_says)
    slurm = cast(SlurmClient, QuietSlurm())
    in_query, query_done = threading.Event(), threading.Event()

    def slow(*_: Any) -> None:
        if not in_query.is_set():
            in_query.set()
            time.sleep(SLOW_QUERY_SECONDS)
            query_done.set()

    with TestClient(create_app(settings, identity=identity, slurm=slurm)) as test_client:
        engine = test_client.app.state.database.engine  # type: ignore[attr-defined]
        event.listen(engine, "before_cursor_execute", slow)
        try:
            assert in_query.wait(10), "no background loop reached the database"
            # The API's schema needs no database and no login.
            docs = test_client.get("/services/portal/openapi.json")
            answered_during_the_query = not query_done.is_set()
            assert query_done.wait(10)
        finally:
            event.remove(engine, "before_cursor_execute", slow)
    assert docs.status_code == 200
    assert answered_during_the_query, "the event loop waited for a background loop's query"
