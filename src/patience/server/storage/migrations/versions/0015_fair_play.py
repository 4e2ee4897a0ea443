"""Fair play: the evidence of every rated game and its analysis, the accounts flagged or marked, reports,
the moderators' audit log and the rating points given back (docs/fairplay.md).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def _user(name: str = "user_id") -> sa.Column:
    return sa.Column(name, sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "fairplay_games",
        sa.Column("key", sa.String(64), primary_key=True),
        _user(),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("match_id", sa.String(24)),
        sa.Column("game_id", sa.String(40)),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("steps", sa.Text(), nullable=False),
        sa.Column("record", sa.Text()),
        sa.Column("figures", sa.Text()),
        sa.Column("verdict", sa.String(8)),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("analysed_ms", sa.BigInteger()),
    )
    op.create_index("ix_fairplay_games_user", "fairplay_games", ["user_id", "at_ms"])
    op.create_index("ix_fairplay_games_pending", "fairplay_games", ["analysed_ms"])
    op.create_table(
        "fairplay_accounts",
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("category", sa.String(8)),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=False),
        sa.Column("note", sa.Text()),
        sa.Column("by_id", sa.String(24)),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("since_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_fairplay_accounts_state", "fairplay_accounts", ["state", "score"])
    op.create_table(
        "fairplay_reports",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _user("reporter_id"),
        _user(),
        sa.Column("category", sa.String(8), nullable=False),
        sa.Column("note", sa.Text()),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_fairplay_reports_user", "fairplay_reports", ["user_id", "at_ms"])
    op.create_table(
        "fairplay_audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _user(),
        sa.Column("by_id", sa.String(24)),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_fairplay_audit_user", "fairplay_audit", ["user_id", "id"])
    op.create_table(
        "rating_refunds",
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("match_id", sa.String(24), primary_key=True),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("from_id", sa.String(24), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rating_refunds")
    op.drop_index("ix_fairplay_audit_user", "fairplay_audit")
    op.drop_table("fairplay_audit")
    op.drop_index("ix_fairplay_reports_user", "fairplay_reports")
    op.drop_table("fairplay_reports")
    op.drop_index("ix_fairplay_accounts_state", "fairplay_accounts")
    op.drop_table("fairplay_accounts")
    op.drop_index("ix_fairplay_games_pending", "fairplay_games")
    op.drop_index("ix_fairplay_games_user", "fairplay_games")
    op.drop_table("fairplay_games")
