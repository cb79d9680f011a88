"""multi-node jobs

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 11:34:25.514014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("launcher", sa.String(length=20), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("script", sa.Text(), nullable=False),
        sa.Column("output", sa.String(length=300), nullable=False),
        sa.Column("idempotency_key", sa.String(length=100), nullable=True),
        sa.Column("slurm_job_id", sa.String(length=20), nullable=False),
        sa.Column("state", sa.String(length=30), nullable=False),
        sa.Column("reason", sa.String(length=100), nullable=False),
        sa.Column("nodes", sa.String(length=200), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.String(length=30), nullable=False),
        sa.Column("ended_at", sa.String(length=30), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user", "idempotency_key", name="uq_jobs_user_idempotency_key"),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_slurm_job_id"), ["slurm_job_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_user"), ["user"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_user"))
        batch_op.drop_index(batch_op.f("ix_jobs_slurm_job_id"))

    op.drop_table("jobs")
