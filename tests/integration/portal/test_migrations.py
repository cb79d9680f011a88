"""`alembic upgrade head` on an empty database, down to nothing, and up again (both kinds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import MetaData, Table, create_engine, inspect, select, text

from gpuportal_core.profiles import ResourceProfile
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


# A profile as 0008 stored it: a column per field, runtimes in seconds.
OLD_PROFILE = {
    "id": 1,
    "slug": "gpu-2",
    "title": "2 GPUs",
    "description": "Data-parallel training",
    "gpus": 2,
    "cores_per_gpu": 8,
    "mem_per_gpu_gb": 48,
    "default_runtime": 8 * 3600,
    "max_runtime": 24 * 3600,
    "partition": "gpu",
    "sbatch_options": {"qos": "short", "account": "ml"},
    "groups": ["ml", "ds"],
    "enabled": False,
    "position": 0,
    "idle_limit": 0,
    "gpu_idle_limit": 5400,
    "queue_limit": 90,
    "version": 3,
    "updated_at": datetime(2026, 11, 25, 10, tzinfo=UTC),
    "updated_by": "carol",
}


def test_stored_profiles_keep_every_field_through_the_one_spec_column(database_url: str) -> None:
    """0009 folds a profile's columns into one JSON spec and back, losing nothing."""
    alembic(database_url, "upgrade", "0008")
    engine = create_engine(database_url)
    profiles = Table("profiles", MetaData(), autoload_with=engine)
    try:
        with engine.begin() as connection:
            connection.execute(profiles.insert().values(**OLD_PROFILE))
        alembic(database_url, "upgrade", "head")
        with engine.connect() as connection:
            row = connection.execute(text("SELECT slug, spec, version FROM profiles")).one()
        spec = row.spec if isinstance(row.spec, dict) else json.loads(row.spec)
        assert (row.slug, row.version) == ("gpu-2", 3)
        assert spec == {
            "title": "2 GPUs",
            "description": "Data-parallel training",
            "gpus": 2,
            "cores_per_gpu": 8,
            "mem_per_gpu_gb": 48,
            "default_runtime": "08:00:00",
            "max_runtime": "24:00:00",
            "idle_limit": "00:00:00",
            "gpu_idle_limit": "01:30:00",
            "queue_limit": "00:01:30",
            "partition": "gpu",
            "sbatch_options": {"account": "ml", "qos": "short"},
            "groups": ["ds", "ml"],
            "enabled": False,
        }
        # What the portal reads from it is what was stored, every field.
        profile = ResourceProfile.model_validate({**spec, "slug": row.slug})
        assert (profile.gpu_idle_limit, profile.queue_limit, profile.enabled) == (5400, 90, False)
        alembic(database_url, "downgrade", "0008")
        with engine.connect() as connection:
            back = connection.execute(select(Table("profiles", MetaData(), autoload_with=engine)))
            restored = dict(back.mappings().one())
        assert {k: restored[k] for k in OLD_PROFILE if k != "updated_at"} == {
            **{k: v for k, v in OLD_PROFILE.items() if k != "updated_at"},
            "groups": ["ds", "ml"],
            "sbatch_options": {"account": "ml", "qos": "short"},
        }
    finally:
        engine.dispose()
