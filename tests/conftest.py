"""Fixtures shared by the test modules: a database URL for each backend the app supports, and the
clock the server tests move (``fake_time``; the other shared helpers are in tests/helpers.py).

A test that takes ``database_url`` runs twice, once on an SQLite file of its own and once on
PostgreSQL (127.0.0.1:5432, trust authentication; ``PATIENCE_TEST_POSTGRES`` gives another
server as a URL, e.g. ``postgresql://me:secret@db.example:5433/test``). On PostgreSQL the test
session creates a database of its own and drops it at the end, and every test gets a fresh,
empty schema in it (first on the connection's ``search_path``, so tables, Alembic's version table
and all queries land there): tests never see each other's rows, and nothing this suite did not
create is ever touched. A PostgreSQL of this machine that is down is started; one that cannot
be reached fails the test with the reason, since a skipped backend would hide its bugs.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import URL, make_url

from helpers import FakeTime
from patience.server.storage.store import database_url as checked_url
from patience.server.storage.store import sqlite_url

# --doctest-modules would import this file once more as a module named "conftest", the name
# tests/browser/conftest.py is loaded under too, and stop at the clash; it holds no doctest
collect_ignore = ["conftest.py"]

POSTGRES_ENV = "PATIENCE_TEST_POSTGRES"
POSTGRES_DEFAULT = "postgresql+psycopg://127.0.0.1:5432/test"  # the user is found by trying: postgres, then ours
START_SECONDS = 30.0
_LOCAL = {"127.0.0.1", "localhost", "::1", ""}


def _connect(url: URL, timeout: int = 3) -> psycopg.Connection[Any]:
    return psycopg.connect(host=url.host or None, port=url.port or None, user=url.username, password=url.password,
                           dbname=url.database, connect_timeout=timeout, autocommit=True)


def _admin_url() -> URL:
    """The URL of a database the suite may connect to for creating (and dropping) its own."""
    given = os.environ.get(POSTGRES_ENV)
    url = make_url(checked_url(given or POSTGRES_DEFAULT))
    if given or url.username:
        return url
    users = ["postgres", getpass.getuser()]
    for user in users:
        try:
            _connect(url.set(username=user)).close()
            return url.set(username=user)
        except psycopg.OperationalError as exc:
            if "does not exist" not in str(exc):  # the server is down: starting it is the caller's part
                return url.set(username=users[0])
    return url.set(username=users[0])


def _start_local_postgres() -> str:
    """Start this machine's PostgreSQL clusters named ``main``; return what the commands said."""
    versions = sorted(p.name for p in Path("/etc/postgresql").glob("*") if (p / "main").is_dir())
    if not versions:
        return "no cluster in /etc/postgresql (is PostgreSQL installed?)"
    said = []
    for version in versions:
        command = ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            said.append(f"{' '.join(command)}: {exc}")
            continue
        said.append(f"{' '.join(command)}: exit {done.returncode} {(done.stderr or done.stdout).strip()}")
    return "; ".join(said)


def _is_down(error: str) -> bool:
    """Whether a connection failed because no server listens (rather than, say, a user it does not know)."""
    return any(sign in error for sign in ("Connection refused", "No such file or directory", "starting up",
                                          "shutting down", "timeout expired"))


