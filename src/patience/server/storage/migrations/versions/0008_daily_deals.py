"""The deal of the day: one secret deal key per (day, game) with its commitment, and one attempt per
player, day and game (the solo game it is played in).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "daily_deals",
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("game", sa.String(16), primary_key=True),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("deal", sa.String(64), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("proved", sa.Boolean, nullable=False),
        sa.Column("made_ms", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "daily_attempts",
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("game", sa.String(16), primary_key=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("game_id", sa.String(40), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False,
                  unique=True),
        sa.Column("started_ms", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("daily_attempts")
    op.drop_table("daily_deals")
