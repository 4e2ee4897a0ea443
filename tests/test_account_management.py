"""The account page's features through the real app, on SQLite and PostgreSQL: changing the password
(the other sessions end), the sessions listed and ended, the display name changed at most once a day
(the old one kept for moderators), the export of one's data, closing the account, and a forgotten
password reset by a link sent through a real SMTP server (aiosmtpd on a free port, no mock). Bad input
changes nothing; a form without this browser's CSRF token is refused."""

from __future__ import annotations

import email
import email.policy
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from helpers import FakeTime, TestClient
from patience.server.identity import SESSION_COOKIE
from patience.server.storage.roles import closed_name
from patience.server.storage.store import AuthSessionRow, MatchRow, PasswordResetRow, RatingRow, UserNameRow, UserRow
from test_server_duel import FAST_HASH, PASSWORD, browser, csrf, person, post, running

NEW_PASSWORD = "purple staple orbit"
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Inbox:
    """What a real SMTP server (aiosmtpd, on a thread of its own) received."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], str]] = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        text = "".join(f"{k}: {v}\n" for k, v in message.items()) + "\n" + message.get_content()
        with self.arrived:
            self.messages.append((list(envelope.rcpt_tos), text))
            self.arrived.notify_all()
        return "250 OK"

    def wait(self, count: int, seconds: float = 10.0) -> list[tuple[list[str], str]]:
        deadline = time.monotonic() + seconds
        with self.arrived:
            while len(self.messages) < count and time.monotonic() < deadline:
                self.arrived.wait(0.1)
        return list(self.messages)


@pytest.fixture
def smtp() -> Iterator[tuple[str, Inbox]]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{controller.port}", inbox
    finally:
        controller.stop()


@pytest.fixture
def app(database_url: str, fake_time: FakeTime, smtp: tuple[str, Inbox]) -> Iterator[Any]:
    from patience.server import create_app

    application = create_app(database_url=database_url, now=fake_time, wall=fake_time, tick_seconds=0.05,
                             save_seconds=0.05, password_hasher=FAST_HASH, smtp_url=smtp[0],
                             smtp_from="Arena <arena@test.example>", public_url="http://arena.test")
    with running(application) as started:
        yield started


def user_row(app: Any, login: str) -> UserRow:
    with Session(app.state.store.engine) as db:
        row = db.scalar(select(UserRow).where(UserRow.login == login))
        assert row is not None
        db.expunge(row)
        return row


def me(client: TestClient) -> dict[str, Any] | None:
    return client.get("/api/me").json()["user"]  # type: ignore[no-any-return]


def sign_in(app: Any, login: str, password: str = PASSWORD, agent: str = FIREFOX) -> tuple[TestClient, Any]:
    client = browser(app)
    client.headers["user-agent"] = agent
    return client, post(client, "/account/signin", login=login, password=password)


# -- password --------------------------------------------------------------------------------------


def test_a_new_password_ends_every_other_session(app: Any) -> None:
    here = person(app, "anna")
    there, answer = sign_in(app, "anna")
    assert answer.status_code == 200
    before = user_row(app, "anna").password_hash
    # wrong old password, too short a new one, no CSRF token: refused, nothing changes
    wrong = post(here, "/account/password", old="not the password", new=NEW_PASSWORD)
    assert wrong.status_code == 401 and wrong.json()["error"] == "wrong_password"
    short = post(here, "/account/password", old=PASSWORD, new="short")
    assert short.status_code == 400 and short.json()["error"] == "bad_password"
    forged = here.post("/account/password", data={"old": PASSWORD, "new": NEW_PASSWORD},
                       headers={"accept": "application/json"})
    assert forged.status_code == 403 and forged.json()["error"] == "csrf"
    assert user_row(app, "anna").password_hash == before and me(there) is not None
    done = post(here, "/account/password", old=PASSWORD, new=NEW_PASSWORD)
    assert done.status_code == 200, done.text
    after = user_row(app, "anna").password_hash
    assert after != before and after.startswith("$argon2id$")
    assert me(here)["login"] == "anna"  # this browser stays signed in
    assert me(there) is None  # every other session ended
    assert sign_in(app, "anna")[1].status_code == 401
    assert sign_in(app, "anna", NEW_PASSWORD)[1].status_code == 200


def test_signed_out_browsers_cannot_use_the_forms(app: Any) -> None:
    stranger = browser(app)
    assert post(stranger, "/account/password", old=PASSWORD, new=NEW_PASSWORD).status_code == 401
    assert post(stranger, "/account/close", password=PASSWORD).status_code == 401
    assert stranger.get("/account/export").status_code == 401
    assert stranger.get("/api/account").status_code == 401


def test_typed_passwords_are_limited_per_account(app: Any) -> None:
    client = person(app, "bruno")
    codes = [post(client, "/account/password", old="wrong wrong", new=NEW_PASSWORD).status_code for _ in range(11)]
    assert codes[:10] == [401] * 10 and codes[10] == 429
    # even the right one waits now: a guesser cannot go on
    assert post(client, "/account/password", old=PASSWORD, new=NEW_PASSWORD).status_code == 429


# -- sessions --------------------------------------------------------------------------------------


def test_sessions_are_listed_with_their_browser_and_can_be_ended(app: Any) -> None:
    here = person(app, "carla")
    there, _ = sign_in(app, "carla", agent="Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) "
                                          "AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/604.1")
    sessions = here.get("/api/account").json()["sessions"]
    assert len(sessions) == 2
    assert [s["current"] for s in sessions].count(True) == 1
    other = next(s for s in sessions if not s["current"])
    assert other["browser"] == "Safari on iPhone" and other["seen_ms"] >= other["created_ms"]
    assert all(len(s["id"]) == 16 and set(s) == {"id", "browser", "created_ms", "seen_ms", "current"}
               for s in sessions)  # no token, no whole hash
    assert post(here, "/account/sessions/end", session="0" * 16).status_code == 404
    assert post(here, "/account/sessions/end", session="not hex").status_code == 404
    assert me(there) is not None
    # another account cannot end it
    intruder = person(app, "carlo")
    assert post(intruder, "/account/sessions/end", session=other["id"]).status_code == 404
    assert me(there) is not None
    assert post(here, "/account/sessions/end", session=other["id"]).status_code == 200
    assert me(there) is None and me(here) is not None
    assert len(here.get("/api/account").json()["sessions"]) == 1
    # ending this browser's own session signs it out
    mine = here.get("/api/account").json()["sessions"][0]["id"]
    assert post(here, "/account/sessions/end", session=mine).json()["signed_out"] is True
    assert me(here) is None


# -- display name ----------------------------------------------------------------------------------


def test_the_name_changes_once_a_day_and_moderators_keep_the_old_one(app: Any) -> None:
    client = person(app, "dora")
    assert post(client, "/account/name", name="   ").json()["error"] == "bad_name"
    person(app, "doris")
    assert post(client, "/account/name", name="DORIS").json()["error"] == "name_taken"  # another's
    assert post(client, "/account/name", name="Dora").status_code == 200  # the same name: nothing done
    answer = post(client, "/account/name", name="Dora the Explorer")
    assert answer.status_code == 200 and answer.json()["user"]["name"] == "Dora the Explorer"
    again = post(client, "/account/name", name="Dora Again")
    assert again.status_code == 429 and again.json()["error"] == "rename_limited" and again.json()["retry_after"] > 3600
    row = user_row(app, "dora")
    assert row.name == "Dora the Explorer"
    assert app.state.accounts.former_names(row.id)[0][0] == "Dora"


# -- export ----------------------------------------------------------------------------------------


def test_the_export_holds_the_account_and_no_secret(app: Any) -> None:
    client = person(app, "emil")
    post(client, "/account/email", email="emil@Example.ORG", password=PASSWORD)
    row = user_row(app, "emil")
    person(app, "erna")
    other_row = user_row(app, "erna")
    record = {"players": [{"id": row.id, "name": "Emil"}, {"id": other_row.id, "name": "Erna"}], "games": []}
    with Session(app.state.store.engine) as db, db.begin():
        db.execute(insert(MatchRow), [{
            "id": "m-export", "game": "reloaded", "variant": "standard", "limit_s": 300, "options": "{}",
            "seed": "f" * 64, "nonce": "", "commitment": "c" * 64, "proved": True, "player_a": row.id,
            "player_b": other_row.id, "rating_a": "1500 350 0.06", "rating_b": "1500 350 0.06", "state": "over",
            "created_ms": 1, "ended_ms": 2, "winner": 0, "record": json.dumps(record)}])
    answer = client.get("/account/export")
    assert answer.status_code == 200
    assert answer.headers["content-disposition"].startswith("attachment;")
    data = answer.json()
    assert data["format"] == "patience-arena-account"
    assert data["account"] == {"id": row.id, "login": "emil", "name": "Emil", "email": "emil@example.org",
                               "created_ms": row.created_ms}
    assert [m["id"] for m in data["matches"]] == ["m-export"]
    assert data["matches"][0]["record"]["players"][1]["name"] == "Erna"
    for key in ("games", "ratings", "rating_history", "tournaments", "daily", "sessions"):
        assert isinstance(data[key], list)
    text = answer.text
    with Session(app.state.store.engine) as db:
        hashes = list(db.scalars(select(AuthSessionRow.token_hash)))
    assert row.password_hash not in text and other_row.password_hash not in text
    assert client.cookies[SESSION_COOKIE] not in text and not any(h in text for h in hashes)
    assert "erna" not in text  # the opponent's login name is private


# -- e-mail ----------------------------------------------------------------------------------------


def test_the_e_mail_address_needs_the_password_and_stays_private(app: Any) -> None:
    client = person(app, "fritz")
    assert post(client, "/account/email", email="not an address", password=PASSWORD).json()["error"] == "bad_email"
    assert post(client, "/account/email", email="fritz@example.org", password="wrong one").status_code == 401
    assert user_row(app, "fritz").email is None
    assert post(client, "/account/email", email="fritz@example.org", password=PASSWORD).status_code == 200
    assert client.get("/api/account").json()["email"] == "fritz@example.org"
    profile = client.get(f"/api/profile/{user_row(app, 'fritz').id}").text
    assert "fritz@example.org" not in profile
    assert post(client, "/account/email", email="", password=PASSWORD).json()["email"] is None


# -- closing ---------------------------------------------------------------------------------------


def test_closing_an_account_keeps_its_matches_under_a_neutral_name_and_leaves_the_rankings(app: Any) -> None:
    client = person(app, "gina")
    other_device, _ = sign_in(app, "gina")
    opponent = person(app, "gustav")
    row, them = user_row(app, "gina"), user_row(app, "gustav")
    record = {"players": [{"id": row.id, "name": "Gina"}, {"id": them.id, "name": "Gustav"}], "games": []}
    with Session(app.state.store.engine) as db, db.begin():
        db.execute(insert(MatchRow), [{
            "id": "m-close", "game": "reloaded", "variant": "standard", "limit_s": 300, "options": "{}",
            "seed": "f" * 64, "nonce": "", "commitment": "c" * 64, "proved": True, "player_a": row.id,
            "player_b": them.id, "rating_a": "1500 350 0.06", "rating_b": "1500 350 0.06", "state": "over",
            "created_ms": 1, "ended_ms": 2, "winner": 0, "score_a": 900, "score_b": 400, "final_a": 990,
            "final_b": 400, "record": json.dumps(record)}])
        db.execute(insert(RatingRow), [{"user_id": who, "game": "reloaded", "rating": rating, "deviation": 80,
                                        "volatility": 0.06, "matches": 1, "updated_ms": 2}
                                       for who, rating in ((row.id, 1520.0), (them.id, 1480.0))])

    def ranked() -> list[str]:
        return [p["name"] for p in opponent.get("/api/leaderboard?game=reloaded").json()["players"]]

    assert ranked() == ["Gina", "Gustav"]
    assert post(client, "/account/close", password="wrong password").status_code == 401
    assert post(client, "/account/close").status_code == 401
    assert user_row(app, "gina").password_hash == row.password_hash
    answer = post(client, "/account/close", password=PASSWORD)
    assert answer.status_code == 200 and answer.json()["closed"] is True
    assert me(client) is None and me(other_device) is None
    with Session(app.state.store.engine) as db:
        closed = db.get_one(UserRow, row.id)
        match = db.get_one(MatchRow, "m-close")
        names = [n.name for n in db.scalars(select(UserNameRow).where(UserNameRow.user_id == row.id))]
    assert closed.login.startswith("~") and closed.password_hash == "" and closed.email is None
    assert closed.name == closed_name(row.id) == f"<closed:{row.id[:8]}>"  # a mark, in no language
    assert names == ["Gina"]  # for moderators
    players = json.loads(match.record)["players"]
    assert players[0]["name"] == closed.name and players[1]["name"] == "Gustav"
    assert ranked() == ["Gustav"]  # a closed account leaves the rankings
    # the opponent's history still has the match, under the neutral name
    view = opponent.get("/api/matches/m-close").json()
    assert "Gina" not in json.dumps(view) and closed.name in json.dumps(view)
    # every answer naming the player sends the mark, which the pages write in their language, never English
    # words (nor the login, old or closed)
    answers = [opponent.get(f"/api/profile/{row.id}").text, opponent.get(f"/api/profile/{them.id}").text,
               opponent.get(f"/api/matches?user={them.id}").text, opponent.get("/api/matches/m-close").text,
               opponent.get(f"/matches?player={row.id}").text, opponent.get(f"/matches?player={them.id}").text]
    for text in answers:
        assert "Closed account" not in text and "gina" not in text.lower() and "~" not in text, text
    assert json.loads(answers[0])["user"]["name"] == closed.name
    assert [p["name"] for p in json.loads(answers[2])["matches"][0]["players"]] == [closed.name, "Gustav"]
    # the history the server renders: the mark for the page's script (its words in English until it runs)
    history = answers[5]
    assert f'<a href="/profile?u={row.id}" data-player="&lt;closed:{row.id[:8]}&gt;">' in history
    assert f'value="{row.id}"' in answers[4]  # the search box keeps the id: a closed account's name is no text
    # the old login and a wrong password: the usual answer
    refused = sign_in(app, "gina", "not her password")[1]
    assert refused.status_code == 401 and refused.json()["error"] == "wrong_password"


def test_a_closed_accounts_login_is_kept_for_its_player_for_30_days(app: Any, fake_time: FakeTime) -> None:
    from patience.server.storage.roles import close_account

    client = person(app, "gina")
    person(app, "gustav")
    gina = user_row(app, "gina")
    assert post(client, "/account/close", password=PASSWORD).status_code == 200
    # nobody may sign up as gina meanwhile: she may come back
    taken = post(browser(app), "/account/signup", login="gina", password=PASSWORD)
    assert taken.status_code == 409 and taken.json()["error"] == "login_taken"
    assert "kept for its player until 1970-01-31" in taken.json()["msg"]
    # within the 30 days her login and password reopen the account: the same one, her name back
    fake_time.t += 29 * 86400
    back, answer = sign_in(app, "gina")
    assert answer.status_code == 200, answer.text
    assert me(back) == {"id": gina.id, "login": "gina", "name": "Gina"} | {k: v for k, v in me(back).items()
                                                                             if k not in ("id", "login", "name")}
    reopened = user_row(app, "gina")
    assert reopened.id == gina.id and reopened.password_hash == gina.password_hash
    # one an admin (or a moderator) closed is kept too, and no password reopens it
    close_account(app.state.store, "gustav", at_ms=int(fake_time() * 1000))
    assert sign_in(app, "gustav")[1].status_code == 401
    assert post(browser(app), "/account/signup", login="gustav", password=PASSWORD).status_code == 409
    # after the 30 days the login is free for a newcomer; the closed account stays closed
    fake_time.t += 31 * 86400
    newcomer = post(browser(app), "/account/signup", login="gustav", password=PASSWORD)
    assert newcomer.status_code == 200 and newcomer.json()["user"]["id"] != gina.id


# -- a forgotten password, by e-mail through a real SMTP server --------------------------------------


def test_a_forgotten_password_is_reset_by_a_link_sent_by_mail(app: Any, smtp: tuple[str, Inbox]) -> None:
    _, inbox = smtp
    client = person(app, "hanna")
    assert post(client, "/account/email", email="hanna@example.org", password=PASSWORD).status_code == 200
    phone, _ = sign_in(app, "hanna")
    assert browser(app).get("/api/me").json()["mail"] is True
    stranger = browser(app)
    # the same answer for an account without an address and for none at all
    for who in ("nobody-here", "nobody@example.org"):
        answer = post(stranger, "/account/forgot", who=who)
        assert answer.status_code == 200 and answer.json() == {"ok": True, "sent": True}
    answer = post(stranger, "/account/forgot", who="HANNA", lang="de")
    assert answer.status_code == 200 and answer.json() == {"ok": True, "sent": True}
    (to, text), = inbox.wait(1)
    assert to == ["hanna@example.org"] and "Subject: Patience Arena: neues Passwort" in text
    assert "From: Arena <arena@test.example>" in text
    token = re.search(r"http://arena\.test/account\?reset=([A-Za-z0-9_-]+)", text).group(1)
    with Session(app.state.store.engine) as db:  # only the token's hash is kept
        kept = list(db.scalars(select(PasswordResetRow.token_hash)))
    assert len(kept) == 1 and token not in kept
    assert post(stranger, "/account/reset", token=token, password="short").json()["error"] == "bad_password"
    # the page asks whether the link works before showing its form (and changes nothing by asking)
    assert post(stranger, "/account/reset/check", token=token).json() == {"ok": True, "works": True}
    assert post(stranger, "/account/reset/check", token="x" * 43).json() == {"ok": True, "works": False}
    assert stranger.post("/account/reset/check", data={"token": token},
                         headers={"accept": "application/json"}).status_code == 403  # no CSRF token
    assert post(stranger, "/account/reset", token="x" * 43, password=NEW_PASSWORD).json()["error"] == "bad_token"
    assert stranger.post("/account/reset", data={"token": token, "password": NEW_PASSWORD},
                         headers={"accept": "application/json"}).status_code == 403  # no CSRF token
    done = post(stranger, "/account/reset", token=token, password=NEW_PASSWORD)
    assert done.status_code == 200, done.text
    assert me(client) is None and me(phone) is None  # every session ended
    assert post(stranger, "/account/reset", token=token, password="another password").json()["error"] == "bad_token"
    assert post(stranger, "/account/reset/check", token=token).json()["works"] is False  # used
    assert sign_in(app, "hanna")[1].status_code == 401
    assert sign_in(app, "hanna", NEW_PASSWORD)[1].status_code == 200
    time.sleep(0.2)
    assert len(inbox.messages) == 1  # no mail to the unknown ones


def test_reset_links_expire_and_mails_are_limited(app: Any, smtp: tuple[str, Inbox]) -> None:
    _, inbox = smtp
    client = person(app, "ida")
    post(client, "/account/email", email="ida@example.org", password=PASSWORD)
    stranger = browser(app)
    for _ in range(5):  # by the address too: the same answer, but only three mails an hour
        assert post(stranger, "/account/forgot", who="ida@EXAMPLE.org").status_code == 200
    assert post(stranger, "/account/forgot", who="ida").status_code == 429  # this address asked enough
    messages = inbox.wait(3)
    time.sleep(0.3)
    assert len(inbox.messages) == 3 and len(messages) == 3
    token = re.search(r"reset=([A-Za-z0-9_-]+)", messages[0][1]).group(1)
    with Session(app.state.store.engine) as db, db.begin():
        db.execute(update(PasswordResetRow).values(expires_ms=1))  # 30 minutes later
    again = browser(app)
    assert post(again, "/account/reset/check", token=token).json()["works"] is False  # too old
    assert post(again, "/account/reset", token=token, password=NEW_PASSWORD).json()["error"] == "bad_token"
    assert sign_in(app, "ida")[1].status_code == 200


def test_without_smtp_there_is_no_reset(database_url: str, fake_time: FakeTime) -> None:
    from patience.server import create_app

    with running(create_app(database_url=database_url, now=fake_time, wall=fake_time,
                            password_hasher=FAST_HASH)) as plain:
        client = browser(plain)
        assert client.get("/api/me").json()["mail"] is False
        assert post(client, "/account/forgot", who="anyone").status_code == 404
        assert csrf(client)


def test_moderators_find_an_account_by_a_name_it_gave_up(app: Any, database_url: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from patience.cli import main

    client = person(app, "jonas")
    assert post(client, "/account/name", name="Rude Name").status_code == 200
    row = user_row(app, "jonas")
    assert post(client, "/account/close", password=PASSWORD).status_code == 200
    assert main(["admin", "--database-url", database_url, "names", "rude name"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"~{row.id}\tClosed account {row.id[:8]}\t(now)"  # patience admin speaks English
    assert [line.split("\t")[1] for line in out[1:]] == ["Jonas", "Rude Name"]
    assert main(["admin", "--database-url", database_url, "names", "nobody at all"]) == 0
    assert "no account" in capsys.readouterr().out


def test_a_wrong_smtp_url_is_one_line() -> None:
    from patience.errors import BadInputError
    from patience.server.mail import Mailer

    for url in ("http://mail.example", "smtp://", "smtp://mail.example:port"):
        with pytest.raises(BadInputError, match="not an SMTP URL"):
            Mailer.from_url(url)


def test_serve_refuses_a_wrong_smtp_or_public_url(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from patience.cli import main

    for extra in (["--smtp-url", "mail.example"], ["--public-url", "patience.example.org"]):
        assert main(["serve", "--data-dir", str(tmp_path), "--port", str(free_port()), *extra]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and ("SMTP URL" in err or "--public-url" in err)
