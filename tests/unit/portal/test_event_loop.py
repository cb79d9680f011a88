"""A slow database query holds up only the request that made it (issue 21, item 3), or the
background loop that made it (issue 37, item 5).

The SQLAlchemy session is synchronous: plain routes use it in FastAPI's thread pool, `async`
routes (those that await Slurm) through `run_in_threadpool`. A query on the event loop would
stop every other request until it returned: the database logs it, and refuses it in the unit
tests (gpuportal_portal.db.Database.on_the_loop), so any route's unit test that queries on the
loop fails.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.concurrency import run_in_threadpool
from fastapi.testclient import TestClient
from sqlalchemy import event, text

from gpuportal_adapters.slurm import SlurmClient
from gpuportal_portal.app import create_app
from gpuportal_portal.db import Database, QueryOnTheLoop
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


def test_a_query_on_the_event_loop_is_logged_or_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'portal.db'}")

    def query() -> None:
        with database.sessions() as session:
            session.execute(text("SELECT 1"))

    async def on_the_loop() -> None:
        query()

    async def in_a_thread() -> None:
        await run_in_threadpool(query)

    asyncio.run(on_the_loop())
    assert "A database query on the event loop" in caplog.text
    assert "in on_the_loop" in caplog.text  # where it came from
    database.on_the_loop = "raise"
    with pytest.raises(QueryOnTheLoop):
        asyncio.run(on_the_loop())
    caplog.clear()
    asyncio.run(in_a_thread())
    query()  # no loop at all: a command's own
    assert "event loop" not in caplog.text


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
