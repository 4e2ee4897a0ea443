"""Display names unique in the database: a stored key of each name (NFKC, case-folded) under a unique
index. Names that already share a key keep the oldest account's; each later one gets " 2", " 3", …
(the first free), and its old name is kept in ``renamed_from``.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

MAX_NAME = 40


def _key(name: str) -> str:
    # as patience.server.storage.store.name_key, frozen here as this migration knew it
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def upgrade() -> None:
    op.add_column("users", sa.Column("name_key", sa.String(160), nullable=True))
    op.add_column("users", sa.Column("renamed_from", sa.String(MAX_NAME), nullable=True))
    users = sa.table("users", sa.column("id", sa.String), sa.column("name", sa.String),
                     sa.column("created_ms", sa.BigInteger), sa.column("name_key", sa.String),
                     sa.column("renamed_from", sa.String))
    connection = op.get_bind()
    rows = connection.execute(sa.select(users.c.id, users.c.name).order_by(users.c.created_ms, users.c.id)).all()
    every = {_key(name) for _, name in rows}  # no new name may be one an account already has
    given: set[str] = set()
    for user_id, name in rows:
        key, new = _key(name), None
        if key in given:  # a later account of a name already given: the first free " 2", " 3", …
            number = 2
            while True:
                suffix = f" {number}"
                new = name[:MAX_NAME - len(suffix)].rstrip() + suffix
                key = _key(new)
                if key not in every and key not in given:
                    break
                number += 1
        given.add(key)
        values: dict[str, str] = {"name_key": key}
        if new is not None:
            values.update(name=new, renamed_from=name)
        connection.execute(sa.update(users).where(users.c.id == user_id).values(**values))
    op.create_index("ux_users_name_key", "users", ["name_key"], unique=True)


def downgrade() -> None:
    op.drop_index("ux_users_name_key", table_name="users")
    # ALTER TABLE … DROP COLUMN in place (SQLite ≥ 3.35 too): a copy of the table (batch mode) would drop
    # the old one, and with it, through ON DELETE CASCADE, every row that refers to an account
    op.drop_column("users", "renamed_from")
    op.drop_column("users", "name_key")
