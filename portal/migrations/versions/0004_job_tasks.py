"""jobs: expected start of a waiting job, and the tasks of an array job

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 06:25:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Server defaults fill the rows already there; batch mode lets SQLite alter the table too.
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(
            sa.Column("expected_start", sa.String(length=30), nullable=False, server_default="")
        )
        batch.add_column(sa.Column("tasks", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("tasks")
        batch.drop_column("expected_start")
