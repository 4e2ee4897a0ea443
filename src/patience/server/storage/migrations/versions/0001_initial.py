"""Browsers and their games.

Revision ID: 0001
Revises:
Create Date: 2024-11-22
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
        "browsers",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("browser_id", sa.String(40), sa.ForeignKey("browsers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("variant", sa.String(40), nullable=True),
        sa.Column("seed", sa.String(20), nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("ms", sa.BigInteger, nullable=False),
        sa.Column("moves", sa.Integer, nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("updated_ms", sa.BigInteger, nullable=False),
        sa.Column("ended_ms", sa.BigInteger, nullable=True),
    )
    op.create_index("ix_games_browser_game_ended", "games", ["browser_id", "game", "ended_ms"])


def downgrade() -> None:
    op.drop_index("ix_games_browser_game_ended", table_name="games")
    op.drop_table("games")
    op.drop_table("browsers")
