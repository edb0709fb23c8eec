"""A final's forfeits (issue 22: a finalist disabled by an admin mid-final forfeits the rest of
the final): `finals.forfeits`, JSON {entrant index: why}, kept once given, so that enabling the
bot again later does not bring back games the bracket has moved past
(arena/league/db/finals.py, `disqualify`).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("finals") as batch:
        batch.add_column(sa.Column("forfeits", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("finals") as batch:
        batch.drop_column("forfeits")
