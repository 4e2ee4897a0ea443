"""A player's tournaments, newest first, for their profile: an index of tournament_players by player.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_tournament_players_user", "tournament_players", ["user_id", "joined_ms"])


def downgrade() -> None:
    op.drop_index("ix_tournament_players_user", table_name="tournament_players")
