"""Hints asked for in a solo game: the statistics count a game won with a hint apart.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # older games knew nothing of hints: they count as played without one
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("hints", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("hints")