def _wait_for_postgres(url: URL) -> None:
    """Return once ``url`` accepts connections, starting a local server if needed; else fail the test."""
    shown = url.render_as_string()
    try:
        _connect(url).close()
        return
    except psycopg.OperationalError as exc:
        first = " ".join(str(exc).split())
    if not _is_down(first):
        pytest.fail(f"PostgreSQL at {shown} refuses the connection: {first}", pytrace=False)
    if (url.host or "") not in _LOCAL:
        pytest.fail(f"PostgreSQL at {shown} cannot be reached: {first}", pytrace=False)
    started = _start_local_postgres()
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            _connect(url).close()
            return
        except psycopg.OperationalError as exc:
            last = " ".join(str(exc).split())
        if time.monotonic() > deadline:
            pytest.fail(f"PostgreSQL at {shown} is down and could not be started (first: {first}; "
                        f"start: {started}; last: {last}). Start it, or set {POSTGRES_ENV} to the URL of a "
                        "server where this user may create databases.", pytrace=False)
        time.sleep(0.2)


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[URL]:
    """A PostgreSQL database made for this test session, dropped when the session ends."""
    admin = _admin_url()
    _wait_for_postgres(admin)
    name = f"patience_test_{os.getpid()}_{secrets.token_hex(4)}"
    with _connect(admin) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield admin.set(database=name)
    finally:
        with _connect(admin) as conn:
            # FORCE: a connection some test left open must not keep the database alive
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _fresh_schema(postgres_database: URL) -> Iterator[str]:
    """A fresh, empty schema in the session's database, as a URL whose connections work in it."""
    schema = f"t_{secrets.token_hex(6)}"
    with _connect(postgres_database) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    url = postgres_database.set(query={"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with _connect(postgres_database) as conn:
            # a test whose server still reads its tables (a thread finishing after the app stopped) would
            # make DROP wait or deadlock: leave the schema then, the session's database goes at the end
            # anyway (DROP DATABASE ... WITH (FORCE))
            conn.execute("SET lock_timeout = '10s'")
            with contextlib.suppress(psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected):
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def postgres_url(postgres_database: URL) -> Iterator[str]:
    """A fresh, empty schema in the session's database, as a URL whose connections work in it."""
    yield from _fresh_schema(postgres_database)


@pytest.fixture(scope="module")
def module_postgres_url(postgres_database: URL) -> Iterator[str]:
    """As ``postgres_url``, one schema for the tests of a module together (servers they share)."""
    yield from _fresh_schema(postgres_database)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database of this test alone, on each backend in turn."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "db.sqlite3")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def fake_time() -> FakeTime:
    """The server's clocks, moved by the test (see tests/helpers.py)."""
    return FakeTime()


# -- Redis -----------------------------------------------------------------------------------------

REDIS_ENV = "PATIENCE_TEST_REDIS_URL"
REDIS_START = ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379", "--save", "",
               "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log"]


def _redis_answers(url: str) -> str | None:
    """None if the Redis server at ``url`` answers a PING, else what went wrong."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        client.ping()
        return None
    except redis.RedisError as exc:
        return " ".join(str(exc).split())
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_server() -> str:
    """The URL of a Redis server that answers: this machine's, started if it is down (never a skip)."""
    url = os.environ.get(REDIS_ENV, "redis://127.0.0.1:6379/0")
    first = _redis_answers(url)
    if first is None:
        return url
    if not url.startswith(("redis://127.0.0.1", "redis://localhost")):
        pytest.fail(f"Redis at {url} cannot be reached: {first}", pytrace=False)
    Path("/var/lib/redis").mkdir(parents=True, exist_ok=True)
    Path("/var/log/redis").mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(REDIS_START, capture_output=True, text=True, timeout=30, check=False)
        started = f"exit {done.returncode} {(done.stderr or done.stdout).strip()}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        started = str(exc)
    deadline = time.monotonic() + START_SECONDS
    while (last := _redis_answers(url)) is not None:
        if time.monotonic() > deadline:
            pytest.fail(f"Redis at {url} is down and could not be started (first: {first}; start: {started}; "
                        f"last: {last}). Start it, or set {REDIS_ENV}.", pytrace=False)
        time.sleep(0.2)
    return url


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The Redis server's URL; each test keeps its keys apart with a prefix of its own (see ``bus_prefix``)."""
    return redis_server


@pytest.fixture
def bus_prefix() -> str:
    return f"test-{secrets.token_hex(4)}:"


# -- order -----------------------------------------------------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The test files with a test marked ``slow`` first, each file's tests together and in their order:
    under pytest-xdist (``--dist loadfile``) a worker takes a whole file at a time, so the long files start
    at once and the short ones fill the workers' ends, rather than a long file left to run alone last. A
    test that takes more than a few seconds is marked ``slow`` for this too."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
