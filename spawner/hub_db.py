"""The hub's SQLite database in write-ahead-log mode, synchronous=NORMAL.

JupyterHub talks to its database synchronously on its one event loop: while a commit waits
for the disk, no request of anyone's is served. JupyterHub leaves SQLite in its default
rollback-journal mode, where each commit creates, syncs and deletes a journal file beside
syncing the database (three fsyncs); a spawn commits several times. In write-ahead-log mode
with synchronous=NORMAL a commit appends to the log and syncs only at checkpoints: on this
machine 1.2 ms -> 0.02 ms a commit idle, and the gap grows with the disk's load (a burst of
session starts). What NORMAL gives up is the last commits before a power cut or a kernel crash
(never a corrupt file, and nothing on a crash of the hub itself); a session whose job id was
among them is found again by its tag when the hub starts (gpuportal_spawner.session_job).

PostgreSQL, which production sites use (PORTAL_HUB_DATABASE_URL), is left as it is. The log
needs the file on a local disk, not NFS (docs/how-to/upgrades.md). The figures, with and
without it, are in docs/explanation/figures.md.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


def _pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def use_wal(engine: Engine) -> bool:
    """Every connection of this engine to a SQLite file in WAL mode from now on; False (and
    nothing done) for another database or SQLite in memory."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return False
    event.listen(engine, "connect", _pragmas)
    # Connections JupyterHub opened before (its schema check) are closed, so that none stays
    # in the pool without the pragmas; the first new one switches the file to WAL for good.
    engine.dispose()
    with engine.connect():
        pass
    return True
