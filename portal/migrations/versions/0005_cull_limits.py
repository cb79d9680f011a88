"""profiles: culling limits (idle, GPU idle, queued), in seconds, 0 for never

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 11:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

LIMITS = ("idle_limit", "gpu_idle_limit", "queue_limit")


def upgrade() -> None:
    # Profiles already there keep running as before (never culled) until an admin sets limits.
    with op.batch_alter_table("profiles") as batch:
        for name in LIMITS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("profiles") as batch:
        for name in reversed(LIMITS):
            batch.drop_column(name)
