"""A closed account's login name stays reserved for a while (roles.ClosedLoginRow, docs/accounts.md).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "closed_logins",
        sa.Column("login", sa.String(32), primary_key=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("closed_ms", sa.BigInteger(), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
    )
    op.create_index("ix_closed_logins_user", "closed_logins", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_closed_logins_user", table_name="closed_logins")
    op.drop_table("closed_logins")
