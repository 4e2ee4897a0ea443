"""Alembic environment of the app's database (run by Store.migrate, or by the Alembic commands)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from patience.server.store import metadata


def run() -> None:
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite://")
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


# Alembic runs this file inside a migration; merely importing it (as test collection does) does nothing.
if getattr(context, "_proxy", None) is not None:
    run()
