"""Secret duel deals: a match's deal is a 256-bit key (64 hex digits, where a game number was), a
match says whether its deal was proved winnable, and the private stock of proved-winnable keys.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.alter_column("seed", existing_type=sa.String(20), type_=sa.String(64), existing_nullable=False)
        batch.add_column(sa.Column("proved", sa.Boolean, nullable=True))
    op.create_table(
        "deal_stock",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("variant", sa.String(40), nullable=False),
        sa.Column("deal", sa.String(64), nullable=False, unique=True),
        sa.Column("nodes", sa.BigInteger, nullable=False),
        sa.Column("made_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_deal_stock_variant", "deal_stock", ["variant", "id"])


def downgrade() -> None:
    op.drop_index("ix_deal_stock_variant", table_name="deal_stock")
    op.drop_table("deal_stock")
    # a key does not fit the old column: matches dealt from keys go with the downgrade
    matches = sa.table("matches", sa.column("seed", sa.String))
    op.execute(sa.delete(matches).where(sa.func.length(matches.c.seed) > 20))
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("proved")
        batch.alter_column("seed", existing_type=sa.String(64), type_=sa.String(20), existing_nullable=False)
