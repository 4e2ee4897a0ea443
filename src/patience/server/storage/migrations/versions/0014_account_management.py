"""Account management: the browser and last use of each session, an optional e-mail address, the names an
account had (for moderators), and the password reset links (only their hashes).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("auth_sessions", sa.Column("browser", sa.String(80), nullable=True))
    op.add_column("auth_sessions", sa.Column("seen_ms", sa.BigInteger(), nullable=True))
    op.add_column("users", sa.Column("email", sa.String(254), nullable=True))
    op.create_table(
        "user_names",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("until_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_user_names_user", "user_names", ["user_id", "until_ms"])
    op.create_table(
        "password_resets",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(24), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("made_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_password_resets_user_id", "password_resets", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_password_resets_user_id", "password_resets")
    op.drop_table("password_resets")
    op.drop_index("ix_user_names_user", "user_names")
    op.drop_table("user_names")
    # plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+): a batch would copy ``users`` into a new table, and
    # dropping the old one would delete every row that refers to it
    op.drop_column("users", "email")
    op.drop_column("auth_sessions", "seen_ms")
    op.drop_column("auth_sessions", "browser")
