"""Open challenge links and failed sign-ins, kept so that a restart forgets neither; how each game
of a match ended; an index for the match history (finished matches, newest first).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "challenges",
        sa.Column("code", sa.String(24), primary_key=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False,
                  unique=True),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "signin_failures",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_signin_failures_key_at", "signin_failures", ["key_hash", "at_ms"])
    op.create_index("ix_signin_failures_at", "signin_failures", ["at_ms"])
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("outcome_a", sa.String(16), nullable=True))
        batch.add_column(sa.Column("outcome_b", sa.String(16), nullable=True))
    op.create_index("ix_matches_state_ended", "matches", ["state", "ended_ms"])
    # matches that ended before: their outcomes are in their records
    matches = sa.table("matches", sa.column("id", sa.String), sa.column("record", sa.Text),
                       sa.column("outcome_a", sa.String), sa.column("outcome_b", sa.String))
    connection = op.get_bind()
    for match_id, text in connection.execute(sa.select(matches.c.id, matches.c.record)
                                             .where(matches.c.record.is_not(None))).all():
        games = json.loads(text).get("games") or []
        outcomes = [((game.get("end") or {}).get("outcome") if isinstance(game, dict) else None) for game in games]
        if len(outcomes) == 2:
            connection.execute(sa.update(matches).where(matches.c.id == match_id)
                               .values(outcome_a=outcomes[0], outcome_b=outcomes[1]))


def downgrade() -> None:
    op.drop_index("ix_matches_state_ended", table_name="matches")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("outcome_b")
        batch.drop_column("outcome_a")
    op.drop_index("ix_signin_failures_at", table_name="signin_failures")
    op.drop_index("ix_signin_failures_key_at", table_name="signin_failures")
    op.drop_table("signin_failures")
    op.drop_table("challenges")
