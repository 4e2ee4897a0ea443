"""Accounts, their sessions and browsers, ratings, duels and the append-only move log of duels.

Revision ID: 0002
Revises: 0001
Create Date: 2024-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _user(column: str, *, primary_key: bool = False) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(column, sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False,
                     primary_key=primary_key)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(24), primary_key=True),
        sa.Column("login", sa.String(32), nullable=False, unique=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "auth_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        _user("user_id"),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_auth_sessions_user_id", "auth_sessions", ["user_id"])
    op.create_table(
        "user_browsers",
        sa.Column("browser_id", sa.String(40), primary_key=True),
        _user("user_id"),
        sa.Column("linked_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_user_browsers_user_id", "user_browsers", ["user_id"])
    op.create_table(
        "app_secrets",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )
    op.create_table(
        "ratings",
        _user("user_id", primary_key=True),
        sa.Column("game", sa.String(16), primary_key=True),
        sa.Column("rating", sa.Float, nullable=False),
        sa.Column("deviation", sa.Float, nullable=False),
        sa.Column("volatility", sa.Float, nullable=False),
        sa.Column("matches", sa.Integer, nullable=False),
        sa.Column("updated_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_ratings_game_rating", "ratings", ["game", "rating"])
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _user("user_id"),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("match_id", sa.String(24), nullable=False),
        sa.Column("rating", sa.Float, nullable=False),
        sa.Column("deviation", sa.Float, nullable=False),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_rating_history_user_game", "rating_history", ["user_id", "game", "id"])
    op.create_table(
        "matches",
        sa.Column("id", sa.String(24), primary_key=True),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("limit_s", sa.Integer, nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("seed", sa.String(20), nullable=False),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        _user("player_a"),
        _user("player_b"),
        sa.Column("rating_a", sa.String(80), nullable=False),
        sa.Column("rating_b", sa.String(80), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("ended_ms", sa.BigInteger, nullable=True),
        sa.Column("winner", sa.Integer, nullable=True),
        sa.Column("score_a", sa.Integer, nullable=True),
        sa.Column("score_b", sa.Integer, nullable=True),
        sa.Column("final_a", sa.Integer, nullable=True),
        sa.Column("final_b", sa.Integer, nullable=True),
        sa.Column("record", sa.Text, nullable=True),
    )
    op.create_index("ix_matches_state", "matches", ["state"])
    op.create_index("ix_matches_player_a", "matches", ["player_a", "created_ms"])
    op.create_index("ix_matches_player_b", "matches", ["player_b", "created_ms"])
    op.create_table(
        "match_moves",
        sa.Column("match_id", sa.String(24), sa.ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("side", sa.Integer, nullable=True),
        sa.Column("action", sa.String(24), nullable=True),
        sa.Column("t_ms", sa.BigInteger, nullable=False),
        sa.Column("cid", sa.String(40), nullable=True),
        sa.Column("ack", sa.BigInteger, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("match_moves")
    for index in ("ix_matches_player_b", "ix_matches_player_a", "ix_matches_state"):
        op.drop_index(index, table_name="matches")
    op.drop_table("matches")
    op.drop_index("ix_rating_history_user_game", table_name="rating_history")
    op.drop_table("rating_history")
    op.drop_index("ix_ratings_game_rating", table_name="ratings")
    op.drop_table("ratings")
    op.drop_table("app_secrets")
    op.drop_index("ix_user_browsers_user_id", table_name="user_browsers")
    op.drop_table("user_browsers")
    op.drop_index("ix_auth_sessions_user_id", table_name="auth_sessions")
    op.drop_table("auth_sessions")
    op.drop_table("users")
