"""A backup's rows brought into a schema the migrations made: data only, never an object of the file's own.

A backup is a file from outside: whoever could write it could add a trigger (``after insert on games
begin delete from users; end``), a view, a table, an index, or rows of the wrong type. So a restore
never copies the file's schema. It makes the schema with this package's migrations, at the backup's
revision, in a database of its own making (SQLite: a new file beside the target, renamed over it at
the end; PostgreSQL: one transaction), compares the file's objects with it — any table, column,
index, trigger or view that the migrations did not make, or one they made that the file lacks, is
refused by name — checks every value's type against its column, copies the rows of the known
tables and columns only, and migrates to the newest schema. Anything refused raises
:class:`RestoreRefused` (one line) and leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["RestoreRefused", "check_dump_listing", "postgres_restore", "sqlite_restore"]


class RestoreRefused(ValueError):
    """A backup that is not data only for the schema of its revision (the message says what, in one line)."""


# -- SQLite ----------------------------------------------------------------------------------------

_INTERNAL = ("sqlite_sequence", "sqlite_stat1", "sqlite_stat4")


def _sqlite_objects(conn: sqlite3.Connection, schema: str = "main") -> dict[tuple[str, str], Any]:
    """Every object of an SQLite database (``schema``: main, or an attached one), by (type, name): a table's
    columns, an index's table, columns and SQL, a trigger's or view's SQL."""
    found: dict[tuple[str, str], Any] = {}
    listed = conn.execute(f"SELECT type, name, tbl_name, sql FROM {schema}.sqlite_master").fetchall()
    for kind, name, table, sql in listed:
        if name in _INTERNAL:
            continue
        if kind == "table":
            found[kind, name] = [tuple(r[1:6]) for r in conn.execute(f'PRAGMA {schema}.table_xinfo("{_q(name)}")')]
        elif kind == "index":
            found[kind, name] = (table, [r[2] for r in conn.execute(f'PRAGMA {schema}.index_xinfo("{_q(name)}")')],
                                 " ".join((sql or "").split()))
        else:
            found[kind, name] = " ".join((sql or "").split())
    return found


def _q(name: str) -> str:
    return name.replace('"', '""')


def _differences(theirs: dict[tuple[str, str], Any], ours: dict[tuple[str, str], Any], where: str) -> None:
    """Refuse ``theirs`` (the backup's objects) unless they are exactly ``ours`` (the migrations')."""
    for key in sorted(theirs):
        if key not in ours:
            raise RestoreRefused(f"{where} holds a {key[0]} of its own, {key[1]!r}: a backup holds data only")
    for key in sorted(ours):
        if key not in theirs:
            raise RestoreRefused(f"{where} lacks the {key[0]} {key[1]!r} of its schema")
        if theirs[key] != ours[key]:
            raise RestoreRefused(f"{where} has a {key[0]} {key[1]!r} unlike its schema's")


def _storage_classes(declared: str) -> tuple[str, ...]:
    """The SQLite storage classes a value of a column of type ``declared`` may have (besides NULL)."""
    declared = declared.upper()
    if "INT" in declared or declared == "BOOLEAN":
        return ("integer",)
    if "CHAR" in declared or "TEXT" in declared or "CLOB" in declared:
        return ("text",)
    if "REAL" in declared or "FLOA" in declared or "DOUB" in declared:
        return ("real", "integer")
    return ("integer", "real", "text", "blob")


def _check_values(conn: sqlite3.Connection, schema: str, tables: dict[str, list[tuple[Any, ...]]], where: str) -> None:
    """Refuse a value whose type is not its column's (SQLite keeps any value in any column)."""
    for table, columns in tables.items():
        for name, declared, *_ in columns:
            classes = _storage_classes(declared or "")
            allowed = ", ".join(f"'{c}'" for c in (*classes, "null"))
            test = f'typeof("{_q(name)}") NOT IN ({allowed})'
            size = re.search(r"CHAR\((\d+)\)", (declared or "").upper())
            if size:
                test += f' OR length("{_q(name)}") > {int(size.group(1))}'
            bad = conn.execute(f'SELECT "{_q(name)}" FROM {schema}."{_q(table)}" WHERE {test} LIMIT 1').fetchone()
            if bad is not None:
                shown = repr(bad[0])[:40]
                raise RestoreRefused(f"{where}: {table}.{name} holds {shown}, not a value of its type {declared}")


