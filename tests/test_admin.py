"""``patience admin``: accounts and roles, closing an account, the deal stock and the schema version,
on SQLite and PostgreSQL (real accounts made and signed in through :class:`Accounts`)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy.orm import Session
from websockets.sync.client import connect

from helpers import run_async
from patience.cli import main
from patience.server.accounts import AccountError, Accounts
from patience.server.storage.store import DealStockRow, Store

FAST_HASH = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


def admin(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> tuple[int, str, str]:
    code = main(["admin", "--database-url", url, *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(database_url: str) -> Store:
    store = Store(database_url)
    store.migrate()
    return store


def sign_up(store: Store, login: str, name: str) -> str:
    async def go() -> str:
        accounts = Accounts(store, hasher=FAST_HASH)
        return (await accounts.sign_up(login, name, "correct horse battery", None))[1]
    return run_async(go)


def sign_in(store: Store, login: str) -> str:
    async def go() -> str:
        accounts = Accounts(store, hasher=FAST_HASH)
        return (await accounts.sign_in(login, "correct horse battery", None, "10.0.0.1"))[1]
    return run_async(go)


def test_users_grant_revoke(store: Store, database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    sign_up(store, "alice", "Alice")
    sign_up(store, "bob_99", "Bobby")
    code, out, _ = admin(capsys, database_url, "users")
    assert code == 0
    lines = out.splitlines()
    assert [line.split("\t")[:2] for line in lines] == [["alice", "Alice"], ["bob_99", "Bobby"]]
    assert all(line.endswith("\t-") for line in lines)
    assert admin(capsys, database_url, "grant", "Alice", "moderator")[:2] == (0, "alice is moderator\n")
    assert admin(capsys, database_url, "grant", "alice", "moderator")[1] == "alice is moderator already\n"
    assert admin(capsys, database_url, "grant", "alice", "admin")[0] == 0
    code, out, _ = admin(capsys, database_url, "users", "--find", "LIC")
    assert code == 0 and out.splitlines()[0].split("\t")[0] == "alice" and out.endswith("\tadmin,moderator\n")
    assert admin(capsys, database_url, "users", "--find", "_")[1].startswith("bob_99\t")  # _ is no wildcard
    assert admin(capsys, database_url, "users", "--find", "nobody")[1] == "no account matches 'nobody'\n"
    assert admin(capsys, database_url, "revoke", "alice", "admin")[1] == "alice is no longer admin\n"
    assert admin(capsys, database_url, "revoke", "alice", "admin")[1] == "alice was not admin\n"
    assert admin(capsys, database_url, "users", "--find", "alice")[1].endswith("\tmoderator\n")


def test_close_ends_sign_in_and_sessions(store: Store, database_url: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    token = sign_up(store, "carol", "Carol")
    token2 = sign_in(store, "carol")
    admin(capsys, database_url, "grant", "carol", "admin")
    accounts = Accounts(store, hasher=FAST_HASH)
    assert accounts.user_for(token) is not None and accounts.user_for(token2) is not None
    code, out, _ = admin(capsys, database_url, "close", "carol")
    assert code == 0 and out.startswith("closed carol")
    assert accounts.user_for(token) is None and accounts.user_for(token2) is None
    with pytest.raises(AccountError):
        sign_in(store, "carol")
    listed = admin(capsys, database_url, "users")[1].split("\t")
    assert listed[0].startswith("~") and listed[1].startswith("Closed account") and listed[-1] == "-\n"
    assert "Carol" not in admin(capsys, database_url, "users")[1]
    # the login is kept (30 days: no sign-up takes it, no password reopens an account an admin closed),
    # and a closed account cannot be found by it
    with pytest.raises(AccountError, match="kept for its player"):
        sign_up(store, "carol", "Carol")
    assert admin(capsys, database_url, "close", "carol")[0] == 2
    assert admin(capsys, database_url, "close", "nobody")[0] == 2


def test_stock_and_schema(store: Store, database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert admin(capsys, database_url, "stock")[1] == "the deal stock is empty\n"
    with Session(store.engine) as db, db.begin():
        db.add_all([DealStockRow(variant="teppich/waste", deal=f"{i:064x}", nodes=10, made_ms=0) for i in range(3)])
        db.add(DealStockRow(variant="faecher/standard", deal="f" * 64, nodes=10, made_ms=0))
    assert admin(capsys, database_url, "stock")[1] == "faecher/standard\t1\nteppich/waste\t3\n"
    code, out, _ = admin(capsys, database_url, "schema")
    assert code == 0 and out.startswith("schema 0") and "up to date" in out


@pytest.mark.parametrize("args, said", [
    (["grant", "alice", "king"], "unknown role 'king'"),
    (["revoke", "nobody", "admin"], "no account with the login name 'nobody'"),
    (["close", "nobody"], "no account"),
    ([], "admin needs an action"),
])
def test_bad_input_is_one_line_and_code_2(store: Store, database_url: str, capsys: pytest.CaptureFixture[str],
                                          args: list[str], said: str) -> None:
    sign_up(store, "alice", "Alice")
    code, _, err = admin(capsys, database_url, *args)
    assert code == 2
    assert said in err and err.startswith("patience: ") and err.count("\n") == 1


def test_no_database_in_the_data_folder(tmp_path: object, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PATIENCE_DATABASE_URL", raising=False)
    assert main(["admin", "--data-dir", str(tmp_path), "schema"]) == 2
    assert "no database at" in capsys.readouterr().err


# -- beside a running, busy server ---------------------------------------------------------------------


@pytest.mark.slow
def test_admin_works_beside_a_running_busy_server(database_url: str, tmp_path: Path) -> None:
    """A ``patience serve`` of its own (no ``--redis-url``: on SQLite it holds the file for itself) with a
    solo game played as fast as it answers: grant, users, bad input and close work meanwhile, at once."""
    from arena_processes import Player, ServeProcess

    site = ServeProcess(database_url, None, tmp_path, "site")
    stop, acks, failures = threading.Event(), [0], []
    try:
        site.wait_ready()
        started = time.monotonic()  # what one admin command costs on this machine now, beside an idle server
        assert patience_admin(database_url, "users", "--find", "nobody").returncode == 0
        one = time.monotonic() - started
        anna, bruno = Player(site.url, "annadmin"), Player(site.url, "brunadmin")
        cookie = "; ".join(f"{name}={value}" for name, value in anna.http.cookies.items())
        with connect(f"ws://127.0.0.1:{site.port}/ws", additional_headers={"Cookie": cookie}) as ws:
            ws.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": "9", "cid": "solo"}}))

            def playing() -> None:
                try:
                    while not stop.is_set():  # stock after stock: a move written and acknowledged each time
                        ack = acks[0] + 1
                        ws.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
                        while json.loads(ws.recv(timeout=15))["d"].get("ack") != ack:
                            pass
                        acks[0] = ack
                except BaseException as exc:
                    failures.append(exc)

            thread = threading.Thread(target=playing)
            thread.start()
            while acks[0] < 5 and thread.is_alive():
                time.sleep(0.01)
            before, started = acks[0], time.monotonic()
            granted = patience_admin(database_url, "grant", "annadmin", "moderator")
            listed = patience_admin(database_url, "users", "--find", "admin")
            wrong = patience_admin(database_url, "grant", "nobody", "moderator")
            closed = patience_admin(database_url, "close", "brunadmin")
            seconds = time.monotonic() - started
            stop.set()
            thread.join(timeout=20)
        assert not failures, failures
        assert granted.returncode == 0 and granted.stdout == "annadmin is moderator\n", granted.stderr
        assert listed.returncode == 0 and "annadmin\tAnnadmin" in listed.stdout and "moderator" in listed.stdout
        assert wrong.returncode == 2 and len(wrong.stderr.splitlines()) == 1 and "nobody" in wrong.stderr
        assert closed.returncode == 0 and "closed brunadmin" in closed.stdout, closed.stderr
        # at once, the game going on: never waiting for the server (its lock held for as long as it plays)
        # beyond what the four commands cost on this machine, however loaded its cores are
        assert seconds < 20 + 4 * one and acks[0] > before, (seconds, one, acks[0], before)
        assert anna.http.get("/mod").status_code == 200  # a moderator now, for the running site
        assert bruno.http.get("/api/me").json()["user"] is None  # closed: signed out
        anna.close()
        bruno.close()
    finally:
        stop.set()
        site.stop()


def patience_admin(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patience", "admin", "--database-url", url, *args],
                          capture_output=True, text=True, timeout=90, check=False)
