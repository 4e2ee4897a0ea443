"""What moves a rating (docs/fairplay.md): the ledger of every rated match's rating changes and the traces
that link accounts (a digest of the address group or browser each signed up or in with). The matches of
the last 30 days are written to the ledger as they were rated (applied, reason ``rated``): a mark's refunds
read the ledger.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a game's verdict may be "clairvoyant" (play that knew the hidden cards): wider than String(8)
    with op.batch_alter_table("fairplay_games") as batch:
        batch.alter_column("verdict", type_=sa.String(16), existing_type=sa.String(8), existing_nullable=True)
    changes = op.create_table(
        "rating_changes",
        sa.Column("match_id", sa.String(24), primary_key=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("opponent_id", sa.String(24), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.Column("expected", sa.Float(), nullable=False),
        sa.Column("proposed", sa.Float(), nullable=False),
        sa.Column("applied", sa.Float(), nullable=False),
        sa.Column("held", sa.Float(), nullable=False),
        sa.Column("dev_delta", sa.Float(), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_rating_changes_pair", "rating_changes", ["user_id", "opponent_id", "at_ms"])
    op.create_index("ix_rating_changes_opponent", "rating_changes", ["opponent_id", "at_ms"])
    op.create_table(
        "account_traces",
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("kind", sa.String(8), primary_key=True),
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("first_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_account_traces_digest", "account_traces", ["kind", "digest", "last_ms"])
    _backfill(changes)


def _backfill(changes: sa.Table) -> None:
    """The matches of the last 30 days, as they were rated: the change is the rating after the match (its
    history line) less the rating at its start."""
    bind = op.get_bind()
    meta = sa.MetaData()
    matches = sa.Table("matches", meta, autoload_with=bind)
    history = sa.Table("rating_history", meta, autoload_with=bind)
    since = int(time.time() * 1000) - 30 * 86_400_000
    rows = []
    for m in bind.execute(sa.select(matches.c.id, matches.c.game, matches.c.player_a, matches.c.player_b,
                                    matches.c.rating_a, matches.c.rating_b, matches.c.winner, matches.c.ended_ms)
                          .where(matches.c.state == "over", matches.c.ended_ms >= since)).all():
        after = dict(bind.execute(sa.select(history.c.user_id, history.c.rating)
                                  .where(history.c.match_id == m.id)).all())
        for side, (user, other, start) in enumerate(((m.player_a, m.player_b, m.rating_a),
                                                     (m.player_b, m.player_a, m.rating_b))):
            if user not in after or user == other:
                continue
            change = float(after[user]) - float(start.split()[0])
            points = 0.5 if m.winner is None else float(m.winner == side)
            rows.append({"match_id": m.id, "user_id": user, "game": m.game, "opponent_id": other, "points": points,
                         "expected": 0.5, "proposed": change, "applied": change, "held": 0.0, "dev_delta": 0.0,
                         "state": "applied", "reason": "rated", "at_ms": int(m.ended_ms)})
    if rows:
        op.bulk_insert(changes, rows)


def downgrade() -> None:
    with op.batch_alter_table("fairplay_games") as batch:
        batch.alter_column("verdict", type_=sa.String(8), existing_type=sa.String(16), existing_nullable=True)
    op.drop_index("ix_account_traces_digest", table_name="account_traces")
    op.drop_table("account_traces")
    op.drop_index("ix_rating_changes_opponent", table_name="rating_changes")
    op.drop_index("ix_rating_changes_pair", table_name="rating_changes")
    op.drop_table("rating_changes")
