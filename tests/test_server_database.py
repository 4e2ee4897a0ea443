"""The database under the app: Alembic migrations on both backends, and how ``patience serve`` picks its database.

The migration tests are what keeps models and migrations together: a model changed without a
new migration in ``server/migrations/versions`` makes ``alembic check`` find a difference here.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import BigInteger, Column, Integer, MetaData, Table, inspect, text

from patience.cli import main
from patience.server.storage.store import (
    Store,
    StoreError,
    alembic_config,
    database_url,
    metadata,
    migrations_head,
    sqlite_url,
)


def tables(url: str) -> set[str]:
    store = Store(url)
    try:
        return set(inspect(store.engine).get_table_names())
    finally:
        store.close()


def test_migrations_take_an_empty_database_to_the_models_and_back(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "head")  # through the Alembic environment's own engine, as the command line does
    head = ScriptDirectory.from_config(config).get_current_head()
    store = Store(database_url)
    try:
        with store.engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == head
    finally:
        store.close()
    assert set(metadata.tables) <= tables(database_url)
    command.check(config)  # raises if autogenerate finds any difference between models and schema
    command.downgrade(config, "base")
    assert tables(database_url) == {"alembic_version"}
    command.upgrade(config, "head")
    command.check(config)


def test_a_database_at_the_newest_migration_is_left_without_loading_alembic(database_url: str) -> None:
    """The newest migration read from the files as text is Alembic's head; a database there is not
    upgraded again (a start's half second), one below it is."""
    config = alembic_config(database_url)
    assert migrations_head() == ScriptDirectory.from_config(config).get_current_head()
    store = Store(database_url)
    try:
        assert not store.at_head()  # an empty database
        command.upgrade(config, "head")
        command.downgrade(config, "-1")  # one migration below the newest
        assert not store.at_head()
        store.migrate()
        assert store.at_head()
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = 'not-a-revision'"))
        assert not store.at_head()
    finally:
        store.close()


def test_a_second_start_loads_neither_alembic_nor_the_redis_client(tmp_path: Any) -> None:
    """What a start of one process on its SQLite file does not need stays unloaded: Alembic once the database
    is at the newest migration, the Redis client library without a Redis bus (benchmarks/startup.py)."""
    url = sqlite_url(tmp_path / "patience.sqlite3")
    Store(url).migrate()
    code = ("import sys; import patience.server.app; from patience.server.storage.store import Store; "
            f"Store({url!r}).migrate(); print(sorted(m for m in ('alembic', 'redis') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_comparison_sees_a_model_change_without_a_migration(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    changed = MetaData()
    for table in metadata.tables.values():
        table.to_metadata(changed)
    changed.tables["games"].append_column(Column("rating", Integer, nullable=True))
    Table("not_migrated", changed, Column("id", BigInteger, primary_key=True))
    try:
        with store.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), changed)
    finally:
        store.close()
    kinds = {(diff[0], getattr(diff[-1], "name", None)) for diff in diffs if isinstance(diff, tuple)}
    assert kinds == {("add_column", "rating"), ("add_table", "not_migrated")}, diffs


