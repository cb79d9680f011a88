"""Engine, sessions and migrations: one place that knows how the portal reaches its database."""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from alembic import command
from alembic.config import Config
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


class QueryOnTheLoop(RuntimeError):
    """A query ran on the thread of a running event loop (Database.on_the_loop = "raise")."""


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
            # WAL: the admin page's writes do not block the spawner's reads.
            cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=5000")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str) -> None:
    """Bring the database to the newest schema (creating it when empty)."""
    command.upgrade(alembic_config(url), "head")


class Database:
    """The engine and a session factory; one per app.

    The sessions are synchronous: routes and loops use them in the thread pool
    (`run_in_threadpool`), never on the event loop, where a slow query would stop every other
    request. A query that runs on the loop anyway is logged with where it came from, or
    refused (`on_the_loop = "raise"`, as the unit tests set it)."""

    def __init__(self, url: str) -> None:
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.on_the_loop: Literal["log", "raise"] = "log"
        event.listen(self.engine, "before_cursor_execute", self._not_on_the_loop)

    def _not_on_the_loop(self, *_: Any) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # a worker thread, or a command's own (migrations, gpuportal-admin)
        # Where it came from: the last frames outside SQLAlchemy's own.
        frames = [f for f in traceback.extract_stack()[:-1] if "/sqlalchemy/" not in f.filename]
        where = "".join(traceback.format_list(frames[-6:]))
        if self.on_the_loop == "raise":
            raise QueryOnTheLoop(f"a database query on the event loop:\n{where}")
        log.warning("A database query on the event loop (run it in the thread pool):\n%s", where)

    def session(self) -> Iterator[Session]:
        with self.sessions() as session:
            yield session


async def step(
    session: Session,
    work: Callable[Concatenate[Session, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """`work(session, ...)` in the thread pool, as one transaction, ended there (committed, or
    rolled back if it raised): the session's connection goes back to the pool before the route
    awaits anything else. A route that held its connection while Slurm answered took one of the
    pool's 15 for seconds: 50 cancels at once left the last ones a 500 after 30 s."""

    def run() -> T:
        try:
            result = work(session, *args, **kwargs)
        except BaseException:
            session.rollback()
            raise
        session.commit()
        return result

    return await run_in_threadpool(run)
