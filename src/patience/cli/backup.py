"""``patience backup DEST`` and ``patience restore SRC``: a copy of the site's database, and back again.

The database is that of ``patience serve``: ``--data-dir`` (its SQLite file), else ``--database-url``,
else ``$PATIENCE_DATABASE_URL``, else the SQLite file in the per-user data folder.

- SQLite: the copy is made with SQLite's online backup API (one read transaction: a consistent copy
  even while processes of a shared arena write), written 0600 as one self-contained file (no
  write-ahead log beside it), then checked (``PRAGMA integrity_check``, its Alembic revision). A
  ``patience serve`` without ``--redis-url`` holds its file for itself (SQLite's ``unix-excl``): no other
  process can read it while it runs, so the server makes the copy itself, asked by a request file and
  SIGUSR1 (:mod:`patience.server.storage.backups`), its games going on meanwhile; the copy is then
  checked here as any other.
- PostgreSQL: ``pg_dump --format=custom`` and ``pg_restore`` (libpq's own clients), given the URL's
  connection parameters (the password in ``$PGPASSWORD``, never on a command line or printed).

A restore goes only into a database that holds no accounts and no games yet (``--force`` replaces
one that does), never while a server holds it; it brings in the backup's rows only, into a schema
the migrations made (a file with a trigger, view, table or index of its own, or a value of the wrong
type, is refused: :mod:`patience.server.storage.restore`), and migrates them to the current schema.
A backup holds everything the server keeps: password hashes, session keys and the secret deal keys.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from patience.errors import BadInputError

__all__ = ["MAIN_TABLES", "register"]

MAIN_TABLES = ("users", "games", "matches", "ratings")
SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"
SERVER_WAIT = 120.0  # seconds a running server has to make its copy


class _Held(BadInputError):
    """A ``patience serve`` holds the database for itself."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    b = sub.add_parser("backup", help="copy the site's database to a file (SQLite: online backup; "
                                      "PostgreSQL: pg_dump)")
    b.add_argument("dest", type=Path, metavar="DEST", help="the backup file to make (readable by you alone)")
    _database_arguments(b)
    b.add_argument("--force", action="store_true", help="replace DEST if it exists")
    b.set_defaults(func=cmd_backup)
    r = sub.add_parser("restore", help="bring a backup into an empty database, then migrate it")
    r.add_argument("src", type=Path, metavar="SRC", help="a file made by patience backup")
    _database_arguments(r)
    r.add_argument("--force", action="store_true",
                   help="replace a database that already holds accounts or games (they are lost)")
    r.set_defaults(func=cmd_restore)


def _database_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--data-dir", type=Path, default=None,
                       help="folder of the database file, as for patience serve (wins over $PATIENCE_DATABASE_URL)")
    where.add_argument("--database-url", default=None, metavar="URL",
                       help="the database, as for patience serve (default: $PATIENCE_DATABASE_URL if set, "
                            "else the SQLite file in the per-user data folder)")


def _url(args: argparse.Namespace) -> tuple[str, Path | None, bool]:
    """The checked database URL; for SQLite its file, and whether that is the file of a data folder."""
    from sqlalchemy.engine import make_url

    from patience.cli.serve import DATABASE_URL_ENV
    from patience.server.app import DB_FILE, default_data_dir
    from patience.server.storage.store import database_url, sqlite_url

    url = None if args.data_dir is not None else (args.database_url or os.environ.get(DATABASE_URL_ENV) or None)
    if url is None:
        path = Path(args.data_dir if args.data_dir is not None else default_data_dir()).expanduser().resolve() / DB_FILE
        return sqlite_url(path), path, True
    url = database_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:" or parsed.database.startswith("file:"):
            raise BadInputError("an SQLite database to back up or restore is a file: sqlite:///FILE")
        return url, Path(parsed.database).expanduser().resolve(), False
    return url, None, False


# -- backup ----------------------------------------------------------------------------------------