def test_migration_0003_fills_in_how_the_games_of_earlier_matches_ended(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0002")
    store = Store(database_url)
    record = {"games": [{"end": {"t": 300000, "outcome": "time_out"}}, {"end": {"t": 9000, "outcome": "given_up"}}]}
    match = {"game": "teppich", "variant": "waste", "limit_s": 300, "options": "{}", "seed": "7", "nonce": "ab",
             "commitment": "c" * 64, "a": "u1", "b": "u2", "rating": "1500.0 350.0 0.06", "t": 1}
    try:
        with store.engine.begin() as conn:
            for user in ("u1", "u2"):
                conn.execute(text("INSERT INTO users (id, login, name, password_hash, created_ms) "
                                  "VALUES (:id, :id, :id, 'x', 1)"), {"id": user})
            for match_id, state, kept in (("m-over", "over", json.dumps(record)), ("m-live", "live", None)):
                conn.execute(text(
                    "INSERT INTO matches (id, game, variant, limit_s, options, seed, nonce, commitment, player_a, "
                    "player_b, rating_a, rating_b, state, created_ms, record) VALUES (:id, :game, :variant, "
                    ":limit_s, :options, :seed, :nonce, :commitment, :a, :b, :rating, :rating, :state, :t, :record)"),
                    {**match, "id": match_id, "state": state, "record": kept})
        command.upgrade(config, "head")
        with store.engine.connect() as conn:
            rows = conn.execute(text("SELECT id, outcome_a, outcome_b FROM matches ORDER BY id")).all()
    finally:
        store.close()
    assert [tuple(row) for row in rows] == [("m-live", None, None), ("m-over", "time_out", "given_up")]


def test_migration_0004_keeps_first_version_matches_and_fits_deal_keys(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0003")
    store = Store(database_url)
    row = {"game": "reloaded", "variant": "standard", "limit_s": 300, "options": "{}", "nonce": "ab",
           "commitment": "c" * 64, "a": "u1", "b": "u2", "rating": "1500.0 350.0 0.06", "t": 1}
    insert = text("INSERT INTO matches (id, game, variant, limit_s, options, seed, nonce, commitment, player_a, "
                  "player_b, rating_a, rating_b, state, created_ms) VALUES (:id, :game, :variant, :limit_s, "
                  ":options, :seed, :nonce, :commitment, :a, :b, :rating, :rating, 'live', :t)")
    try:
        with store.engine.begin() as conn:
            for user in ("u1", "u2"):
                conn.execute(text("INSERT INTO users (id, login, name, password_hash, created_ms) "
                                  "VALUES (:id, :id, :id, 'x', 1)"), {"id": user})
            conn.execute(insert, {**row, "id": "m-v1", "seed": "987654321"})
        command.upgrade(config, "head")
        with store.engine.begin() as conn:
            conn.execute(insert, {**row, "id": "m-v2", "seed": "f" * 64, "nonce": ""})  # a key fits now
            rows = conn.execute(text("SELECT id, seed, proved FROM matches ORDER BY id")).all()
            assert "deal_stock" in inspect(conn).get_table_names()
        assert [tuple(r) for r in rows] == [("m-v1", "987654321", None), ("m-v2", "f" * 64, None)]
        command.downgrade(config, "0003")  # a match dealt from a key cannot be kept in the old column
        with store.engine.connect() as conn:
            left = [tuple(r) for r in conn.execute(text("SELECT id, seed FROM matches")).all()]
        assert left == [("m-v1", "987654321")]
    finally:
        store.close()


def test_database_urls_are_checked_and_spelled_for_psycopg() -> None:
    assert database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("postgres://u:pw@h:5433/db") == "postgresql+psycopg://u:pw@h:5433/db"
    assert database_url("postgresql+asyncpg://h/db?ssl=require") == "postgresql+psycopg://h/db?sslmode=require"
    assert database_url("postgresql+psycopg://h/db") == "postgresql+psycopg://h/db"
    assert database_url("sqlite://") == "sqlite://"
    for bad in ("", "not a url", "mysql://h/db", "http://example.org/"):
        with pytest.raises(StoreError):
            database_url(bad)


# -- patience serve --database-url -------------------------------------------------------------------


class Served:
    """Stands in for uvicorn: records the app ``patience serve`` would run, and runs nothing."""

    def __init__(self) -> None:
        self.apps: list[Any] = []

    def __call__(self, app: Any, **_: Any) -> None:
        self.apps.append(app)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Served:
    fake = Served()
    monkeypatch.setattr("uvicorn.run", fake)
    monkeypatch.delenv("PATIENCE_DATABASE_URL", raising=False)
    return fake


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # free once the socket closes: nothing listens there


def test_serve_migrates_the_database_of_its_url(database_url: str, served: Served,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--database-url", database_url]) == 0
    assert len(served.apps) == 1
    assert set(metadata.tables) <= tables(database_url)
    assert "games and statistics in" in capsys.readouterr().out


def test_the_environment_names_the_database_and_the_option_wins(database_url: str, served: Served,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Any) -> None:
    monkeypatch.setenv("PATIENCE_DATABASE_URL", database_url)
    assert main(["serve", "--data-dir", str(tmp_path / "unused")]) == 0
    assert set(metadata.tables) <= tables(database_url)
    assert not (tmp_path / "unused").exists()
    monkeypatch.setenv("PATIENCE_DATABASE_URL", "mysql://nowhere/db")
    other = sqlite_url(tmp_path / "other.sqlite3")
    assert main(["serve", "--database-url", other]) == 0
    assert set(metadata.tables) <= tables(other)


def test_the_default_is_the_sqlite_file_in_the_data_folder(served: Served, tmp_path: Any) -> None:
    assert main(["serve", "--data-dir", str(tmp_path / "data")]) == 0
    assert set(metadata.tables) <= tables(sqlite_url(tmp_path / "data" / "patience.sqlite3"))


@pytest.mark.parametrize("url, says", [
    ("definitely not a url", "not a database URL"),
    ("mysql://db.example/arena", "unsupported database"),
    ("postgresql+nosuchdriver://db.example/arena", "no driver"),
    ("sqlite:////no/such/folder/here/db.sqlite3", "cannot reach the database"),
    ("postgresql+psycopg://postgres:secret-word@127.0.0.1:{port}/test", "cannot reach the database"),
])
def test_a_bad_or_unreachable_database_is_one_line_and_exit_2(url: str, says: str, served: Served,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--database-url", url.format(port=_closed_port())]) == 2
    err = capsys.readouterr().err
    assert err.startswith("patience: ") and says in err and err.count("\n") == 1, err
    assert "secret-word" not in err
    assert served.apps == []


def test_no_commit_waits_for_a_checkpoint_the_server_runs_them_beside(tmp_path: Any) -> None:
    """A commit only appends to SQLite's write-ahead log (a checkpoint, which writes the database file and
    waits for the disk, would hold up every move of its batch); Store.checkpoint copies the log over."""
    from patience.server.storage.store import SavedGame

    path = tmp_path / "wal.sqlite3"
    store = Store(sqlite_url(path))
    try:
        store.migrate()
        store.checkpoint()
        size = path.stat().st_size
        record = {"actions": [{"m": "draw", "t": 1}] * 200}
        for start in range(0, 3000, 100):  # far past SQLite's own checkpoint at 1000 pages of log
            store.save_games(SavedGame(f"g{i}", "b", "reloaded", None, "1", record, 0, 0, 0, None)
                             for i in range(start, start + 100))
        assert path.stat().st_size == size  # every commit went to the log only
        store.checkpoint()
        assert path.stat().st_size > size + 1_000_000
    finally:
        store.close()


def test_migration_0022_writes_the_mark_for_the_names_of_accounts_closed_before(database_url: str) -> None:
    """Accounts closed before a closed account's name was a mark (roles.closed_name) had "Closed account
    1a2B3c4D" in ``users``, in their matches' records and in a series' reason: 0022 writes the mark there,
    for closed accounts only (a live account of that name keeps it), again changes nothing, and its
    downgrade writes the English text back. The server's notes in the audit log get their keys and figures
    (a moderator's note none)."""
    from patience.fairplay import Reason, reason_text
    from patience.server.storage.fairplay import Note
    from patience.server.storage.roles import closed_name
    from patience.server.storage.store import name_key

    config = alembic_config(database_url)
    command.upgrade(config, "0017")
    closed, early, live, other = "AbCdEfGh12345678", "ZyXwVu9876543210", "LiveOne_12345678", "Gina-00000000000"
    series = ("6 matches with one opponent in 24 h: 6 won, 0 lost (3.0 more wins than the ratings predict) "
              "(Closed account AbCdEfGh, klondike)")
    quits = ("3 matches with one opponent in 24 h: the opponent made no real attempt in 3 "
             "(Closed account AbCdEfGh, wasp)")
    plain = "4 games scoring over 400 points a minute"
    match = {"game": "klondike", "variant": "draw3", "limit_s": 300, "options": "{}", "seed": "7", "nonce": "ab",
             "commitment": "c" * 64, "rating": "1500.0 350.0 0.06", "t": 1}

    def record(a: tuple[str, str], b: tuple[str, str]) -> str:
        return json.dumps({"format": "patience-match", "players": [{"id": a[0], "name": a[1], "rating": 1500.0},
                                                                  {"id": b[0], "name": b[1], "rating": 1500.0}]})

    store = Store(database_url)
    try:
        with store.engine.begin() as conn:  # as the code before the mark wrote them
            for user_id, login, name in ((closed, f"~{closed}", "Closed account AbCdEfGh"),
                                         (early, f"~{early}", "Closed account ZyXwVu98"),
                                         (live, "liveone", "Closed account LiveOne_"),  # a live account so named
                                         (other, "gina", "Gina")):
                conn.execute(text("INSERT INTO users (id, login, name, name_key, password_hash, created_ms) "
                                  "VALUES (:id, :login, :name, :key, 'x', 1)"),
                             {"id": user_id, "login": login, "name": name, "key": name_key(name)})
            for match_id, a, b, kept in (
                    ("m1", closed, other, record((closed, "Closed account AbCdEfGh"), (other, "Gina"))),
                    ("m2", other, early, record((other, "Gina"), (early, "Ines"))),  # closed before records were
                    ("m3", live, other, record((live, "Closed account LiveOne_"), (other, "Gina"))),
                    ("m4", closed, live, None)):  # not over
                conn.execute(text(
                    "INSERT INTO matches (id, game, variant, limit_s, options, seed, nonce, commitment, player_a, "
                    "player_b, rating_a, rating_b, state, created_ms, record) VALUES (:id, :game, :variant, "
                    ":limit_s, :options, :seed, :nonce, :commitment, :a, :b, :rating, :rating, :state, :t, :record)"),
                    {**match, "id": match_id, "a": a, "b": b, "state": "over" if kept else "live", "record": kept})
            conn.execute(text("INSERT INTO fairplay_accounts (user_id, state, score, reasons, note, at_ms, since_ms) "
                              "VALUES (:id, 'review', 60, :reasons, 'flagged', 1, 0)"),
                         {"id": other, "reasons": json.dumps([plain, series, quits])})
            notes = [("mark", "marked at once by the detection"), ("flag", "flagged for review by the detection"),
                     ("flag", f"flagged for review by the detection: {series}"),
                     ("flag", "flagged for review by the detection: 6 matches with one opponent in 24 h: 6 won, 0 "
                              "lost (3.0 more wins than the ratings predict) (Ines, Ada, klondike)"),
                     ("release", "-2.5 held points of match m1 applied"),
                     ("refund", "12.0 points of match m1 given back"),
                     ("unrefund", "12.0 points of match m1 taken back: the account that took them was cleared"),
                     ("mark_bot", "flagged for review by the detection")]  # a moderator's, whatever it says
            for action, note in notes:
                conn.execute(text("INSERT INTO fairplay_audit (user_id, by_id, action, note, at_ms) "
                                  "VALUES (:id, NULL, :action, :note, 1)"),
                             {"id": other, "action": action, "note": note})

        def read() -> tuple[dict[str, tuple[str, str]], dict[str, Any], list[Any]]:
            with store.engine.connect() as conn:
                names = {r[0]: (r[1], r[2]) for r in conn.execute(text("SELECT id, name, name_key FROM users"))}
                records = {r[0]: r[1] and [p["name"] for p in json.loads(r[1])["players"]]
                           for r in conn.execute(text("SELECT id, record FROM matches"))}
                reasons = json.loads(conn.execute(text("SELECT reasons FROM fairplay_accounts")).scalar_one())
            return names, records, reasons

        before = read()
        command.upgrade(config, "head")
        names, records, reasons = read()
        assert names == {closed: (closed_name(closed), name_key(closed_name(closed))),
                         early: (closed_name(early), name_key(closed_name(early))),
                         live: ("Closed account LiveOne_", name_key("Closed account LiveOne_")),
                         other: ("Gina", "gina")}
        assert records == {"m1": ["<closed:AbCdEfGh>", "Gina"], "m2": ["Gina", "<closed:ZyXwVu98>"],
                           "m3": ["Closed account LiveOne_", "Gina"], "m4": None}
        assert reasons[0] == plain and reasons[1]["k"] == reasons[2]["k"] == "series"
        assert reasons[1]["p"]["user"] == reasons[2]["p"]["user"] == closed
        assert [reason_text(r) for r in reasons[1:]] == [s.replace("Closed account AbCdEfGh", "<closed:AbCdEfGh>")
                                                          for s in (series, quits)]
        with store.engine.connect() as conn:
            whys = [(r[0], r[1] and json.loads(r[1])) for r in conn.execute(
                text("SELECT note, why FROM fairplay_audit ORDER BY id"))]
        keyed = [Note("note_mark", {}), Note("note_flag", {}), Note("note_flag_series", {"series": reasons[1]}),
                 Note("note_flag_series", {"series": Reason("series", {
                     "why": Reason("series_won", {"n": 6, "won": 6, "lost": 0, "excess": 3.0}),
                     "name": "Ines, Ada", "game": "klondike"})}),  # a live name: as it was
                 Note("note_release", {"delta": -2.5, "match": "m1"}),
                 Note("note_refund", {"points": 12.0, "match": "m1"}),
                 Note("note_unrefund", {"points": 12.0, "match": "m1"})]
        assert whys == [*((note, n.to_dict()) for (_, note), n in zip(notes, keyed, strict=False)),
                        (notes[-1][1], None)]
        assert [str(n) for n in keyed[3:]] == [note for _, note in notes[3:-1]]  # as the server writes them now
        command.downgrade(config, "0017")
        assert "why" not in {c["name"] for c in inspect(store.engine).get_columns("fairplay_audit")}
        after = read()
        assert after[0] == before[0] and after[2] == before[2]
        assert after[1] == {**before[1], "m2": ["Gina", "Closed account ZyXwVu98"]}  # the name it had is gone
        command.upgrade(config, "head")
        command.downgrade(config, "0017")
        command.upgrade(config, "head")
        assert read() == (names, records, reasons)
    finally:
        store.close()
