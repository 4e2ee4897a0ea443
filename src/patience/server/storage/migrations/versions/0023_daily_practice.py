"""A day's attempt is marked a practice deal (``daily_attempts.practice``) when its account did not meet the
board's entry rule, or was marked, when it began: it was dealt a deal of its own, never the day's, and it has
no place on any board (docs/fairplay.md, *Scouted deals of the day*). Attempts begun before are the day's.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("daily_attempts") as batch:
        batch.add_column(sa.Column("practice", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("daily_attempts") as batch:
        batch.drop_column("practice")
