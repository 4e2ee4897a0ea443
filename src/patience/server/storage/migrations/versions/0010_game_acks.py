"""The last intent of each page of a solo game, written with its move: a page that sends it again to
another process (the game moved there) gets the same answer, and the intent is not played twice.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_acks",
        sa.Column("game_id", sa.String(40), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("cid", sa.String(40), primary_key=True),
        sa.Column("ack", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("reply", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("game_acks")