def cmd_backup(args: argparse.Namespace) -> int:
    url, path, _ = _url(args)
    dest = Path(args.dest).expanduser()
    if dest.is_dir():
        raise BadInputError(f"{dest} is a folder: name the backup file to make")
    if dest.exists() and not args.force:
        raise BadInputError(f"{dest} exists: name a new file, or pass --force to replace it")
    if not dest.parent.is_dir():
        raise BadInputError(f"no folder {dest.parent} to make {dest.name} in")
    if path is not None:
        _sqlite_backup(url, path, dest)
    else:
        _postgres_backup(url, dest)
    return 0


def _file_head(path: Path, what: str, not_a_folder: str) -> bytes:
    """The first bytes of file ``path`` (enough to tell an SQLite file from a pg_dump), or
    :class:`BadInputError` when it is missing, a folder or cannot be read."""
    from patience.record import read_regular_file

    if not path.exists():
        raise BadInputError(f"no {what} at {path}")
    if path.is_dir():
        raise BadInputError(f"{path} is a folder, not {not_a_folder}")
    try:
        with read_regular_file(path, BadInputError) as f:  # a FIFO or a device: refused at once
            return f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _sqlite_file(path: Path, what: str) -> None:
    """``path`` is an SQLite file, or :class:`BadInputError`."""
    head = _file_head(path, what, "an SQLite database")
    if head != SQLITE_MAGIC:
        kind = "a PostgreSQL dump (pg_dump)" if head.startswith(PGDUMP_MAGIC) else "not an SQLite database"
        raise BadInputError(f"{path} is {kind}" + (": restore it with --database-url postgresql://..."
                                                   if kind.startswith("a Post") else ""))


@contextlib.contextmanager
def _arena_free(url: str, refused: str) -> Iterator[None]:
    """Hold the database's arena lock (``patience serve``'s :class:`ArenaLock`) meanwhile, so that no server
    without a shared bus runs on it; ``refused`` is the message when one does."""
    from patience.server.storage.store import ArenaLock, Store, StoreError

    store = Store(url)
    lock = ArenaLock(store)
    try:
        try:
            lock.acquire()
        except StoreError as exc:
            if "another patience serve" in str(exc):
                raise _Held(refused) from None
            raise
        yield
    finally:
        lock.release()
        store.close()


def _open(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), timeout=30, isolation_level=None)


def _sqlite_report(conn: sqlite3.Connection, where: Path) -> tuple[str, dict[str, int]]:
    """Check a copy: its integrity, its Alembic revision; return that and the main tables' row counts."""
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
        if problems != ["ok"]:
            raise BadInputError(f"{where} fails SQLite's integrity check: {problems[0]}")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "alembic_version" not in tables:
            raise BadInputError(f"{where} is an SQLite database, but not one of Patience Arena (no alembic_version)")
        revisions = [row[0] for row in conn.execute("SELECT version_num FROM alembic_version")]
        if len(revisions) != 1:
            raise BadInputError(f"{where} has no readable schema revision "
                                f"(alembic_version holds {len(revisions)} rows)")
        counts = {t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in MAIN_TABLES if t in tables}
    except sqlite3.DatabaseError as exc:
        raise BadInputError(f"{where} cannot be read as an SQLite database: {exc}") from None
    return str(revisions[0]), counts


def _shown_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{table} {count}" for table, count in counts.items()) or "no table"


def _sqlite_backup(url: str, path: Path, dest: Path) -> None:
    _sqlite_file(path, "database")
    try:
        with _arena_free(url, f"a patience serve holds {path}"):
            revision, counts = _sqlite_copy(path, dest)
        how = ""
    except _Held:  # a server of its own: it makes the copy
        revision, counts, how = _copy_by_server(path, dest)
    print(f"backed up {path} to {dest} ({dest.stat().st_size:,} bytes, schema {revision}){how}")
    print(f"rows: {_shown_counts(counts)}")


