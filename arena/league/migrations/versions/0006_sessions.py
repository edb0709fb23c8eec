"""Sessions that end on the server: each account's `session_epoch`, carried in its signed
login cookies and bumped by logout, token rotation and disabling (arena/league/web/auth.py);
and the index of the API's games list, newest first by finish time.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 01:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("session_epoch", sa.Integer(), nullable=False, server_default="0")
        )
    op.create_index("ix_games_finished_at", "games", ["finished_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_games_finished_at", table_name="games")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("session_epoch")
