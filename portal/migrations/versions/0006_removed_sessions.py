"""removed_sessions: session records their users removed, so that the scan does not add them again

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 15:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "removed_sessions",
        sa.Column("slurm_job_id", sa.String(20), primary_key=True),
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("removed_sessions")
