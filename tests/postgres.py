"""Databases of the tests' own on the local PostgreSQL (deploy/local/postgres.sh)."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from tests.hubproc import REPO


def postgres_admin_url() -> str:
    return subprocess.run(
        ["bash", str(REPO / "deploy/local/postgres.sh"), "url"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@contextmanager
def fresh_database(prefix: str) -> Iterator[str]:
    """An empty database for the block (its SQLAlchemy URL), dropped after it.
    psycopg.OperationalError if PostgreSQL does not answer."""
    admin_url = postgres_admin_url()
    conninfo = admin_url.replace("postgresql+psycopg://", "postgresql://")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(conninfo, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        _drop(conninfo, name)


def _drop(conninfo: str, name: str) -> None:
    """DROP DATABASE ... WITH (FORCE), again for a few seconds if PostgreSQL refuses: FORCE ends
    the other sessions on it, but not an autovacuum worker that has just started on the
    database (it belongs to no role: "must be a member of the role whose process is being
    terminated", once in CI); the worker is done within a moment."""
    for attempt in range(20):
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ObjectInUse):
            if attempt == 19:
                raise
            time.sleep(0.5)
