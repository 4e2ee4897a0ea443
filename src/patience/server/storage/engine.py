"""The database's engine set up from its URL: the URLs accepted and how they are spelled for the driver
(:func:`database_url`, :func:`sqlite_url`, :func:`safe_url` to print one), the engine itself
(:func:`make_engine`: SQLite in WAL mode with its file private, or a pool of PostgreSQL connections), the
migrations' configuration (:func:`alembic_config`, :func:`migrations_head`) and the lock that keeps a
second arena off a database (:class:`ArenaLock`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import (
    create_engine,
    event,
)
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from patience.errors import PatienceError

__all__ = ["MIGRATIONS", "MIGRATION_LOCK", "POOL_OVERFLOW", "POOL_SIZE", "PRIVATE_FILE", "ArenaLock", "StoreError",
           "alembic_config", "database_url", "driver_reason", "make_engine", "migrations_head", "safe_url",
           "sqlite_url"]

MIGRATIONS = Path(__file__).with_name("migrations")
MIGRATION_LOCK = 0x70617468  # PostgreSQL advisory lock held while the schema is upgraded


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser().resolve()}"


_REVISION = re.compile(r"^revision(?:\s*:[^=]*)?\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN = re.compile(r"^down_revision(?:\s*:[^=]*)?\s*=\s*(.+)$", re.M)


@functools.cache
def migrations_head() -> str | None:
    """The newest migration's revision, read from the migration files as text (Alembic, which imports
    them, is loaded only when there is something to upgrade); None unless there is exactly one head."""
    revisions: set[str] = set()
    below: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN.search(text)
        if revision is None or down is None:
            return None
        revisions.add(revision.group(1))
        below.update(re.findall(r"['\"]([^'\"]+)['\"]", down.group(1)))
    heads = revisions - below
    return heads.pop() if len(heads) == 1 else None


def alembic_config(url: str) -> Any:
    """An Alembic configuration for ``url`` with this package's migrations."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", database_url(url).replace("%", "%%"))
    return config


class StoreError(PatienceError):
    """A database URL that cannot be used, or a database that cannot be reached."""


class Database(Protocol):
    """A database as :class:`ArenaLock` sees it (a :class:`patience.server.storage.store.Store`)."""

    url: str
    engine: Engine


class ArenaLock:
    """Keeps a second arena off a database: one process without a shared bus holds it.

    Two processes that do not share a bus (``--redis-url``) would each think they own every live
    match of the database and write its log twice, so the second one is refused: on SQLite by an
    exclusive lock on ``FILE.lock`` beside the database file, on PostgreSQL by a session advisory
    lock held on a connection of its own. Both go when the process does, however it ends. ``FILE.lock``
    names the process that holds it (``PID``, or ``PID backup admin`` when it answers ``patience backup``
    and ``patience admin``, see :meth:`offer_backups`)."""

    KEY = 0x70617469  # the advisory lock's number on PostgreSQL

    def __init__(self, store: Database) -> None:
        self.store = store
        self._file: Any = None
        self._connection: Any = None

    def acquire(self) -> None:
        """Hold the lock, or raise :class:`StoreError` saying who has it and what to do."""
        url = make_url(self.store.url)
        held = ("another patience serve uses the database {where}: stop it, or let both share one arena "
                "with --redis-url (and PostgreSQL)")
        if url.get_backend_name() == "sqlite":
            if not url.database or url.database == ":memory:":
                return
            import fcntl

            path = Path(url.database + ".lock")
            try:  # readable by its owner alone, as the database is (PRIVATE_FILE)
                self._file = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, PRIVATE_FILE), "a+")
            except OSError as exc:  # no such folder, or one that cannot be written
                raise StoreError(f"cannot reach the database {url.database}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._file.close()
                self._file = None
                raise StoreError(held.format(where=url.database)) from None
            self._say("")
            return
        self._connection = self.store.engine.connect()
        got = self._connection.exec_driver_sql(f"SELECT pg_try_advisory_lock({self.KEY})").scalar()
        self._connection.commit()
        if not got:
            self._connection.close()
            self._connection = None
            raise StoreError(held.format(where=safe_url(self.store.url)))

    def offer_backups(self, offered: bool) -> None:
        """Say in ``FILE.lock`` whether this process answers ``patience backup``'s SIGUSR1 (see
        :mod:`patience.server.storage.backups`): a process that does not would be ended by it."""
        if self._file is not None:
            self._say(" backup admin" if offered else "")

    def _say(self, what: str) -> None:
        """``FILE.lock`` holds the holder's process id (and `` backup`` when it makes copies)."""
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"{os.getpid()}{what}\n")
        self._file.flush()

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._connection is not None:
            try:
                self._connection.exec_driver_sql(f"SELECT pg_advisory_unlock({self.KEY})")
                self._connection.commit()
            finally:
                self._connection.invalidate()  # the session ends, and with it any lock it held
                self._connection.close()
                self._connection = None


