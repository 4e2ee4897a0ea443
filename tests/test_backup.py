"""``patience backup`` and ``patience restore``: a copy of a running site's database, brought back into
a new data folder (or PostgreSQL database) and served again, with the same accounts, passwords,
games, matches and ratings; bad input refused in one line with exit 2 and nothing changed.

The SQLite site of the first test runs with ``--redis-url`` (an arena whose processes share the file):
the backup reads the file itself. A server without it holds its SQLite file for itself (``unix-excl``),
so no other process can read it: that server makes the copy when the backup asks (a request file and
SIGUSR1), its solo game being played all along, and a request that is not the backup's is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL
from websockets.sync.client import connect

from arena_processes import PASSWORD, Player, ServeProcess, fresh_redis, meet
from patience.cli import main
from patience.server.storage.store import ArenaLock, SavedGame, Store, sqlite_url

FORMAT = "reloaded/standard/300"


def patience(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command as a person types it, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "patience", *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def sign_in(url: str, login: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=20.0)
    csrf = client.get("/api/me").json()["csrf"]
    answer = client.post("/account/signin", data={"csrf": csrf, "login": login, "password": PASSWORD},
                         headers={"accept": "application/json"})
    assert answer.status_code == 200, answer.text
    assert client.get("/api/me").json()["user"]["login"] == login
    return client


def solo_page(player: Player, port: int) -> Any:
    cookie = "; ".join(f"{name}={value}" for name, value in player.http.cookies.items())
    return connect(f"ws://127.0.0.1:{port}/ws", additional_headers={"Cookie": cookie}, open_timeout=10)


def answer(ws: Any, ack: int) -> dict[str, Any]:
    while True:
        msg = json.loads(ws.recv(timeout=15))
        if msg["d"].get("ack") == ack:
            return msg  # type: ignore[no-any-return]


def new_game(ws: Any, seed: str) -> str:
    ws.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": seed, "cid": "solo"}}))
    while True:
        msg = json.loads(ws.recv(timeout=15))
        if msg["t"] == "game":
            return str(msg["d"]["id"])


def play(ws: Any, t: str, ack: int) -> dict[str, Any]:
    ws.send(json.dumps({"t": t, "d": {"ack": ack}}))
    return answer(ws, ack)


def what_is_served(url: str, anna: Player, bruno: Player, match_id: str) -> dict[str, Any]:
    """What the site shows of the two players, their match and Anna's games (her own browser's view)."""
    anna.move_to(url)
    return {
        "me": anna.http.get("/api/me").json()["user"],
        "stats": anna.http.get("/api/stats").json(),
        "match": httpx.get(f"{url}/api/matches/{match_id}", timeout=10).json(),
        "profiles": [httpx.get(f"{url}/api/profile/{p.user_id}", timeout=10).json() for p in (anna, bruno)],
        "leaderboard": httpx.get(f"{url}/api/leaderboard", timeout=10).json(),
    }


@pytest.fixture
def backup_redis(redis_server: str) -> str:
    return fresh_redis(redis_server, 15)


@pytest.mark.slow
def test_a_running_sqlite_site_is_backed_up_and_restored_into_a_new_data_folder(
        tmp_path: Path, backup_redis: str) -> None:
    old_dir, new_dir, backup = tmp_path / "old", tmp_path / "new", tmp_path / "site.backup"
    old_dir.mkdir(mode=0o700)
    site = ServeProcess(sqlite_url(old_dir / "patience.sqlite3"), backup_redis, tmp_path, "old")
    try:
        site.wait_ready()
        tag = secrets.token_hex(3)
        anna, bruno = Player(site.url, f"anna{tag}"), Player(site.url, f"bruno{tag}")
        match_id = meet(anna, bruno, FORMAT)
        for player in (anna, bruno):
            assert player.intent("stock")["t"] == "dev"
        for player in (anna, bruno):
            player.intent("giveup")
        end = anna.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None)["d"]["end"]
        assert end["outcomes"] == ["given_up", "given_up"]
        with solo_page(anna, site.port) as ws:
            over = new_game(ws, "9")
            for ack in (1, 2, 3):
                assert play(ws, "stock", ack)["t"] == "ev"
            assert play(ws, "giveup", 4)["d"]["status"]["outcome"] == "given_up"
            going = new_game(ws, "11")
            for ack in (5, 6):
                assert play(ws, "stock", ack)["t"] == "ev"
        before = what_is_served(site.url, anna, bruno, match_id)
        assert before["match"]["state"] == "over"
        assert before["profiles"][0]["ratings"]["reloaded"]["matches"] == 1
        assert before["stats"]["stats"]["reloaded"]["played"] == 1
        assert [g["id"] for g in before["stats"]["unfinished"]] == [going]

        made = patience("backup", backup, "--data-dir", old_dir)  # while the site runs
        print(made.stdout)
        assert made.returncode == 0, made.stderr
        assert site.proc.poll() is None
        assert "schema 0" in made.stdout and "users 2, games 2, matches 1, ratings 2" in made.stdout
        assert mode(backup) == 0o600 and [p.name for p in tmp_path.glob("site.backup*")] == ["site.backup"]
    finally:
        site.stop()

    restored = patience("restore", backup, "--data-dir", new_dir)
    print(restored.stdout)
    assert restored.returncode == 0, restored.stderr
    assert "users 2, games 2, matches 1, ratings 2" in restored.stdout
    assert mode(new_dir) == 0o700 and mode(new_dir / "patience.sqlite3") == 0o600

    again = ServeProcess(sqlite_url(new_dir / "patience.sqlite3"), None, tmp_path, "new")  # a server of its own
    try:
        again.wait_ready()
        after = what_is_served(again.url, anna, bruno, match_id)
        assert after == before  # her browser is still signed in: the sessions came along
        for player in (anna, bruno):  # and the passwords
            fresh = sign_in(again.url, player.login)
            played = fresh.get("/api/stats").json()["stats"]["reloaded"]["played"]
            assert played == (1 if player is anna else 0)  # the account's games, from any browser
            fresh.close()
        with solo_page(anna, again.port) as ws:  # the game going on goes on
            ws.send(json.dumps({"t": "join", "d": {"id": going, "v": 0, "cid": "solo"}}))
            shown = json.loads(ws.recv(timeout=20))
            while shown["t"] != "game":
                shown = json.loads(ws.recv(timeout=20))
            assert shown["d"]["id"] == going and shown["d"]["status"]["moves"] == 2
            assert play(ws, "stock", 7)["d"]["status"]["moves"] == 3
        assert over != going

        # this server holds its file for itself: it makes the backup's copy, a restore into it is refused
        other = patience("backup", tmp_path / "other.backup", "--data-dir", new_dir)
        assert other.returncode == 0, other.stderr
        assert "copied by the running patience serve" in other.stdout and mode(tmp_path / "other.backup") == 0o600
        refused = patience("restore", backup, "--data-dir", new_dir, "--force")
        assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
        assert "is running on" in refused.stderr
    finally:
        again.stop()
        for player in (anna, bruno):
            player.close()


# -- PostgreSQL ----------------------------------------------------------------------------------------


@pytest.fixture
def two_databases(postgres_database: URL) -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL databases of this test (made and dropped beside the session's)."""
    admin = create_engine(postgres_database, isolation_level="AUTOCOMMIT")
    names = [f"patience_backup_{secrets.token_hex(4)}_{side}" for side in ("from", "into")]
    with admin.connect() as conn:
        for name in names:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield tuple(postgres_database.set(database=n).render_as_string(hide_password=False) for n in names)  # type: ignore[misc]
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(query))]
    finally:
        engine.dispose()


