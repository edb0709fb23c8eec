"""Tournaments on the league's workers: bot archives by content hash and each attempt's outcome,
keyed by (run, game, attempt) so a game played twice (a stalled job retried) is recorded once.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 20:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournament_blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )
    op.create_table(
        "tournament_results",
        sa.Column("run", sa.String(length=64), nullable=False),
        sa.Column("game_id", sa.String(length=255), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("worker", sa.String(length=128), nullable=False),
        sa.Column("at", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("run", "game_id", "attempt"),
    )


def downgrade() -> None:
    op.drop_table("tournament_results")
    op.drop_table("tournament_blobs")
