"""Alembic environment of the app's database (run by Store.migrate, or by the Alembic commands)."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from patience.server.storage.engine import database_url, make_engine
from patience.server.storage.schema import metadata


def _migrate(connection: Connection) -> None:
    # batch mode lets SQLite alter tables by copying them; PostgreSQL gets plain ALTER statements
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def run() -> None:
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    # the Alembic command line: the URL of alembic_config(), the same engine set-up as the app's
    engine = make_engine(database_url(config.get_main_option("sqlalchemy.url") or "sqlite://"))
    try:
        with engine.begin() as conn:
            _migrate(conn)
    finally:
        engine.dispose()


# Alembic runs this file inside a migration; merely importing it (as test collection does) does nothing.
if getattr(context, "_proxy", None) is not None:
    run()
