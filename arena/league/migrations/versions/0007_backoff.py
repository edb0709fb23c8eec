"""Retries with backoff: a game the platform voided waits in the queue until `not_before`
(arena/league/backoff.py).

Revision ID: 0007
Revises: 0005
Create Date: 2026-11-25 01:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("not_before", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("not_before")
