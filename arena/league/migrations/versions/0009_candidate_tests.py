"""Candidate verdicts (issue 22): "is my new version better than the last one?". One
`candidate_tests` row per new version and variant (its SPRT bounds, its counts, its state), and
the games of a test marked by `games.candidate_test` and `games.candidate_pair` (kind
`candidate`, unrated). arena/league/candidates.py says how they are played and counted.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "candidate_tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("baseline_id", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("elo0", sa.Float(), nullable=False),
        sa.Column("elo1", sa.Float(), nullable=False),
        sa.Column("alpha", sa.Float(), nullable=False),
        sa.Column("beta", sa.Float(), nullable=False),
        sa.Column("model", sa.String(length=16), nullable=False),
        sa.Column("max_pairs", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("games_made", sa.Integer(), nullable=False),
        sa.Column("pentanomial", sa.String(length=64), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("llr", sa.Float(), nullable=False),
        sa.Column("elo", sa.Float(), nullable=True),
        sa.Column("elo_ci95", sa.Float(), nullable=True),
        sa.Column("los", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.Column("decided_at", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(["candidate_id"], ["versions.id"]),
        sa.ForeignKeyConstraint(["baseline_id"], ["versions.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("candidate_id", "variant"),
    )
    op.create_index("ix_candidate_tests_state", "candidate_tests", ["state"])
    op.create_index("ix_candidate_tests_baseline", "candidate_tests", ["baseline_id"])
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("candidate_test", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("candidate_pair", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_games_candidate_test", "candidate_tests", ["candidate_test"], ["id"]
        )
        batch.create_index("ix_games_candidate_test", ["candidate_test", "candidate_pair"])


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_candidate_test")
        batch.drop_constraint("fk_games_candidate_test", type_="foreignkey")
        batch.drop_column("candidate_pair")
        batch.drop_column("candidate_test")
    op.drop_index("ix_candidate_tests_baseline", table_name="candidate_tests")
    op.drop_index("ix_candidate_tests_state", table_name="candidate_tests")
    op.drop_table("candidate_tests")
