"""Game analyses: the shared queue of analysis jobs and their stored results (storage.analysis.AnalysisRow).

Revision ID: 0020
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analysis_jobs",
        sa.Column("key", sa.String(80), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("ref", sa.String(64), nullable=False),
        sa.Column("side", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("stage", sa.String(8), nullable=True),
        sa.Column("results", sa.Text(), nullable=True),
        sa.Column("cpu_s", sa.Float(), nullable=False),
        sa.Column("requested_by", sa.String(40), nullable=True),
        sa.Column("requested_ms", sa.BigInteger(), nullable=False),
        sa.Column("worker", sa.String(80), nullable=True),
        sa.Column("lease_ms", sa.BigInteger(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("started_ms", sa.BigInteger(), nullable=True),
        sa.Column("finished_ms", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.String(200), nullable=True),
    )
    op.create_index("ix_analysis_jobs_queue", "analysis_jobs", ["status", "requested_ms"])
    op.create_index("ix_analysis_jobs_asker", "analysis_jobs", ["requested_by", "requested_ms"])


def downgrade() -> None:
    op.drop_index("ix_analysis_jobs_asker", table_name="analysis_jobs")
    op.drop_index("ix_analysis_jobs_queue", table_name="analysis_jobs")
    op.drop_table("analysis_jobs")
