"""Solo games' actions written one row each before they are acknowledged (the game's record is
rewritten whole every few seconds, and then its rows go).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_moves",
        sa.Column("game_id", sa.String(40), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("action", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("game_moves")