@pytest.mark.slow
def test_a_postgresql_database_is_backed_up_with_pg_dump_and_restored_into_an_empty_one(
        tmp_path: Path, two_databases: tuple[str, str]) -> None:
    source, target = two_databases
    site = ServeProcess(source, None, tmp_path, "pg")
    try:
        site.wait_ready()
        tag = secrets.token_hex(3)
        players = [Player(site.url, f"anna{tag}"), Player(site.url, f"bruno{tag}")]
        with solo_page(players[0], site.port) as ws:
            new_game(ws, "9")
            for ack in (1, 2):
                assert play(ws, "stock", ack)["t"] == "ev"
        backup = tmp_path / "pg.backup"
        made = patience("backup", backup, "--database-url", source)  # while the server runs
        print(made.stdout)
        assert made.returncode == 0, made.stderr
        assert "users 2, games 1" in made.stdout and mode(backup) == 0o600
    finally:
        site.stop()
    accounts = "SELECT id, login, name, password_hash FROM users ORDER BY login"
    games = "SELECT id, game, seed FROM games"
    assert len(rows(source, accounts)) == 2

    restored = patience("restore", backup, "--database-url", target)
    print(restored.stdout)
    assert restored.returncode == 0, restored.stderr
    assert rows(target, accounts) == rows(source, accounts)
    assert rows(target, games) == rows(source, games)
    revision = "SELECT version_num FROM alembic_version"
    assert rows(target, revision) == rows(source, revision)

    refused = patience("restore", backup, "--database-url", target)  # it holds accounts now
    assert refused.returncode == 2 and "already holds 2 accounts" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    again = ServeProcess(target, None, tmp_path, "pg-again")
    try:
        again.wait_ready()
        sign_in(again.url, players[1].login).close()
        refused = patience("restore", backup, "--database-url", target, "--force")
        assert refused.returncode == 2 and "is running on" in refused.stderr
    finally:
        again.stop()
    forced = patience("restore", backup, "--database-url", target, "--force")
    assert forced.returncode == 0, forced.stderr
    assert rows(target, accounts) == rows(source, accounts)
    for player in players:
        player.close()


