"""profiles and audit records

Revision ID: 0001
Revises:
Create Date: 2026-11-22 10:58:25.136832
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("subject", sa.String(length=100), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("audit_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_records_at"), ["at"], unique=False)

    op.create_table(
        "profiles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=40), nullable=False),
        sa.Column("title", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("gpus", sa.Integer(), nullable=False),
        sa.Column("cores_per_gpu", sa.Integer(), nullable=False),
        sa.Column("mem_per_gpu_gb", sa.Integer(), nullable=False),
        sa.Column("default_runtime", sa.Integer(), nullable=False),
        sa.Column("max_runtime", sa.Integer(), nullable=False),
        sa.Column("partition", sa.String(length=64), nullable=False),
        sa.Column("sbatch_options", sa.JSON(), nullable=False),
        sa.Column("groups", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(length=100), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("slug"),
    )


def downgrade() -> None:
    op.drop_table("profiles")
    with op.batch_alter_table("audit_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_records_at"))

    op.drop_table("audit_records")
