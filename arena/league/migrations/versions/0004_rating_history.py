"""Rating history and retirement: each seat keeps its version's rating before and after the game
(written with the result, in the same transaction), so the bot and game pages can show how a
rating moved; a bot remembers who disabled it (`owner`: retired by its owner, who may reactivate
it; `admin`: only an admin may); two seat indexes serve the pages' history charts and the
leaderboard's forfeits by kind.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 19:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_RATING_COLUMNS = ("mu_before", "sigma_before", "mu_after", "sigma_after")


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        for name in _RATING_COLUMNS:
            batch_op.add_column(sa.Column(name, sa.Float(), nullable=True))
        batch_op.create_index(
            "ix_seats_version_variant_game", ["version_id", "variant", "game_id"], unique=False
        )
        batch_op.create_index(
            "ix_seats_forfeits",
            ["version_id", "variant"],
            unique=False,
            sqlite_where=sa.text("outcome = 'forfeit'"),
            postgresql_where=sa.text("outcome = 'forfeit'"),
        )
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("disabled_by", sa.String(length=16), nullable=True))
    op.execute("UPDATE bots SET disabled_by = 'admin' WHERE disabled")


def downgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("disabled_by")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_index("ix_seats_forfeits")
        batch_op.drop_index("ix_seats_version_variant_game")
        for name in reversed(_RATING_COLUMNS):
            batch_op.drop_column(name)
