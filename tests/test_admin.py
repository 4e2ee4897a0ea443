"""``patience admin``: accounts and roles, closing an account, the deal stock and the schema version,
on SQLite and PostgreSQL (real accounts made and signed in through :class:`Accounts`)."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher
from sqlalchemy.orm import Session

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
    # the login is free again, and a closed account cannot be found by it
    sign_up(store, "carol", "Carol")
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
