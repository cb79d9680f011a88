"""environments: a container's engine (apptainer, as every container was before, or podman)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 20:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.add_column(
            sa.Column("engine", sa.String(20), nullable=False, server_default="apptainer")
        )


def downgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.drop_column("engine")
