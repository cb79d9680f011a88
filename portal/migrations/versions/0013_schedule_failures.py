"""how many times in a row a definition's next run could not be queued

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 16:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notebook_schedules") as batch:
        batch.add_column(sa.Column("failures", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("notebook_schedules") as batch:
        batch.drop_column("failures")
