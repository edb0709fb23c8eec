"""Seasons and finals (issue 22, items 3 and 4): a `seasons` table (one open at a time), each
game's season (`games.season_id`), a closed season's ratings kept in `season_ratings`, and the
`finals` played among a season's best (arena/league/db/seasons.py, arena/league/db/finals.py).

A league that existed before seasons goes on in a first season, named "1" and open, that holds
every game played so far; its ratings are the live `ratings` table, untouched. A new league
starts in that season too.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

#: the first season's name
FIRST_SEASON = "1"


def upgrade() -> None:
    op.create_table(
        "seasons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("opened_at", sa.String(length=32), nullable=False),
        sa.Column("closed_at", sa.String(length=32), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "season_ratings",
        sa.Column("season_id", sa.Integer(), nullable=False),
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
        sa.Column("elo", sa.Float(), nullable=True),
        sa.Column("ci95", sa.Float(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["season_id"], ["seasons.id"]),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"]),
        sa.PrimaryKeyConstraint("season_id", "version_id", "variant"),
    )
    op.create_index(
        "ix_season_ratings_order", "season_ratings", ["season_id", "variant", "score"], unique=False
    )
    op.create_table(
        "finals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("season_id", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("pairs", sa.Integer(), nullable=False),
        sa.Column("extra_pairs", sa.Integer(), nullable=False),
        sa.Column("entrants", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.Column("finished_at", sa.String(length=32), nullable=True),
        sa.Column("champion", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["season_id"], ["seasons.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_finals_state", "finals", ["state"], unique=False)
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("season_id", sa.Integer(), nullable=True))
        batch.create_index("ix_games_season", ["season_id", "id"], unique=False)
    conn = op.get_bind()
    first = conn.execute(sa.text("SELECT MIN(created_at) FROM games")).scalar()
    if first is None:  # a new league: its first season opens now
        first = _now()
    conn.execute(
        sa.text("INSERT INTO seasons (name, state, opened_at) VALUES (:name, 'open', :at)"),
        {"name": FIRST_SEASON, "at": first},
    )
    sid = conn.execute(
        sa.text("SELECT id FROM seasons WHERE name = :name"), {"name": FIRST_SEASON}
    ).scalar()
    conn.execute(sa.text("UPDATE games SET season_id = :sid"), {"sid": sid})


def _now() -> str:
    import time

    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_season")
        batch.drop_column("season_id")
    op.drop_index("ix_finals_state", table_name="finals")
    op.drop_table("finals")
    op.drop_index("ix_season_ratings_order", table_name="season_ratings")
    op.drop_table("season_ratings")
    op.drop_table("seasons")