def _sqlite_copy(path: Path, dest: Path) -> tuple[str, dict[str, int]]:
    """Copy the SQLite file ``path`` into ``dest`` (no server holds it); its revision and row counts."""
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)  # 0600
    os.close(fd)
    partial = Path(name)
    try:
        source = _open(path)
        try:
            copy = _open(partial)
            try:
                source.backup(copy)  # all pages in one step: one read transaction, a consistent copy
                copy.execute("PRAGMA journal_mode=DELETE")  # one file, no write-ahead log beside it
                revision, counts = _sqlite_report(copy, path)
            finally:
                copy.close()
        except sqlite3.OperationalError as exc:
            raise BadInputError(f"cannot copy {path}: {exc}") from None
        finally:
            source.close()
        _put_in_place(partial, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return revision, counts


def _put_in_place(made: Path, dest: Path) -> None:
    """A finished copy made beside ``dest``: on the disk first, then in its place in one step."""
    with made.open("rb+") as f:
        os.fsync(f.fileno())
    os.replace(made, dest)


def _holder(lockfile: Path) -> tuple[int | None, set[str]]:
    """The process id written in ``FILE.lock`` and what that process answers (``PID backup admin``)."""
    try:
        words = lockfile.read_text().split()
    except (OSError, UnicodeDecodeError):
        return None, set()
    if not words or not words[0].isdigit():
        return None, set()
    return int(words[0]), set(words[1:])


def server_holds(path: Path) -> bool:
    """Whether a ``patience serve`` of its own holds the SQLite file ``path`` (its lock on ``FILE.lock``)."""
    import fcntl

    try:
        fd = os.open(f"{path}.lock", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # and with it the shared lock, if it was taken
    return False


def ask_server(path: Path, request: Path, done: Path, payload: dict[str, Any], command: str,
               what: str) -> tuple[dict[str, Any], int]:
    """Ask the ``patience serve`` holding ``path`` for ``what`` (``payload`` and a nonce in the ``request``
    file, then SIGUSR1) for ``patience COMMAND``; its answer (read from ``done``) and its process id."""
    import fcntl

    lockfile = Path(f"{path}.lock")
    pid, offers = _holder(lockfile)
    for _ in range(20):  # a server that has just started writes its id and offer a moment after the lock
        if pid is not None and command in offers:
            break
        time.sleep(0.1)
        pid, offers = _holder(lockfile)
    if pid is None:
        raise BadInputError(f"a process holds {path} but {lockfile} names none: stop it and {command} then")
    if command not in offers:
        things = "copies" if what == "copy" else f"{what}s"
        raise BadInputError(f"the process {pid} holding {path} makes no {things} (a patience restore, or a patience "
                            f"serve older than this one): let it finish, or stop it, then {command}")
    if lockfile.stat().st_uid != os.getuid():
        raise BadInputError(f"the patience serve holding {path} runs as another user: run patience {command} as "
                            "that user")
    _alive(pid, path, command)
    try:
        fd = os.open(request, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise BadInputError(f"cannot write {request}: {exc.strerror or exc}") from None
    mine = True
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            same = os.fstat(fd).st_ino == os.lstat(request).st_ino
        except OSError:
            same = False
        if not same:
            mine = False
            raise BadInputError(f"another patience {command} of {path} is going on: wait for it")
        if os.fstat(fd).st_uid != os.getuid():
            mine = False
            raise BadInputError(f"{request} belongs to another user: remove it")
        with contextlib.suppress(FileNotFoundError):
            done.unlink()  # an answer to an earlier request
        nonce = secrets.token_hex(16)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({**payload, "nonce": nonce}).encode())
        try:
            os.kill(pid, signal.SIGUSR1)
        except ProcessLookupError:
            raise BadInputError(f"the patience serve (process {pid}) holding {path} is gone") from None
        return _answer(done, nonce, pid, lockfile, path, command, what), pid
    finally:
        if mine:
            with contextlib.suppress(FileNotFoundError):
                request.unlink()
            with contextlib.suppress(FileNotFoundError):
                done.unlink()
        os.close(fd)


def _copy_by_server(path: Path, dest: Path) -> tuple[str, dict[str, int], str]:
    """Ask the ``patience serve`` holding ``path`` for a copy (a request file and SIGUSR1), wait for it, check
    it and put it at ``dest``: its revision, its row counts and how it was made."""
    from patience.server.storage.backups import request_paths

    request, done = request_paths(path)
    made = _partial(dest)
    try:
        answer, pid = ask_server(path, request, done, {"dest": str(made.resolve())}, "backup", "copy")
        if not answer.get("ok"):
            raise BadInputError(f"the patience serve (process {pid}) could not copy {path}: "
                                f"{answer.get('error') or 'no reason given'}")
        conn = _open(made)
        try:
            revision, counts = _sqlite_report(conn, path)
        finally:
            conn.close()
        _put_in_place(made, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            made.unlink()
    how = (f", copied by the running patience serve (process {pid}, {answer.get('pages', 0):,} pages in "
           f"{answer.get('seconds', 0):.2f} s) while it served")
    return revision, counts, how


def _partial(dest: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)  # 0600, empty
    os.close(fd)
    return Path(name)


def _alive(pid: int, path: Path, command: str = "backup") -> None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        raise BadInputError(f"the patience serve (process {pid}) holding {path} is gone") from None
    except PermissionError:
        raise BadInputError(f"the patience serve (process {pid}) holding {path} runs as another user: run "
                            f"patience {command} as that user") from None


def _answer(done: Path, nonce: str, pid: int, lockfile: Path, path: Path, command: str, what: str) -> dict[str, Any]:
    """The server's answer to the request ``nonce``, waited for up to :data:`SERVER_WAIT` seconds."""
    deadline = time.monotonic() + SERVER_WAIT
    checked = time.monotonic()
    while time.monotonic() < deadline:
        try:
            answer = json.loads(done.read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            answer = None
        if isinstance(answer, dict) and answer.get("nonce") == nonce:
            return answer
        if time.monotonic() - checked > 1.0:  # still there, and still answering?
            checked = time.monotonic()
            _alive(pid, path, command)
            holder, offers = _holder(lockfile)
            if holder != pid or command not in offers:
                raise BadInputError(f"the patience serve (process {pid}) holding {path} stopped before it made "
                                    f"the {what}")
        time.sleep(0.05)
    raise BadInputError(f"the patience serve (process {pid}) holding {path} made no {what} in {SERVER_WAIT:.0f} s")


# -- restore ---------------------------------------------------------------------------------------

def cmd_restore(args: argparse.Namespace) -> int:
    url, path, folder = _url(args)
    src = Path(args.src).expanduser()
    if path is not None:
        _sqlite_restore(url, path, src, force=args.force, folder=folder)
    else:
        _postgres_restore(url, src, force=args.force)
    return 0


def _known(revision: str, where: Path) -> None:
    """``revision`` is one of this package's migrations, or :class:`BadInputError`."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    from patience.server.storage.store import alembic_config

    try:
        ScriptDirectory.from_config(alembic_config("sqlite://")).get_revision(revision)
    except (CommandError, KeyError, ValueError):
        raise BadInputError(f"{where} has schema {revision}, which this version of patience does not know "
                            "(made by a newer one? restore it with that)") from None


def _sqlite_restore(url: str, path: Path, src: Path, *, force: bool, folder: bool) -> None:
    _sqlite_file(src, "backup")
    try:
        conn = sqlite3.connect(f"file:{src.resolve()}?mode=ro", uri=True, timeout=30)
    except sqlite3.OperationalError as exc:
        raise BadInputError(f"cannot open {src}: {exc}") from None
    try:
        revision, _ = _sqlite_report(conn, src)
    finally:
        conn.close()
    _known(revision, src)
    if path.exists() and path.samefile(src):
        raise BadInputError(f"{src} is the database itself: restore it into another data folder")
    made = folder and not path.parent.exists()
    if folder:
        from patience.cli.serve import _writable

        _writable(path.parent)  # made (0700) when missing, as patience serve does
    elif not path.parent.is_dir():
        raise BadInputError(f"no folder {path.parent} for the database {path.name}")
    try:
        now, restored = _sqlite_restore_held(url, path, src, revision, force=force)
    except BaseException:
        if made:  # the folder made for it, with the lock file in it: nothing left behind
            shutil.rmtree(path.parent, ignore_errors=True)
        raise
    for suffix in ("-wal", "-shm"):  # SQLite gives them the file's mode; make sure of it
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").chmod(0o600)
    _restored(src, str(path), revision, now, restored)


def _sqlite_restore_held(url: str, path: Path, src: Path, revision: str, *, force: bool) -> tuple[str, dict[str, int]]:
    """Restore ``src`` at ``path`` while holding the arena lock; the schema and counts restored."""
    from patience.server.storage.restore import RestoreRefused, sqlite_restore

    held = f"a patience serve is running on {path}: stop it, then restore"
    with _arena_free(url, held):
        if path.exists() and path.stat().st_size > 0:
            _sqlite_file(path, "database")
            conn = _open(path)
            try:
                tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                held_rows = {t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])
                             for t in ("users", "games") if t in tables}
            except sqlite3.DatabaseError as exc:
                raise BadInputError(f"cannot read the database {path}: {exc}") from None
            finally:
                conn.close()
            if any(held_rows.values()) and not force:
                raise BadInputError(f"the database {path} already holds {held_rows.get('users', 0)} accounts and "
                                    f"{held_rows.get('games', 0)} games: restore into an empty data folder, or pass "
                                    "--force to replace them")
        try:  # the rows only, into a new file the migrations made, renamed over the database at the end
            sqlite_restore(src, revision, path)
        except RestoreRefused as exc:
            raise BadInputError(str(exc)) from None
        conn = _open(path)
        try:
            return _sqlite_report(conn, path)
        finally:
            conn.close()


def _migrate(url: str) -> None:
    from sqlalchemy.exc import SQLAlchemyError

    from patience.server.storage.store import Store, StoreError, safe_url

    store = Store(url)
    try:
        store.migrate()
    except SQLAlchemyError as exc:
        said = str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__]
        raise StoreError(f"restored, but cannot migrate the database {safe_url(url)}: {said[0]}") from None
    finally:
        store.close()


def _restored(src: Path, where: str, before: str, now: str, counts: dict[str, int]) -> None:
    schema = f"schema {now}" if before == now else f"schema {before}, migrated to {now}"
    print(f"restored {src} into {where} ({schema})")
    print(f"rows: {_shown_counts(counts)}")


# -- PostgreSQL ------------------------------------------------------------------------------------

def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """The libpq connection string of a SQLAlchemy URL (without its password) and the environment
    that carries the password to pg_dump and pg_restore."""
    from psycopg.conninfo import make_conninfo
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    params: dict[str, Any] = {k: v if isinstance(v, str) else v[-1] for k, v in parsed.query.items()}
    for key, value in (("host", parsed.host), ("port", parsed.port), ("user", parsed.username),
                       ("dbname", parsed.database)):
        if value:
            params[key] = str(value)
    env = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    return make_conninfo("", **params), env


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise BadInputError(f"{name} is not installed: install PostgreSQL's client programs "
                            "(Debian: apt-get install postgresql-client), of the server's version or newer")
    return found


def _run(command: list[str], env: dict[str, str], what: str) -> str:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BadInputError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise BadInputError(f"{what} failed: {lines[0] if lines else f'exit {done.returncode}'}")
    return done.stdout


def _reachable(url: str) -> Any:
    from patience.server.storage.store import Store

    store = Store(url)
    try:
        store.ping()
    except Exception:
        store.close()
        raise
    return store


def _pg_rows(store: Any) -> tuple[str | None, dict[str, int]]:
    """The revision and the main tables' row counts of a PostgreSQL database (tables it lacks left out)."""
    from sqlalchemy import inspect, text

    with store.engine.connect() as conn:
        names = set(inspect(conn).get_table_names())
        revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar() \
            if "alembic_version" in names else None
        counts = {t: int(conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar() or 0)
                  for t in MAIN_TABLES if t in names}
    return revision, counts


def _pg_tables(store: Any) -> set[str]:
    """The tables of the current schema of a PostgreSQL database."""
    from sqlalchemy import inspect

    with store.engine.connect() as conn:
        return set(inspect(conn).get_table_names())


def _dump_contents(pg_restore: str, dump: Path, env: dict[str, str]) -> tuple[str, dict[str, int]]:
    """Read a custom-format dump back: its Alembic revision and the main tables' rows (checks it is whole)."""
    listed = _run([pg_restore, "--list", str(dump)], env, f"reading {dump}")
    if " alembic_version " not in listed:
        raise BadInputError(f"{dump} is a PostgreSQL dump, but not one of Patience Arena (no alembic_version)")
    command = [pg_restore, "--data-only", "--file=-", "--table=alembic_version",
               *(f"--table={t}" for t in MAIN_TABLES), str(dump)]
    counts: dict[str, int] = {}
    revision: str | None = None
    table: str | None = None
    for line in _run(command, env, f"reading {dump}").splitlines():
        if table is None:
            if line.startswith("COPY "):
                table = line.split()[1].rsplit(".", 1)[-1].strip('"')
                counts.setdefault(table, 0)
        elif line == "\\.":
            table = None
        else:
            counts[table] += 1
            if table == "alembic_version":
                revision = line.split("\t", 1)[0]
    if revision is None:
        raise BadInputError(f"{dump} has no readable schema revision")
    return revision, {t: counts[t] for t in MAIN_TABLES if t in counts}


def _postgres_backup(url: str, dest: Path) -> None:
    from patience.server.storage.store import safe_url

    pg_dump, pg_restore = _tool("pg_dump"), _tool("pg_restore")
    store = _reachable(url)
    try:
        revision, _ = _pg_rows(store)
    finally:
        store.close()
    if revision is None:
        raise BadInputError(f"the database {safe_url(url)} holds no Patience Arena schema (no alembic_version)")
    conninfo, env = _libpq(url)
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)  # 0600
    os.close(fd)
    partial = Path(name)
    try:
        _run([pg_dump, "--format=custom", "--no-password", f"--file={partial}", f"--dbname={conninfo}"], env,
             "pg_dump")
        revision, counts = _dump_contents(pg_restore, partial, env)
        os.replace(partial, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    print(f"backed up {safe_url(url)} to {dest} ({dest.stat().st_size:,} bytes, pg_dump custom format, "
          f"schema {revision})")
    print(f"rows: {_shown_counts(counts)}")


def _postgres_restore(url: str, src: Path, *, force: bool) -> None:
    from patience.server.storage.restore import RestoreRefused, postgres_restore
    from patience.server.storage.store import safe_url

    pg_restore = _tool("pg_restore")
    head = _file_head(src, "backup", "a backup made by patience backup")
    if head == SQLITE_MAGIC:
        raise BadInputError(f"{src} is an SQLite database: restore it with --data-dir or a sqlite:/// URL")
    if not head.startswith(PGDUMP_MAGIC):
        raise BadInputError(f"{src} is not a PostgreSQL dump of pg_dump's custom format")
    _, env = _libpq(url)
    revision, _ = _dump_contents(pg_restore, src, env)
    _known(revision, src)
    store = _reachable(url)
    try:
        schema, held_rows = _pg_rows(store)
        tables = _pg_tables(store)
    finally:
        store.close()
    if schema is None and tables:
        raise BadInputError(f"the database {safe_url(url)} holds tables of something else "
                            f"({', '.join(sorted(tables)[:3])}): restore into an empty database")
    holds = {t: held_rows.get(t, 0) for t in ("users", "games")}
    if any(holds.values()) and not force:
        raise BadInputError(f"the database {safe_url(url)} already holds {holds['users']} accounts and "
                            f"{holds['games']} games: restore into an empty database, or pass --force to replace them")
    with _arena_free(url, f"a patience serve is running on {safe_url(url)}: stop it, then restore"):
        # nothing of the dump runs: its list of objects is checked, its rows read as data (see restore.py)
        listing = _run([pg_restore, "--list", str(src)], env, f"reading {src}")
        data = _run([pg_restore, "--data-only", "--file=-", str(src)], env, f"reading {src}")
        try:
            postgres_restore(url, revision, data, listing, str(src), replace=tables)
        except RestoreRefused as exc:
            raise BadInputError(str(exc)) from None
        store = _reachable(url)
        try:
            now, counts = _pg_rows(store)
        finally:
            store.close()
    _restored(src, safe_url(url), revision, now or "none", counts)
