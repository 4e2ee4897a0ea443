"""Arena tournaments: the tournaments (a scheduled one unique by its slot), their players (the duel each
plays now, claimed when paired) and their duels.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
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
        "tournaments",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("starts_ms", sa.BigInteger, nullable=False),
        sa.Column("ends_ms", sa.BigInteger, nullable=False),
        sa.Column("slot", sa.String(60), nullable=True, unique=True),
        sa.Column("created_by", sa.String(24), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("password", sa.String(120), nullable=True),
        sa.Column("made_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_tournaments_ends", "tournaments", ["ends_ms"])
    op.create_table(
        "tournament_players",
        sa.Column("tournament_id", sa.String(16), sa.ForeignKey("tournaments.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("joined_ms", sa.BigInteger, nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("match_id", sa.String(24), nullable=True),
        sa.Column("claimed_ms", sa.BigInteger, nullable=True),
        sa.Column("last_opponent", sa.String(24), nullable=True),
    )
    op.create_table(
        "tournament_duels",
        sa.Column("match_id", sa.String(24), sa.ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tournament_id", sa.String(16), sa.ForeignKey("tournaments.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("player_a", sa.String(24), nullable=False),
        sa.Column("player_b", sa.String(24), nullable=False),
        sa.Column("made_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_tournament_duels_tournament", "tournament_duels", ["tournament_id", "made_ms"])


def downgrade() -> None:
    op.drop_index("ix_tournament_duels_tournament", "tournament_duels")
    op.drop_table("tournament_duels")
    op.drop_table("tournament_players")
    op.drop_index("ix_tournaments_ends", "tournaments")
    op.drop_table("tournaments")
