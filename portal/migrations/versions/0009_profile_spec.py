"""profiles: the spec in one JSON column (gpuportal_core.profiles.ProfileSpec)

A new field of the spec needs no migration after this one: a stored spec without it reads
with the field's default. Runtimes are stored as the API writes them ("HH:MM:SS").

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 14:00:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

PLAIN = ("title", "description", "gpus", "cores_per_gpu", "mem_per_gpu_gb", "partition")
SECONDS = ("default_runtime", "max_runtime", "idle_limit", "gpu_idle_limit", "queue_limit")
LISTS = ("sbatch_options", "groups", "enabled")
COLUMNS = (*PLAIN, *SECONDS, *LISTS)


def _hms(seconds: int) -> str:
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def _seconds(text: str) -> int:
    hours, minutes, seconds = (int(part) for part in text.split(":"))
    return hours * 3600 + minutes * 60 + seconds


def _type(name: str) -> Any:
    if name in ("title", "description", "partition"):
        return sa.String()
    if name in ("sbatch_options", "groups"):
        return sa.JSON()
    return sa.Boolean() if name == "enabled" else sa.Integer()


# The migration's own copy of the table: the models have moved on.
PROFILES = sa.table(
    "profiles",
    sa.column("id", sa.Integer()),
    sa.column("spec", sa.JSON()),
    *(sa.column(name, _type(name)) for name in COLUMNS),
)


def upgrade() -> None:
    with op.batch_alter_table("profiles") as batch:
        batch.add_column(sa.Column("spec", sa.JSON(), nullable=True))
    old = PROFILES
    connection = op.get_bind()
    for row in connection.execute(sa.select(old)).mappings().all():
        spec = {name: row[name] for name in COLUMNS}
        spec.update({name: _hms(row[name]) for name in SECONDS})
        spec["groups"] = sorted(set(row["groups"] or []))
        spec["sbatch_options"] = dict(sorted((row["sbatch_options"] or {}).items()))
        spec["enabled"] = bool(row["enabled"])
        connection.execute(sa.update(old).where(old.c.id == row["id"]).values(spec=spec))
    with op.batch_alter_table("profiles") as batch:
        batch.alter_column("spec", existing_type=sa.JSON(), nullable=False)
        for name in COLUMNS:
            batch.drop_column(name)


def downgrade() -> None:
    with op.batch_alter_table("profiles") as batch:
        batch.add_column(sa.Column("title", sa.String(100), nullable=False, server_default=""))
        batch.add_column(sa.Column("description", sa.Text(), nullable=False, server_default=""))
        for name in ("gpus", "cores_per_gpu", "mem_per_gpu_gb", *SECONDS):
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("partition", sa.String(64), nullable=False, server_default=""))
        batch.add_column(sa.Column("sbatch_options", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("groups", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("enabled", sa.Boolean(), nullable=False, server_default="1"))
    new = PROFILES
    connection = op.get_bind()
    for row in connection.execute(sa.select(new.c.id, new.c.spec)).mappings().all():
        spec = dict(row["spec"])
        values = {name: spec[name] for name in COLUMNS if name in spec}
        values.update({name: _seconds(spec[name]) for name in SECONDS if name in spec})
        connection.execute(sa.update(new).where(new.c.id == row["id"]).values(**values))
    with op.batch_alter_table("profiles") as batch:
        batch.drop_column("spec")