def _upgrade(url: str, revision: str, connection: Any = None) -> None:
    from alembic import command

    from patience.server.storage.store import alembic_config

    config = alembic_config(url)
    if connection is not None:
        config.attributes["connection"] = connection
    command.upgrade(config, revision)


@contextlib.contextmanager
def _sqlite_made(folder: Path, prefix: str) -> Iterator[Path]:
    """A new, empty SQLite file (0600) in ``folder``, removed with its journals unless kept (renamed)."""
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".restoring", dir=folder)
    os.close(fd)
    path = Path(name)
    try:
        yield path
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}{suffix}").unlink()


def sqlite_restore(backup: Path, revision: str, target: Path) -> None:
    """Bring the rows of the SQLite file ``backup`` (of schema ``revision``) into a new file made by the
    migrations, migrate it to the newest schema, and put it at ``target`` (replacing what is there);
    :class:`RestoreRefused` if the file holds anything but data for that schema."""
    from patience.server.storage.store import Store, sqlite_url

    with _sqlite_made(target.parent, f".{target.name}.") as made:
        _upgrade(sqlite_url(made), revision)
        conn = sqlite3.connect(f"file:{made}", uri=True, isolation_level=None, timeout=30)
        try:
            conn.execute("ATTACH DATABASE ? AS backup", (f"file:{backup.resolve()}?mode=ro",))
            ours = _sqlite_objects(conn)
            theirs = _sqlite_objects(conn, "backup")
            _differences(theirs, ours, str(backup))
            tables = {name: columns for (kind, name), columns in ours.items()
                      if kind == "table" and name != "alembic_version"}
            _check_values(conn, "backup", tables, str(backup))
            conn.execute("PRAGMA foreign_keys=OFF")  # the rows come as the backup holds them, in any order
            conn.execute("BEGIN")
            for table, columns in tables.items():
                names = ", ".join(f'"{_q(c[0])}"' for c in columns)
                conn.execute(f'INSERT INTO main."{_q(table)}" ({names}) SELECT {names} FROM backup."{_q(table)}"')
            conn.execute("COMMIT")
            conn.execute("DETACH DATABASE backup")
        except sqlite3.DatabaseError as exc:
            raise RestoreRefused(f"cannot bring the rows of {backup} in: {exc}") from None
        finally:
            conn.close()
        store = Store(sqlite_url(made))
        try:
            store.migrate()
        finally:
            store.close()
        conn = sqlite3.connect(str(made), isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no log beside it to lose
        finally:
            conn.close()
        os.replace(made, target)
        for suffix in ("-wal", "-shm", "-journal"):  # the replaced database's, if any
            with contextlib.suppress(FileNotFoundError):
                Path(f"{target}{suffix}").unlink()


# -- PostgreSQL ------------------------------------------------------------------------------------

_DATA = {"TABLE DATA", "SEQUENCE SET"}
_LISTED = re.compile(r"^\d+; \d+ \d+ (?P<rest>.*)$")
_KINDS = ("TABLE DATA", "SEQUENCE SET", "SEQUENCE OWNED BY", "FK CONSTRAINT", "DEFAULT ACL", "MATERIALIZED VIEW",
          "TABLE", "SEQUENCE", "INDEX", "CONSTRAINT", "DEFAULT", "SCHEMA", "COMMENT", "TRIGGER", "VIEW",
          "FUNCTION", "PROCEDURE", "RULE", "POLICY", "EXTENSION", "TYPE", "DOMAIN", "ACL", "EVENT TRIGGER",
          "AGGREGATE", "OPERATOR", "CAST", "PUBLICATION", "SUBSCRIPTION", "BLOBS", "BLOB", "LARGE OBJECT",
          "ROW SECURITY", "STATISTICS", "COLLATION", "CONVERSION", "SERVER", "FOREIGN TABLE", "TEXT SEARCH")


def _listed(listing: str) -> list[tuple[str, str, str]]:
    """The entries of ``pg_restore --list``: (kind, schema, rest of the name and the owner)."""
    out = []
    for line in listing.splitlines():
        if not line or line.startswith(";"):
            continue
        m = _LISTED.match(line)
        if m is None:
            raise RestoreRefused(f"the dump lists an entry that cannot be read: {line[:60]!r}")
        rest = m.group("rest")
        kind = next((k for k in _KINDS if rest.startswith(k + " ")), rest.split(" ", 1)[0])
        after = rest[len(kind):].strip().split(" ")
        out.append((kind, after[0] if after else "", " ".join(after[1:-1])))
    return out


def check_dump_listing(listing: str, ours: dict[str, set[str]], where: str) -> None:
    """Refuse a dump (its ``pg_restore --list``) with an object the migrations did not make (``ours``: names
    by kind: ``TABLE``, ``INDEX``, ``CONSTRAINT``, ``SEQUENCE``), in more than one schema, or lacking a table."""
    schemas: set[str] = set()
    for kind, schema, name in _listed(listing):
        if kind in ("SCHEMA", "COMMENT") and (schema in ("-", "") or name.startswith("SCHEMA ")) \
                and name.split(" ")[-1] in ("public", ""):
            continue  # the public schema pg_dump of PostgreSQL 15+ names
        schemas.add(schema)
        first = name.split(" ")[0]
        if kind in ("TABLE", "TABLE DATA"):
            known = name in ours["TABLE"]
        elif kind in ("CONSTRAINT", "FK CONSTRAINT"):
            known = first in ours["TABLE"] and name.split(" ")[-1] in ours["CONSTRAINT"]
        elif kind == "INDEX":
            known = name in ours["INDEX"]
        elif kind in ("SEQUENCE", "SEQUENCE OWNED BY", "SEQUENCE SET"):
            known = name in ours["SEQUENCE"]
        elif kind == "DEFAULT":
            known = first in ours["TABLE"]
        elif kind in ("ACL", "COMMENT"):  # the grants and comments on our tables (never applied: data only)
            words = name.split(" ")
            known = len(words) >= 2 and (words[0], words[1].split(".")[0]) in (
                *(("TABLE", t) for t in ours["TABLE"]), *(("SEQUENCE", q) for q in ours["SEQUENCE"]),
                *(("COLUMN", t) for t in ours["TABLE"]))
        else:
            known = False
        if not known:
            raise RestoreRefused(f"{where} holds an object of its own ({kind.lower()} {name!r}): a backup holds "
                                 "data only")
    if len(schemas) > 1:
        raise RestoreRefused(f"{where} holds objects in {len(schemas)} schemas: a backup is of one")
    missing = ours["TABLE"] - {name for kind, _, name in _listed(listing) if kind == "TABLE"}
    if missing:
        raise RestoreRefused(f"{where} lacks the table {sorted(missing)[0]!r} of its schema")


def postgres_objects(conn: Any) -> dict[str, set[str]]:
    """The names of the tables, indexes, constraints and sequences in the connection's current schema."""
    from sqlalchemy import text

    def names(query: str) -> set[str]:
        return {str(r[0]) for r in conn.execute(text(query))}

    here = "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
    return {
        "TABLE": names(f"SELECT relname FROM pg_class WHERE relnamespace = {here} AND relkind IN ('r', 'p')"),
        "INDEX": names(f"SELECT relname FROM pg_class WHERE relnamespace = {here} AND relkind = 'i'"),
        "SEQUENCE": names(f"SELECT relname FROM pg_class WHERE relnamespace = {here} AND relkind = 'S'"),
        "CONSTRAINT": names(f"SELECT conname FROM pg_constraint WHERE connamespace = {here}"),
    }


def _by_references(conn: Any, tables: Iterable[str]) -> list[str]:
    """``tables`` in an order where a table comes after those its foreign keys point to."""
    from sqlalchemy import MetaData

    reflected = MetaData()
    reflected.reflect(conn)
    wanted = set(tables)
    return [t.name for t in reflected.sorted_tables if t.name in wanted]


_COPY = re.compile(r'^COPY (?:"?[\w$]+"?\.)?"?(?P<table>[\w$]+)"? \((?P<columns>[^)]*)\) FROM stdin;$')


def postgres_restore(url: str, revision: str, data_sql: str, listing: str, where: str, *, replace: set[str]) -> None:
    """In one transaction on ``url``: drop the tables named in ``replace`` (a schema there before), make the
    schema of ``revision`` with the migrations, refuse a dump whose ``listing`` names an object they did not
    make, copy the rows of ``data_sql`` (``pg_restore --data-only --file=-``: only its ``COPY`` blocks are
    read, each into a known table's known columns, as data), set the sequences past the rows, and migrate
    to the newest schema. Nothing of the dump runs as SQL; on any refusal nothing is changed."""
    from psycopg import sql
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from patience.server.storage.store import MIGRATION_LOCK, Store

    store = Store(url)
    try:
        with store.engine.begin() as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            for table in sorted(replace):
                conn.exec_driver_sql(f'DROP TABLE IF EXISTS "{table}" CASCADE')
            _upgrade(url, revision, conn)
            ours = postgres_objects(conn)
            check_dump_listing(listing, ours, where)
            columns = {t: {str(r[0]) for r in conn.execute(text(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = :t"), {"t": t})} for t in ours["TABLE"]}
            blocks: dict[str, tuple[list[str], list[str]]] = {}
            lines = iter(data_sql.splitlines())
            for line in lines:
                if not line.startswith("COPY "):
                    continue  # SET, comments, setval: nothing of the dump but its rows is taken
                m = _COPY.match(line)
                if m is None:
                    raise RestoreRefused(f"{where} holds a COPY that cannot be read: {line[:60]!r}")
                table = m.group("table")
                names = [c.strip().strip('"') for c in m.group("columns").split(",") if c.strip()]
                if table not in ours["TABLE"] or not set(names) <= columns[table] or table in blocks:
                    raise RestoreRefused(f"{where} holds rows for {table}({', '.join(names)}), "
                                         "which its schema has not")
                rows = []
                for row in lines:
                    if row == "\\.":
                        break
                    rows.append(row)
                blocks[table] = (names, rows)
            blocks.pop("alembic_version", None)  # the revision the migrations wrote, read before
            driver = conn.connection.driver_connection
            assert driver is not None  # (None only for a connection let go: this one is in its transaction)
            cursor = driver.cursor()
            for table in _by_references(conn, blocks):  # a row's references before it
                names, rows = blocks[table]
                statement = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table),
                                                                      sql.SQL(", ").join(map(sql.Identifier, names)))
                try:
                    with cursor.copy(statement) as copy:
                        for row in rows:
                            copy.write(row + "\n")
                except Exception as exc:  # psycopg's DataError and the like: rows not of their columns' types
                    said = str(exc).strip().splitlines()
                    raise RestoreRefused(f"{where}: rows of {table} refused: {said[0] if said else exc}") from None
            for table in sorted(ours["TABLE"]):
                for (column,) in conn.execute(text(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                        "AND table_name = :t AND pg_get_serial_sequence(quote_ident(:t), column_name) IS NOT NULL"),
                        {"t": table}):
                    conn.execute(text(f'SELECT setval(pg_get_serial_sequence(:t, :c), '
                                      f'coalesce((SELECT max("{column}") FROM "{table}"), 0) + 1, false)'),
                                 {"t": f'"{table}"', "c": column})
            _upgrade(url, "head", conn)
    except DBAPIError as exc:
        said = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise RestoreRefused(f"cannot bring the rows of {where} in: {said[0] if said else exc}") from None
    finally:
        store.close()
