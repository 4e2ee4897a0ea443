"""Play now: same-deal matches played apart (a host's game waiting for a challenger), and finished
matches that were played apart.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "apart_matches",
        sa.Column("id", sa.String(24), primary_key=True),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("deal", sa.String(64), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("proved", sa.Boolean(), nullable=False),
        sa.Column("host_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("host_game", sa.String(40), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False,
                  unique=True),
        sa.Column("host_net", sa.String(64), nullable=False),
        sa.Column("host_rating", sa.Float(), nullable=False),
        sa.Column("challenger_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE")),
        sa.Column("challenger_game", sa.String(40), sa.ForeignKey("games.id", ondelete="CASCADE"), unique=True),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("made_ms", sa.BigInteger(), nullable=False),
        sa.Column("taken_ms", sa.BigInteger()),
        sa.Column("ended_ms", sa.BigInteger()),
        sa.Column("host_seen", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("challenger_seen", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_apart_open", "apart_matches", ["format", "state", "host_rating"])
    op.create_index("ix_apart_host", "apart_matches", ["host_id", "state"])
    op.create_index("ix_apart_challenger", "apart_matches", ["challenger_id", "state"])
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("apart", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("apart")
    op.drop_index("ix_apart_challenger", "apart_matches")
    op.drop_index("ix_apart_host", "apart_matches")
    op.drop_index("ix_apart_open", "apart_matches")
    op.drop_table("apart_matches")
