"""Host stalls per worker: how many of a worker's games the referee voided because the host, not
a bot, made a reply late (`HostStall`, issue 19), in all (`stalls`) and over its recent games
(`recent`: one character per game it ended, oldest first, `s` for a host stall and `.` for any
other end, the last `fleet.RECENT` kept), so that the API shows each worker's stall rate and the
fleet gives a worker that keeps stalling fewer games (arena/league/db/fleet.py).

Revision ID: 0008
Revises: 0005
Create Date: 2026-11-25 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stalls", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(
            sa.Column("recent", sa.String(length=64), nullable=False, server_default="")
        )


def downgrade() -> None:
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.drop_column("recent")
        batch_op.drop_column("stalls")
