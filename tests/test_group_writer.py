"""The group writer keeps a connection of its own between batches, and a connection that broke (the
database closed it, a batch failed on it) is let go: the next batch opens another. On SQLite and on
PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event, func, insert, select, text

import patience.server.storage.writer as writer_module
from helpers import run_async
from patience.server.storage.store import SigninFailureRow, Store
from patience.server.storage.writer import GroupWriter


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    store = Store(database_url)
    store.migrate()
    try:
        yield store
    finally:
        store.close()


def _row(n: int) -> Callable[[Any], None]:
    return lambda connection: connection.execute(insert(SigninFailureRow), [{"key_hash": f"k{n}", "at_ms": n}])


def _rows(store: Store) -> int:
    with store.engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(SigninFailureRow)) or 0)


def _checkouts(store: Store) -> list[int]:
    taken: list[int] = []
    event.listen(store.engine, "checkout", lambda *_: taken.append(1))
    return taken


def test_batches_share_the_writers_connection(store: Store) -> None:
    writer = GroupWriter(store)
    taken = _checkouts(store)

    async def main() -> None:
        for n in range(20):
            await writer.write(before=[_row(n)])

    run_async(main)
    writer.close()
    assert len(taken) == 1  # one connection for twenty transactions, not one taken from the pool for each
    assert _rows(store) == 20


def test_a_failed_batch_lets_its_connection_go_and_the_next_batch_goes_through(store: Store) -> None:
    writer = GroupWriter(store)
    taken = _checkouts(store)

    def broken(connection: Any) -> None:
        connection.execute(text("INSERT INTO no_such_table VALUES (1)"))

    async def main() -> None:
        await writer.write(before=[_row(1)])
        with pytest.raises(Exception, match="no_such_table"):
            await writer.write(before=[_row(2), broken])
        await writer.write(before=[_row(3)])

    run_async(main)
    writer.close()
    assert len(taken) == 2  # the failed batch's connection was let go, the next batch took another
    assert _rows(store) == 2  # the failed batch wrote nothing


def _kill_backend(store: Store, writer: GroupWriter) -> None:
    """End the writer's connection from the database's side, as a restart or an idle time-out would."""
    assert writer._held is not None
    pid = writer._held.connection.dbapi_connection.info.backend_pid  # type: ignore[union-attr]
    with store.engine.connect() as other:
        assert other.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_connection_the_database_closed_while_idle_is_replaced_before_the_batch(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer_module, "PING_IDLE_SECONDS", 0.0)  # every batch finds its connection idle
    writer = GroupWriter(store)

    async def main() -> None:
        await writer.write(before=[_row(1)])
        _kill_backend(store, writer)
        await writer.write(before=[_row(2)])  # the ping finds it closed: a new connection, no error

    run_async(main)
    writer.close()
    assert _rows(store) == 2


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_connection_closed_between_two_busy_batches_fails_one_batch_only(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer_module, "PING_IDLE_SECONDS", 3600.0)  # busy: no ping between batches
    writer = GroupWriter(store)

    async def main() -> None:
        await writer.write(before=[_row(1)])
        _kill_backend(store, writer)
        with pytest.raises(Exception):  # noqa: B017 - whatever the driver says of a closed connection
            await writer.write(before=[_row(2)])  # refused (its moves are not acknowledged)
        await writer.write(before=[_row(3)])  # and the writer goes on with a new connection

    run_async(main)
    writer.close()
    assert _rows(store) == 2