def database_url(url: str) -> str:
    """``url`` checked and spelled for this store's engine, or :class:`StoreError` saying what is wrong.

    Only SQLite and PostgreSQL are supported. PostgreSQL goes through psycopg 3, which is
    installed with the package: ``postgresql://`` and ``postgres://`` mean
    ``postgresql+psycopg://``, and so does ``postgresql+asyncpg://`` (the store is synchronous,
    run in worker threads, and psycopg 3 reaches the same servers; asyncpg's ``ssl=`` becomes
    libpq's ``sslmode=``).

    >>> database_url("postgres://arena:secret@db.example/arena")
    'postgresql+psycopg://arena:secret@db.example/arena'
    >>> database_url("postgresql+asyncpg://db.example/arena?ssl=require")
    'postgresql+psycopg://db.example/arena?sslmode=require'
    >>> database_url("sqlite:////var/lib/patience/patience.sqlite3")
    'sqlite:////var/lib/patience/patience.sqlite3'
    >>> database_url("mysql://db.example/arena")
    Traceback (most recent call last):
    ...
    patience.server.storage.engine.StoreError: unsupported database mysql://db.example/arena: use sqlite:///FILE or ...
    """
    text = url.strip()
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://"):]
    try:
        parsed = make_url(text)
    except ArgumentError:
        raise StoreError(f"not a database URL: {_shown(text)} (expected e.g. sqlite:///FILE or "
                         "postgresql+psycopg://user@host/dbname)") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported database {safe_url(text)}: use sqlite:///FILE or postgresql+psycopg://...")
    if backend == "postgresql" and driver in ("", "asyncpg"):
        query = dict(parsed.query)
        if driver == "asyncpg" and "ssl" in query and "sslmode" not in query:
            query["sslmode"] = query.pop("ssl")
        return parsed.set(drivername="postgresql+psycopg", query=query).render_as_string(hide_password=False)
    return text


def safe_url(url: str | URL) -> str:
    """``url`` fit to print: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return _shown(str(url))


def _shown(text: str) -> str:
    # a string that is not a URL may still hold a password: show only its start
    return repr(text if len(text) <= 12 else text[:12] + "...")


def driver_reason(exc: BaseException) -> str:
    """The first line of what the database driver said, without SQLAlchemy's wrapping."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


POOL_SIZE = 10
"""Connections a process keeps open to a database server (PostgreSQL). Under a burst the worker
threads wait for one of them rather than each opening a connection of its own and closing it after
one query: a new PostgreSQL connection is a new backend process, costlier than the query. With
:data:`POOL_OVERFLOW` a process uses at most 12 connections: 8 processes stay within PostgreSQL's
default ``max_connections`` of 100 (docs/deploy.md)."""
POOL_OVERFLOW = 2


def make_engine(url: str, *, sole: bool = False) -> Engine:
    """The engine for a URL that :func:`database_url` has checked (SQLite gets WAL and foreign keys).

    With ``sole`` (one process owns the database: ``patience serve`` without a shared arena), an SQLite
    file is opened through SQLite's ``unix-excl`` VFS: the process holds an exclusive lock on the file
    (its own connections share it) and keeps the write-ahead log's index in its memory rather than in
    a ``-shm`` file mapped into memory, which anyone who can write the folder could cut short or make
    read-only and so kill the server with SIGBUS."""
    parsed = make_url(url)
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = _sqlite_engine(url, parsed.database in (None, "", ":memory:"), sole=sole)
        else:
            connect_args = {} if "connect_timeout" in parsed.query else {"connect_timeout": 10}
            return create_engine(url, pool_pre_ping=True, connect_args=connect_args, pool_size=POOL_SIZE,
                                 max_overflow=POOL_OVERFLOW, pool_timeout=30)
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(f"no driver for {safe_url(parsed)}: {exc}") from exc
    except (ArgumentError, TypeError) as exc:
        raise StoreError(f"cannot use the database URL {safe_url(parsed)}: {exc}") from exc
    return engine


SQLITE_READONLY = 8  # SQLite's primary result code of "attempt to write a readonly database"
PRIVATE_FILE = 0o600  # an SQLite file the store makes: its owner alone reads it (it holds secret deal keys)


def _private_file(url: str) -> None:
    """Make the SQLite file of ``url`` empty with mode 0600 when it does not exist yet (an empty file is an
    empty database), so that SQLite, which makes a new file readable by everyone (0644 less the umask),
    never does: the secret deal keys of the duels and the days to come are kept in it, and its
    write-ahead log (``-wal``, ``-shm``) gets the file's mode from SQLite. A file that exists keeps its
    mode; a folder that is missing or cannot be written is left to SQLite to report."""
    database = make_url(url).database
    if not database or database.startswith("file:"):
        return
    with contextlib.suppress(OSError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def _sqlite_engine(url: str, in_memory: bool, *, sole: bool = False) -> Engine:
    if not in_memory:
        _private_file(url)
    if in_memory:
        # one shared connection, or every thread would see its own empty database
        engine = create_engine(url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
    elif sole and os.name == "posix":
        import sqlite3

        target = f"file:{urllib.parse.quote(str(Path(make_url(url).database or '').resolve()))}?vfs=unix-excl"
        engine = create_engine(url, creator=lambda: sqlite3.connect(target, uri=True, check_same_thread=False,
                                                                    timeout=30))
    else:
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; a crash may lose the last commit only
        # no checkpoint inside a commit (it writes the database file and waits for the disk): a server runs
        # them beside the commits (Store.checkpoint); a short-lived command's last connection does one as it closes
        cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "handle_error")
    def _read_only_connection(context: Any) -> None:
        # a connection SQLite opened while the file could not be written stays read-only for its life, even
        # once the file takes writes again: such an answer ends the pool's connections, as a lost server's
        # would, so the next write opens the file anew
        code = getattr(context.original_exception, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == SQLITE_READONLY:
            context.is_disconnect = True

    return engine
