"""notebook job definitions on a schedule, and which definition a job is a run of

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29 18:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notebook_schedules",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user", sa.String(64), nullable=False, index=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("request", sa.JSON, nullable=False),
        sa.Column("schedule", sa.String(100), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("next_record_id", sa.Integer, nullable=True),
        sa.Column("problem", sa.String(300), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("schedule_id", sa.Integer, nullable=True))
        batch.create_index("ix_jobs_schedule_id", ["schedule_id"])


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_index("ix_jobs_schedule_id")
        batch.drop_column("schedule_id")
    op.drop_table("notebook_schedules")
