"""Roles of accounts (moderator, admin), granted and revoked with ``patience admin``.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_roles",
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("role", sa.String(16), primary_key=True),
        sa.Column("granted_ms", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("user_roles")
