"""Running totals (`tallies`), so the finished-games count is one row instead of a count over
every game; seeded from the games already recorded.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 15:35:00
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
        "tallies",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.execute(
        "INSERT INTO tallies (name, value) "
        "SELECT 'finished', COUNT(*) FROM games WHERE state = 'finished'"
    )


def downgrade() -> None:
    op.drop_table("tallies")
