"""jobs: what an ended job used of what it asked for (sacct, and a session's GPU readings)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Jobs that ended before this version have none: the collector reads those Slurm still has.
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("use", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("use")
