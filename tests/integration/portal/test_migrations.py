"""`alembic upgrade head` on an empty database, down to nothing, and up again (both kinds)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from tests.hubproc import REPO

pytestmark = pytest.mark.integration

ALEMBIC = [str(Path(sys.executable).parent / "alembic"), "-c", str(REPO / "portal/alembic.ini")]


def alembic(database_url: str, *args: str) -> None:
    env = dict(os.environ, PORTAL_DATABASE_URL=database_url)
    result = subprocess.run([*ALEMBIC, *args], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def tables(database_url: str) -> set[str]:
    engine = create_engine(database_url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(database_url: str) -> None:
    assert tables(database_url) == set()
    alembic(database_url, "upgrade", "head")
    assert {"profiles", "audit_records", "environments", "alembic_version"} <= tables(database_url)
    alembic(database_url, "downgrade", "base")
    assert tables(database_url) <= {"alembic_version"}
    alembic(database_url, "upgrade", "head")
    assert {"profiles", "audit_records", "environments"} <= tables(database_url)