# -- bad input -----------------------------------------------------------------------------------------


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("patience: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    return err


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def site_dir(tmp_path: Path) -> Path:
    """A data folder whose database holds a game."""
    folder = tmp_path / "site"
    folder.mkdir(mode=0o700)
    store = Store(sqlite_url(folder / "patience.sqlite3"))
    store.migrate()
    store.save_games([SavedGame("g1", "b1", "reloaded", None, "9", {"actions": []}, 10, 0, 0, None)])
    store.close()
    return folder


def test_bad_input_is_one_line_and_changes_nothing(tmp_path: Path, site_dir: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    made = tmp_path / "made.backup"
    assert main(["backup", str(made), "--data-dir", str(site_dir)]) == 0
    out = capsys.readouterr().out
    assert "games 1" in out and mode(made) == 0o600
    (tmp_path / "data.json").write_text('{"users": []}')
    (tmp_path / "notes.txt").write_text("not a database\n")
    (tmp_path / "folder").mkdir()
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE users (id TEXT)")
    conn.close()
    target = tmp_path / "target"
    seen = digest(tmp_path)

    refused(capsys, ["backup", str(tmp_path / "x.backup"), "--data-dir", str(tmp_path / "nothing")], "no database")
    refused(capsys, ["backup", str(made), "--data-dir", str(site_dir)], "exists", "--force")
    refused(capsys, ["backup", str(tmp_path / "folder"), "--data-dir", str(site_dir)], "is a folder")
    refused(capsys, ["backup", str(tmp_path / "x.backup"), "--database-url", f"sqlite:///{tmp_path / 'data.json'}"],
            "not an SQLite database")
    refused(capsys, ["backup", str(tmp_path / "x.backup"), "--database-url", "postgresql://nobody@127.0.0.1:1/x"],
            "cannot reach")
    refused(capsys, ["backup", str(tmp_path / "x.backup"), "--database-url", "mysql://db/x"], "unsupported")
    for src, words in ((tmp_path / "missing.backup", ("no backup",)),
                       (tmp_path / "data.json", ("not an SQLite database",)),
                       (tmp_path / "notes.txt", ("not an SQLite database",)),
                       (tmp_path / "folder", ("is a folder",)),
                       (foreign, ("not one of Patience Arena",))):
        refused(capsys, ["restore", str(src), "--data-dir", str(target)], *words)
        refused(capsys, ["restore", str(src), "--database-url", "postgresql://nobody@127.0.0.1:1/x"])
    refused(capsys, ["restore", str(made), "--database-url", "postgresql://nobody@127.0.0.1:1/x"], "SQLite")
    assert not target.exists()
    assert digest(tmp_path) == seen

    # into a database that holds a game: refused, nothing changed; --force replaces it
    site_seen = digest(site_dir)
    refused(capsys, ["restore", str(made), "--data-dir", str(site_dir)], "already holds 0 accounts and 1 games",
            "--force")
    assert digest(site_dir) == site_seen
    # while a server holds it (the lock patience serve takes): refused, even with --force
    store = Store(sqlite_url(site_dir / "patience.sqlite3"))
    lock = ArenaLock(store)
    lock.acquire()
    try:
        refused(capsys, ["restore", str(made), "--data-dir", str(site_dir), "--force"], "is running on")
        # a holder that makes no copies (a restore, an older server) is not sent SIGUSR1, which would end it
        refused(capsys, ["backup", str(tmp_path / "y.backup"), "--data-dir", str(site_dir)], "makes no copies")
    finally:
        lock.release()
        store.close()
    assert digest(site_dir) == site_seen and not (tmp_path / "y.backup").exists()
    assert main(["restore", str(made), "--data-dir", str(site_dir), "--force"]) == 0
    assert "games 1" in capsys.readouterr().out
    assert main(["restore", str(made), "--data-dir", str(target)]) == 0
    assert "restored" in capsys.readouterr().out and mode(target) == 0o700


def test_a_backup_of_an_older_schema_is_migrated_as_it_is_restored(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from alembic import command

    from patience.server.storage.store import alembic_config

    old = tmp_path / "old"
    old.mkdir()
    url = sqlite_url(old / "patience.sqlite3")
    command.upgrade(alembic_config(url), "0012")
    assert main(["backup", str(tmp_path / "old.backup"), "--data-dir", str(old)]) == 0
    assert "schema 0012" in capsys.readouterr().out
    assert main(["restore", str(tmp_path / "old.backup"), "--data-dir", str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    assert "schema 0012, migrated to 0" in out and "migrated to 0012" not in out
    assert main(["admin", "--data-dir", str(tmp_path / "new"), "schema"]) == 0
    assert "up to date" in capsys.readouterr().out


# -- a server of its own makes the copy ----------------------------------------------------------------


def served_lines(site: ServeProcess, words: str, count: int, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        lines = [line for line in site.log().splitlines() if words in line]
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"no {count} lines with {words!r}: {site.log()}")


@pytest.mark.slow
def test_a_server_of_its_own_makes_the_copy_while_a_game_is_played(tmp_path: Path) -> None:
    old_dir, new_dir, backup = tmp_path / "old", tmp_path / "new", tmp_path / "site.backup"
    old_dir.mkdir(mode=0o700)
    db = old_dir / "patience.sqlite3"
    store = Store(sqlite_url(db))
    store.migrate()
    store.close()
    with sqlite3.connect(db) as conn:  # ~64 MB of rows of a table no one reads: a copy of many steps
        conn.execute("INSERT INTO signin_failures (key_hash, at_ms) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                     "SELECT i + 1 FROM n WHERE i < 600000) SELECT hex(randomblob(32)), 4102444800000 FROM n")
    conn.close()
    site = ServeProcess(sqlite_url(db), None, tmp_path, "solo")  # no --redis-url: it holds the file
    acks: list[tuple[int, float]] = []
    failures: list[BaseException] = []
    stop = threading.Event()
    try:
        site.wait_ready()
        pid, *offers = Path(f"{db}.lock").read_text().split()
        assert int(pid) == site.proc.pid and offers == ["backup", "admin"]
        request, done = Path(f"{db}.backup-request"), Path(f"{db}.backup-done")

        # requests that are not the backup's: ignored, one line each, the server goes on
        request.symlink_to(tmp_path / "elsewhere.json")
        (tmp_path / "elsewhere.json").write_text(json.dumps({"dest": str(tmp_path / "x"), "nonce": "0" * 32}))
        os.kill(site.proc.pid, signal.SIGUSR1)
        assert len(served_lines(site, "backup: request ignored", 1)) == 1
        request.unlink()
        request.write_text('{"dest": "/tmp/x"}')
        os.kill(site.proc.pid, signal.SIGUSR1)
        assert "is not a backup request" in served_lines(site, "backup: request ignored", 2)[1]
        request.unlink()
        assert site.proc.poll() is None and not done.exists() and not (tmp_path / "x").exists()

        tag = secrets.token_hex(3)
        anna = Player(site.url, f"anna{tag}")
        with solo_page(anna, site.port) as ws:
            going = new_game(ws, "11")

            def playing() -> None:
                ack = 0
                try:
                    while not stop.is_set():
                        ack += 1
                        assert play(ws, "stock", ack)["t"] == "ev"
                        acks.append((ack, time.time()))
                        time.sleep(0.01)
                except BaseException as exc:
                    failures.append(exc)

            thread = threading.Thread(target=playing)
            thread.start()
            while len(acks) < 5 and thread.is_alive():
                time.sleep(0.01)
            started = time.time()
            acked_before = acks[-1][0]
            made = patience("backup", backup, "--data-dir", old_dir)  # while the game is played
            ended = time.time()
            time.sleep(0.2)
            stop.set()
            thread.join(timeout=20)
        assert not failures, failures
        print(made.stdout, made.stderr)
        assert made.returncode == 0, made.stderr
        assert f"copied by the running patience serve (process {site.proc.pid}" in made.stdout
        assert "users 1, games 1" in made.stdout
        seconds = float(re.search(r"pages in ([0-9.]+) s", made.stdout).group(1))  # type: ignore[union-attr]
        during = [at for _, at in acks if started <= at <= ended]
        gaps = [b - a for a, b in zip([started, *during], [*during, ended], strict=True)]
        print(f"copy {seconds:.2f} s, {len(during)} moves acknowledged meanwhile, longest wait {max(gaps):.2f} s")
        assert seconds >= 0.2 and len(during) >= 10 and max(gaps) < seconds  # the game was not held up
        assert mode(backup) == 0o600 and [p.name for p in tmp_path.glob("site.backup*")] == ["site.backup"]
        assert not request.exists() and not done.exists() and site.proc.poll() is None
        acked = acks[-1][0]
    finally:
        stop.set()
        site.stop()
    assert Path(f"{db}.lock").read_text().split() == [str(site.proc.pid)]  # no more copies offered

    restored = patience("restore", backup, "--data-dir", new_dir)
    assert restored.returncode == 0, restored.stderr
    again = ServeProcess(sqlite_url(new_dir / "patience.sqlite3"), None, tmp_path, "again")
    try:
        again.wait_ready()
        sign_in(again.url, anna.login).close()  # the account and its password
        anna.move_to(again.url)
        assert [g["id"] for g in anna.http.get("/api/stats").json()["unfinished"]] == [going]
        with solo_page(anna, again.port) as ws:  # signed in still: the session came along
            ws.send(json.dumps({"t": "join", "d": {"id": going, "v": 0, "cid": "solo"}}))
            shown = json.loads(ws.recv(timeout=20))
            while shown["t"] != "game":
                shown = json.loads(ws.recv(timeout=20))
            moves = shown["d"]["status"]["moves"]
            assert acked_before <= moves <= acked  # what was acknowledged before the backup began is in it
    finally:
        again.stop()
        anna.close()


# -- a restore brings in data only ---------------------------------------------------------------------

FOREIGN = {  # what a backup may have been given besides its rows, and a word the refusal names
    "trigger": ("CREATE TRIGGER wipe AFTER INSERT ON games BEGIN DELETE FROM users; END", "'wipe'"),
    "view": ("CREATE VIEW everyone AS SELECT login, password_hash FROM users", "'everyone'"),
    "table": ("CREATE TABLE notes (body TEXT)", "'notes'"),
    "index": ("CREATE INDEX games_by_seed ON games (seed)", "'games_by_seed'"),
    "wrong type": ("UPDATE games SET ms = 'lots'", "games.ms"),
    "too long": ("UPDATE games SET game = 'reloaded-reloaded-reloaded'", "games.game"),
}


@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_an_sqlite_backup_with_an_object_of_its_own_is_refused_and_leaves_nothing(
        kind: str, tmp_path: Path, site_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made = tmp_path / "made.backup"
    assert main(["backup", str(made), "--data-dir", str(site_dir)]) == 0
    capsys.readouterr()
    statement, word = FOREIGN[kind]
    with sqlite3.connect(made) as conn:
        conn.execute(statement)
    conn.close()
    site_seen, around = digest(site_dir), sorted(p.name for p in tmp_path.iterdir())
    refused(capsys, ["restore", str(made), "--data-dir", str(tmp_path / "new")], word)
    refused(capsys, ["restore", str(made), "--data-dir", str(site_dir), "--force"], word)
    assert digest(site_dir) == site_seen
    assert sorted(p.name for p in tmp_path.iterdir()) == around  # no new folder, no file left beside


@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_a_postgresql_dump_with_an_object_of_its_own_is_refused_and_leaves_nothing(
        kind: str, tmp_path: Path, two_databases: tuple[str, str]) -> None:
    source, target = two_databases
    store = Store(source)
    store.migrate()
    store.save_games([SavedGame("g1", "b1", "reloaded", None, "9", {"actions": []}, 10, 0, 0, None)])
    statement, word = FOREIGN[kind]
    with store.engine.begin() as conn:
        if kind == "trigger":
            conn.execute(text("CREATE FUNCTION wipe() RETURNS trigger LANGUAGE plpgsql AS "
                              "$$ BEGIN DELETE FROM users; RETURN NEW; END $$"))
            conn.execute(text("CREATE TRIGGER wipe AFTER INSERT ON games FOR EACH ROW EXECUTE FUNCTION wipe()"))
        elif kind in ("wrong type", "too long"):  # a column of another type in the dump's table
            column = word.split(".")[1]
            conn.execute(text(f"ALTER TABLE games ALTER COLUMN {column} TYPE text"))
            conn.execute(text(statement))
            word = "games"
        else:
            conn.execute(text(statement))
    store.close()
    backup = tmp_path / "pg.backup"
    made = patience("backup", backup, "--database-url", source)
    assert made.returncode == 0, made.stderr
    refused = patience("restore", backup, "--database-url", target)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert word.strip("'") in refused.stderr and "Traceback" not in refused.stderr
    tables = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
    functions = "SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace"
    assert rows(target, tables) == [] and rows(target, functions) == []
