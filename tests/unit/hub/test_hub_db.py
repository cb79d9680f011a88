"""The hub keeps a SQLite database in write-ahead-log mode, synchronous=NORMAL
(gpuportal_spawner.hub_db): JupyterHub's own init_db, on a real file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jupyterhub import orm
from jupyterhub.app import JupyterHub
from sqlalchemy import text

from gpuportal_spawner.hub_app import GpuPortalHub
from gpuportal_spawner.hub_db import use_wal


def journal(path: Path) -> str:
    with sqlite3.connect(path) as plain:  # another process's view of the file
        return str(plain.execute("PRAGMA journal_mode").fetchone()[0])


def test_the_hubs_sqlite_file_is_in_wal_mode_and_its_connections_sync_normally(
    tmp_path: Path,
) -> None:
    path = tmp_path / "jupyterhub.sqlite"
    app = GpuPortalHub(db_url=f"sqlite:///{path}")
    app.init_db()
    assert journal(path) == "wal"
    # 1 is NORMAL (2, FULL, is SQLite's default): on the session JupyterHub serves requests with.
    assert app.db.execute(text("PRAGMA synchronous")).scalar() == 1
    app.db.add(orm.User(name="alice"))
    app.db.commit()
    assert (tmp_path / "jupyterhub.sqlite-wal").exists()
    app.db.close()


def test_plain_jupyterhub_leaves_sqlite_in_its_rollback_journal(tmp_path: Path) -> None:
    path = tmp_path / "jupyterhub.sqlite"
    app = JupyterHub(db_url=f"sqlite:///{path}")
    app.init_db()
    assert journal(path) == "delete"
    app.db.close()


def test_sqlite_in_memory_is_left_alone() -> None:
    engine = orm.new_session_factory("sqlite:///:memory:").kw["bind"]
    assert use_wal(engine) is False
