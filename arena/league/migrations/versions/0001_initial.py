"""The initial league schema: users, bots, versions, ratings, games, seats, records, voids,
official ratings (arena/league/store.py at its first release).

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-22 15:00:31.109110
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
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("archive_sha256", sa.String(length=64), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("manifest", sa.Text(), nullable=False),
        sa.Column("validation", sa.Text(), nullable=True),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.Column("activated_at", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "number"),
    )
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.create_index("ix_versions_state", ["state"], unique=False)

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("schedule_key", sa.String(length=128), nullable=True),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("game_name", sa.String(length=32), nullable=False),
        sa.Column("options", sa.Text(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("opening", sa.Text(), nullable=False),
        sa.Column("time_control", sa.Text(), nullable=False),
        sa.Column("version0", sa.Integer(), nullable=False),
        sa.Column("version1", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.Column("claimed_at", sa.String(length=32), nullable=True),
        sa.Column("finished_at", sa.String(length=32), nullable=True),
        sa.Column("winner", sa.Integer(), nullable=True),
        sa.Column("result", sa.String(length=8), nullable=True),
        sa.Column("reason", sa.String(length=64), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("forfeit", sa.Boolean(), nullable=True),
        sa.Column("loser_seat", sa.Integer(), nullable=True),
        sa.Column("score0", sa.Integer(), nullable=True),
        sa.Column("score1", sa.Integer(), nullable=True),
        sa.Column("turns", sa.Integer(), nullable=True),
        sa.Column("duration", sa.Float(), nullable=True),
        sa.Column("rated", sa.Boolean(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version0"],
            ["versions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["version1"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("schedule_key"),
    )
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.create_index("ix_games_state_priority", ["state", "priority", "id"], unique=False)
        batch_op.create_index("ix_games_variant_id", ["variant", "id"], unique=False)

    op.create_table(
        "official_ratings",
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("elo", sa.Float(), nullable=True),
        sa.Column("ci95", sa.Float(), nullable=True),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.Column("computed_at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("variant", "version_id"),
    )
    op.create_table(
        "ratings",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("forfeits", sa.Integer(), nullable=False),
        sa.Column("last_game_at", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("version_id", "variant"),
    )
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.create_index("ix_ratings_variant_score", ["variant", "score"], unique=False)

    op.create_table(
        "records",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
        ),
        sa.PrimaryKeyConstraint("game_id"),
    )
    op.create_table(
        "seats",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("outcome", sa.String(length=8), nullable=True),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("game_id", "seat"),
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.create_index("ix_seats_bot_game", ["bot_id", "game_id"], unique=False)
        batch_op.create_index("ix_seats_version_game", ["version_id", "game_id"], unique=False)

    op.create_table(
        "voids",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("voids", schema=None) as batch_op:
        batch_op.create_index("ix_voids_game", ["game_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("voids", schema=None) as batch_op:
        batch_op.drop_index("ix_voids_game")

    op.drop_table("voids")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_index("ix_seats_version_game")
        batch_op.drop_index("ix_seats_bot_game")

    op.drop_table("seats")
    op.drop_table("records")
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.drop_index("ix_ratings_variant_score")

    op.drop_table("ratings")
    op.drop_table("official_ratings")
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index("ix_games_variant_id")
        batch_op.drop_index("ix_games_state_priority")

    op.drop_table("games")
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.drop_index("ix_versions_state")

    op.drop_table("versions")
    op.drop_table("bots")
    op.drop_table("users")
