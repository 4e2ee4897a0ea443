"""Duels through the real app: accounts, the lobby, whole matches between two websocket clients,
reconnecting, acks sent twice, a restart in the middle of a match, and what may never reach a
player (a face-down card, the seed before the end, the opponent's cards).

Tests that store something run on SQLite and on PostgreSQL (the ``database_url`` fixture).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from argon2 import PasswordHasher
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from helpers import FakeTime, TestClient, at_a_scripts_pace, mentioned_cards
from patience.duel import Format as DuelFormat
from patience.duel import Match, verify_commitment, verify_match
from patience.duel import Player as DuelPlayer
from patience.games import DRAW, REDEAL
from patience.record import replay
from patience.rng import is_deal_key
from patience.server import create_app
from patience.server.arena import Arena, LiveMatch
from patience.server.arena.matches import COUNTDOWN_SECONDS
from patience.server.identity import SESSION_COOKIE
from patience.server.storage.league import finish_match, insert_match
from patience.server.storage.store import ChallengeRow, MatchMoveRow, MatchRow, SigninFailureRow, UserRow
from patience.session import ManualClock

FAST_HASH = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # argon2id, cheap for tests
PASSWORD = "correct horse battery"
FORMAT = "reloaded/standard/300"


def deal_key_for(number: int) -> str:
    return hashlib.sha256(f"test deal {number}".encode()).hexdigest()


@pytest.fixture
def seeds(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """Duels deal from a known list of deal keys, so that a test can tell which deal a match has."""
    numbers = itertools.count(1)
    monkeypatch.setattr("patience.server.arena.dealstock.new_deal_key", lambda: deal_key_for(next(numbers)))
    return numbers


def make_app(where: Path | str, fake_time: FakeTime) -> Any:
    kwargs: dict[str, Any] = {"database_url": where} if isinstance(where, str) else {"data_dir": where}
    return create_app(now=fake_time, wall=fake_time, tick_seconds=0.02, save_seconds=0.05, password_hasher=FAST_HASH,
                      **kwargs)


@contextlib.contextmanager
def running(application: Any) -> Iterator[Any]:
    """The app started; every browser of the test then runs on its event loop (see :func:`browser`)."""
    with TestClient(application) as main:
        application.state.test_portal = main.portal
        application.state.test_pages = []
        try:
            yield application
        finally:
            for page in application.state.test_pages:  # an open socket would keep the app from stopping
                page.close()


_ADDRESSES = itertools.count(2)


def browser(application: Any, address: str | None = None) -> TestClient:
    """A browser of its own (its own cookies and loopback address, as another person's would be: accounts
    from one address are linked and move no rating against each other) on the app's event loop: pages of
    one test talk to one server."""
    n = next(_ADDRESSES)
    client = TestClient(application, client=(address or f"127.1.{n // 250 % 250}.{n % 250 + 1}", 50000))
    client.portal = application.state.test_portal
    return client


@pytest.fixture
def app(tmp_path: Path, fake_time: FakeTime, seeds: Any) -> Iterator[Any]:
    with running(make_app(tmp_path, fake_time)) as application:
        yield application


def arena_of(app: Any) -> Arena:
    return app.state.arena  # type: ignore[no-any-return]


# -- people and their pages ----------------------------------------------------------------------


def csrf(client: TestClient) -> str:
    return client.get("/api/me").json()["csrf"]  # type: ignore[no-any-return]


def post(client: TestClient, path: str, **fields: str) -> Any:
    data = {"csrf": csrf(client), **fields}
    return client.post(path, data=data, headers={"accept": "application/json"})


def person(app: Any, login: str, address: str | None = None) -> TestClient:
    """A browser with an account of its own, signed in (from an address of its own, or ``address``)."""
    client = browser(app, address)
    answer = post(client, "/account/signup", login=login, name=login.title(), password=PASSWORD)
    assert answer.status_code == 200, answer.text
    return client


class Page:
    """One duel page: its websocket, every message it got (raw), and its intents' ack counter."""

    def __init__(self, client: TestClient, cid: str = "page") -> None:
        self.client = client
        self.cid = cid
        self.ws_cm = client.websocket_connect("/ws")
        self.ws = self.ws_cm.__enter__()
        self.closed = False
        client.app.state.test_pages.append(self)  # type: ignore[attr-defined]
        self.raw: list[str] = []
        self.ack = 0
        self.v = 0
        self.match_id: str | None = None
        self.side = 0

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.ws_cm.__exit__(None, None, None)

    def send(self, t: str, d: dict[str, Any] | None = None) -> None:
        self.ws.send_text(json.dumps({"t": t, "d": d or {}}))

    def recv(self) -> dict[str, Any]:
        message = self.ws.portal.call(_within, self.ws._send_rx)  # a missing answer fails, never hangs
        self.ws._raise_on_close(message)
        text = message["text"]
        self.raw.append(text)
        msg = json.loads(text)
        d = msg["d"]
        if msg["t"] == "duel":
            self.match_id, self.v, self.side = d["id"], d["v"], d["you"]
        elif msg["t"] == "dev":
            assert d["v"] <= self.v + 1, f"version {d['v']} after {self.v}: one was skipped"
            self.v = max(self.v, d["v"])  # an answer sent again repeats its version
        return msg  # type: ignore[no-any-return]

    def until(self, wanted: Callable[[dict[str, Any]], bool], limit: int = 400, faults: bool = False,
              ) -> dict[str, Any]:
        for _ in range(limit):
            msg = self.recv()
            if wanted(msg):
                return msg
            assert faults or not (msg["t"] == "err" and msg["d"]["code"] == "server_error"), msg
        raise AssertionError("the wanted message did not come")

    def intent(self, t: str, **d: Any) -> dict[str, Any]:
        self.ack += 1
        self.send(t, {"ack": self.ack, **d})
        ack = self.ack
        return self.until(lambda m: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack)

    def join(self, match_id: str, v: int = 0) -> None:
        self.send("match", {"id": match_id, "v": v, "cid": self.cid})


async def _within(stream: Any) -> Any:
    with anyio.fail_after(10):
        return await stream.receive()


def let_start(app: Any) -> None:
    """The countdown after "match found" passes (on the test's clock): both clocks run, moves count."""
    clock = arena_of(app).now
    assert isinstance(clock, FakeTime)
    clock.t += COUNTDOWN_SECONDS


def pair(app: Any, one: str = "anna", two: str = "bruno", fmt: str = FORMAT, *, started: bool = True,
         ) -> tuple[Page, Page, LiveMatch]:
    """Two new players paired from a pool; with ``started``, the countdown has passed."""
    a, b = Page(person(app, one), "pa"), Page(person(app, two), "pb")
    a.send("seek", {"format": fmt, "cid": a.cid})
    a.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == fmt)
    b.send("seek", {"format": fmt, "cid": b.cid})
    start_b = b.until(lambda m: m["t"] == "duel")
    start_a = a.until(lambda m: m["t"] == "duel")
    assert start_a["d"]["id"] == start_b["d"]["id"]
    live = arena_of(app).matches[start_a["d"]["id"]]
    if started:
        let_start(app)
    return a, b, live


def play(page: Page, live: LiveMatch, rng: random.Random) -> dict[str, Any]:
    """One useful move of the page's side (foundation moves preferred), as the browser sends it."""
    session = live.match.sessions[page.side]
    moves = session.state.useful_moves()
    up = [m for m in moves if m.dst == "f"]
    move = up[0] if up and rng.random() < 0.8 else rng.choice(moves)
    if move in (DRAW, REDEAL):
        return page.intent("stock")
    return page.intent("move", src=move.src, dst=move.dst, n=move.n)


# -- accounts ------------------------------------------------------------------------------------


def test_sign_up_sign_in_sign_out(app: Any) -> None:
    client = browser(app)
    token = csrf(client)
    answer = client.post("/account/signup", data={"csrf": token, "login": "Carla", "name": " Carla  R. ",
                                                  "password": PASSWORD}, headers={"accept": "application/json"})
    assert answer.status_code == 200 and answer.json()["user"]["name"] == "Carla R."
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
    assert client.get("/api/me").json()["user"]["login"] == "carla"
    assert post(client, "/account/signup", login="carla", password=PASSWORD).status_code == 409  # taken
    assert post(client, "/account/signout").status_code == 200
    assert client.get("/api/me").json()["user"] is None
    assert post(client, "/account/signin", login="CARLA", password=PASSWORD).json()["user"]["name"] == "Carla R."
    assert post(client, "/account/name", name="Carla the Great").json()["user"]["name"] == "Carla the Great"
    with Session(app.state.store.engine) as db:
        stored = db.scalar(select(UserRow.password_hash).where(UserRow.login == "carla"))
    assert stored.startswith("$argon2id$") and PASSWORD not in stored


def test_a_plain_form_post_is_redirected(app: Any) -> None:
    client = browser(app)
    answer = client.post("/account/signup", data={"csrf": csrf(client), "login": "dora", "password": PASSWORD,
                                                  "next": "https://evil.example/"}, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/duel"  # never to another site
    wrong = client.post("/account/signin", data={"csrf": csrf(client), "login": "dora", "password": "nope-nope"},
                        follow_redirects=False)
    assert wrong.status_code == 303 and "error=wrong_password" in wrong.headers["location"]


@pytest.mark.parametrize("forged", ["missing", "wrong", "other_browser", "other_site"])
def test_csrf_is_rejected(app: Any, forged: str) -> None:
    client = browser(app)
    data = {"login": "eve", "name": "Eve", "password": PASSWORD, "csrf": csrf(client)}
    headers = {"accept": "application/json"}
    if forged == "missing":
        del data["csrf"]
    elif forged == "wrong":
        data["csrf"] = "0" * 64
    elif forged == "other_browser":
        data["csrf"] = csrf(browser(app))  # a token, but of another browser
    else:
        headers["origin"] = "http://evil.example"
    answer = client.post("/account/signup", data=data, headers=headers)
    assert answer.status_code == 403 and answer.json()["error"] == "csrf"
    assert "set-cookie" not in answer.headers or SESSION_COOKIE not in answer.headers["set-cookie"]
    with Session(app.state.store.engine) as db:
        assert db.scalar(select(func.count()).select_from(UserRow)) == 0  # nothing was made


def test_wrong_passwords_are_rate_limited(app: Any, fake_time: FakeTime) -> None:
    person(app, "frank")
    client = browser(app)
    for _ in range(5):
        assert post(client, "/account/signin", login="frank", password="guess-guess").status_code == 401
    limited = post(client, "/account/signin", login="frank", password=PASSWORD)  # even the right one waits
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert limited.json()["error"] == "rate_limited"
    fake_time.t += 301  # the window has passed
    assert post(client, "/account/signin", login="frank", password=PASSWORD).status_code == 200


def test_failed_sign_ins_outlive_a_restart(database_url: str, fake_time: FakeTime, seeds: Any) -> None:
    with running(make_app(database_url, fake_time)) as first:
        person(first, "frank")
        client = browser(first, "127.0.0.9")
        for _ in range(5):
            assert post(client, "/account/signin", login="frank", password="guess-guess").status_code == 401
    fake_time.t += 60
    with running(make_app(database_url, fake_time)) as second:
        client = browser(second, "127.0.0.9")  # the same address
        limited = post(client, "/account/signin", login="frank", password=PASSWORD)
        assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
        assert 230 <= int(limited.headers["retry-after"]) <= 241  # what is left of the 5 minutes
        with Session(second.state.store.engine) as db:
            kept = list(db.scalars(select(SigninFailureRow.key_hash)))
        assert len(kept) == 10 and not any("frank" in key for key in kept)  # login and address, hashed
        fake_time.t += 241
        assert post(client, "/account/signin", login="frank", password=PASSWORD).status_code == 200


def test_solo_statistics_carry_over_at_sign_up(app: Any) -> None:
    client = browser(app)
    client.get("/")
    with client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"t": "new", "d": {"game": "faecher", "seed": "5", "cid": "solo"}}))
        assert ws.receive_json()["t"] == "game"
        ws.send_text(json.dumps({"t": "giveup", "d": {"ack": 1}}))
        while ws.receive_json()["d"].get("ack") != 1:
            pass
    client.get("/api/stats")  # saves the game
    answer = post(client, "/account/signup", login="gina", password=PASSWORD)
    user = answer.json()["user"]["id"]
    profile = client.get(f"/api/profile/{user}").json()
    assert profile["solo"]["faecher"]["played"] == 1


# -- the lobby -----------------------------------------------------------------------------------


def test_the_lobby_says_how_many_wait_and_pairs_the_closest_rating(app: Any) -> None:
    watcher = Page(person(app, "hans"))
    watcher.send("lobby")
    first = watcher.until(lambda m: m["t"] == "lobby")["d"]
    assert all(pool["waiting"] == 0 for pool in first["pools"])
    assert {p["format"] for p in first["pools"]} >= {FORMAT, "faecher/standard/600", "teppich/waste/300"}
    assert not any(p["game"] == "teppich" and p["variant"] in ("4x5", "5x6") for p in first["pools"])
    ida = Page(person(app, "ida"))
    ida.send("seek", {"format": FORMAT})
    shown = watcher.until(lambda m: m["t"] == "lobby" and any(p["waiting"] for p in m["d"]["pools"]))["d"]
    pool = next(p for p in shown["pools"] if p["format"] == FORMAT)
    assert pool["waiting"] == 1 and pool["players"][0]["name"] == "Ida"
    ida.send("unseek")
    watcher.until(lambda m: m["t"] == "lobby" and not any(p["waiting"] for p in m["d"]["pools"]))
    anonymous = Page(browser(app))
    anonymous.send("seek", {"format": FORMAT})
    assert anonymous.until(lambda m: m["t"] == "err")["d"]["code"] == "sign_in"
    anonymous.send("seek", {"format": "teppich/4x5/300"})  # the base carpet is never a duel
    for page in (watcher, ida, anonymous):
        page.close()


def test_pairing_prefers_the_closest_rating(app: Any, monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime) -> None:
    from patience.ratings import Rating

    strong, weak, middle = Page(person(app, "strong")), Page(person(app, "weak")), Page(person(app, "middle"))
    ids = {page.client.get("/api/me").json()["user"]["id"]: page for page in (strong, weak, middle)}
    ratings = {id(strong): Rating(1900, 80), id(weak): Rating(1200, 80), id(middle): Rating(1560, 80)}
    monkeypatch.setattr("patience.server.arena.lobby.seekers_facts",
                        lambda engine, game, users: {user: (ratings[id(ids[user])], None) for user in users})
    for page in (strong, weak):  # 700 apart: too far to be paired at once
        page.send("seek", {"format": FORMAT})
        page.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
    fake_time.t += 10  # their reach has grown to 400
    middle.send("seek", {"format": FORMAT})
    start = middle.until(lambda m: m["t"] == "duel")["d"]
    assert [p["name"] for p in start["players"]] == ["Strong", "Middle"]  # 340 away, closer than 360
    assert [p["rating"] for p in start["players"]] == [1900, 1560]
    assert [ids[user] for user in app.state.test_portal.call(arena_of(app).lobby.waiting, FORMAT)] == [weak]
    fake_time.t += 100  # after long enough, anyone: the last two are paired by the lobby's clock
    solo = Page(person(app, "late"))
    ids[solo.client.get("/api/me").json()["user"]["id"]] = solo
    ratings[id(solo)] = Rating(2400, 80)
    solo.send("seek", {"format": FORMAT})
    assert {p["name"] for p in solo.until(lambda m: m["t"] == "duel")["d"]["players"]} == {"Weak", "Late"}
    for page in (strong, weak, middle, solo):
        page.close()


def test_a_challenge_link_starts_a_match_with_a_friend(app: Any) -> None:
    host, friend = Page(person(app, "jana")), Page(person(app, "karl"))
    host.send("challenge", {"format": "faecher/standard/300"})
    made = host.until(lambda m: m["t"] == "challenge")["d"]
    assert made["url"] == f"/duel?c={made['code']}"
    host.send("accept", {"code": made["code"]})
    assert host.until(lambda m: m["t"] == "err")["d"]["code"] == "own_challenge"
    friend.send("accept", {"code": made["code"]})
    start = friend.until(lambda m: m["t"] == "duel")["d"]
    assert host.until(lambda m: m["t"] == "duel")["d"]["id"] == start["id"]
    assert start["format"] == "faecher/standard/300" and start["limit_s"] == 300
    friend.send("accept", {"code": made["code"]})  # taken: once only
    assert friend.until(lambda m: m["t"] == "err")["d"]["code"] == "no_such_challenge"
    host.close()
    friend.close()


def test_a_challenge_link_outlives_a_restart(database_url: str, fake_time: FakeTime, seeds: Any) -> None:
    with running(make_app(database_url, fake_time)) as first:
        host = Page(person(first, "jana"))
        host.send("challenge", {"format": "faecher/standard/300"})
        made = host.until(lambda m: m["t"] == "challenge")["d"]
        jar = host.client.cookies
        host.close()
    fake_time.t += 600
    with running(make_app(database_url, fake_time)) as second:
        friend = Page(person(second, "karl"))
        friend.send("accept", {"code": made["code"]})  # its maker is not here (yet)
        assert friend.until(lambda m: m["t"] == "err")["d"]["code"] == "challenger_away"
        client = browser(second)
        client.cookies = jar
        host = Page(client)
        host.send("lobby")  # what the page does when it comes back
        assert host.until(lambda m: m["t"] == "lobby")["d"]["challenge"] == made["code"]
        friend.send("accept", {"code": made["code"]})
        start = friend.until(lambda m: m["t"] == "duel")["d"]
        assert host.until(lambda m: m["t"] == "duel")["d"]["id"] == start["id"]
        assert start["format"] == "faecher/standard/300"
        with Session(second.state.store.engine) as db:
            assert db.scalar(select(func.count()).select_from(ChallengeRow)) == 0  # taken with the match
        for page in (host, friend):
            page.close()


def test_a_challenge_lapses_after_an_hour_restart_or_not(database_url: str, fake_time: FakeTime,
                                                         seeds: Any) -> None:
    with running(make_app(database_url, fake_time)) as first:
        host = Page(person(first, "lena"))
        host.send("challenge", {"format": "reloaded/standard/300"})
        code = host.until(lambda m: m["t"] == "challenge")["d"]["code"]
        jar = host.client.cookies
        host.close()
    fake_time.t += 3601
    with running(make_app(database_url, fake_time)) as second:
        client = browser(second)
        client.cookies = jar
        host = Page(client)
        host.send("lobby")
        assert host.until(lambda m: m["t"] == "lobby")["d"]["challenge"] is None
        friend = Page(person(second, "mark"))
        friend.send("accept", {"code": code})
        assert friend.until(lambda m: m["t"] == "err")["d"]["code"] == "no_such_challenge"
        with Session(second.state.store.engine) as db:
            assert db.scalar(select(func.count()).select_from(ChallengeRow)) == 0
        for page in (host, friend):
            page.close()


# -- a whole duel ------------------------------------------------------------------------------------


def finish(a: Page, b: Page, live: LiveMatch, rng: random.Random, moves: int = 25,
           pace: FakeTime | None = None) -> dict[str, Any]:
    """Both play ``moves`` moves in turn, then give up; returns A's last event (with the end). With
    ``pace`` (the server's clock), each thinks a second or so before a move, as a person does: a whole
    game at a script's speed is marked as a bot's (docs/fairplay.md)."""
    for _ in range(moves):
        for page in (a, b):
            if not live.match.sessions[page.side].is_over:
                if pace is not None:
                    pace.t += 0.6 + rng.random()
                play(page, live, rng)
    for page in (a, b):
        if not live.match.sessions[page.side].is_over:
            page.intent("giveup")
    ends = [end_of(page) for page in (a, b)]  # both pages are told
    return ends[0]


def end_of(page: Page) -> dict[str, Any]:
    """The event that ended the match for this page (read now if it has not come yet)."""
    for text in page.raw:
        msg = json.loads(text)
        if msg["t"] == "dev" and msg["d"]["end"] is not None:
            return msg["d"]  # type: ignore[no-any-return]
    return page.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None)["d"]  # type: ignore[no-any-return]


@pytest.fixture
def stored_app(database_url: str, fake_time: FakeTime, seeds: Any) -> Iterator[Any]:
    """The app on each database backend in turn."""
    with running(make_app(database_url, fake_time)) as application:
        yield application


def test_a_whole_duel_between_two_websocket_clients(stored_app: Any, fake_time: FakeTime) -> None:
    app = stored_app
    a, b, live = pair(app)
    start = json.loads(a.raw[-1])["d"] if json.loads(a.raw[-1])["t"] == "duel" else None
    assert start is not None and len(start["commitment"]) == 64 and "seed" not in start
    assert start["table"]["piles"] == live.match.sessions[a.side].state.view()["piles"]
    assert start["opp"] == {"score": 0, "foundation_cards": 0, "moves": 0, "ms": 0, "left_ms": 300_000,
                            "outcome": None, "pool": None}
    rng = random.Random(11)
    mine = play(a, live, rng)
    assert mine["t"] == "dev" and mine["d"]["kind"] == "move" and mine["d"]["table"] is not None
    seen = b.until(lambda m: m["t"] == "dev")["d"]
    assert seen["kind"] == "opp" and seen["table"] is None and seen["move"] is None and seen["ledger"] == []
    assert seen["opp"]["moves"] == 1 and seen["opp"]["score"] == live.match.sessions[a.side].score
    b.send("hint")
    assert b.until(lambda m: m["t"] == "err")["d"]["code"] == "not_here"  # hints are off in duels
    end = finish(a, b, live, rng, pace=fake_time)
    result = end["end"]
    scores = [s.score for s in live.match.sessions]
    assert result["scores"] == scores
    winner = result["winner"]
    if winner is not None:
        assert result["finals"][winner] == scores[winner] + max(scores[winner] // 10, 100)
    assert verify_commitment(start["commitment"], "reloaded", start["options"] and {}, result["seed"])
    assert result["nonce"] == "" and is_deal_key(result["seed"]) and result["proved"] is False
    # the result page's data: the record checks out, ratings moved, both games replay step by step
    shown = a.client.get(f"/api/matches/{live.id}").json()
    assert result["outcomes"] == ["given_up", "given_up"]
    assert shown["state"] == "over" and verify_match(shown["record"]).to_dict() == {
        "winner": winner, "scores": scores, "finals": result["finals"], "bonus": result["bonus"],
        "outcomes": ["given_up", "given_up"]}
    assert shown["outcomes"] == ["given_up", "given_up"] and shown["record"]["result"]["outcomes"] == shown["outcomes"]
    for side in (0, 1):
        frames = shown["frames"][side]
        assert frames[-1]["score"] == scores[side] and frames[0]["m"] is None
        assert len(frames) == len(shown["record"]["games"][side]["actions"]) + 2
    me = a.client.get("/api/me").json()["user"]
    profile = a.client.get(f"/api/profile/{me['id']}").json()
    assert profile["ratings"]["reloaded"]["matches"] == 1 and profile["ratings"]["reloaded"]["provisional"]
    assert len(profile["history"]["reloaded"]) == 1 and profile["recent"][0]["id"] == live.id
    board = a.client.get("/api/leaderboard?game=reloaded").json()["players"]
    assert {p["name"] for p in board} == {"Anna", "Bruno"}
    if winner is not None:
        assert board[0]["name"] == ("Anna", "Bruno")[winner] if a.side == 0 else True
    a.close()
    b.close()


@pytest.mark.parametrize("fmt", ["teppich/waste/300", "faecher/with-undo/300"])
def test_a_game_still_going_at_the_limit_ends_as_a_time_out(app: Any, fake_time: FakeTime, fmt: str) -> None:
    a, b, live = pair(app, fmt=fmt)
    play(a, live, random.Random(2))
    fake_time.t += 301
    ends = [end_of(page) for page in (a, b)]
    for end in ends:
        assert end["end"]["outcomes"] == ["time_out", "time_out"]
        assert end["status"]["outcome"] == "time_out" and end["opp"]["outcome"] == "time_out"
    shown = a.client.get(f"/api/matches/{live.id}").json()
    assert shown["outcomes"] == ["time_out", "time_out"]
    record = shown["record"]
    assert record["result"]["outcomes"] == ["time_out", "time_out"]
    # Der Fächer's pool drained until the match ended: its time is in each game's record
    pooled = {"match_t": 300_000} if fmt.startswith("faecher") else {}
    for game in record["games"]:
        assert game["end"] == {"t": 300_000, "outcome": "time_out", **pooled}
        assert all(action["m"] != "giveup" for action in game["actions"])
    assert verify_match(record).outcomes == ("time_out", "time_out")
    assert [frames[-1]["outcome"] for frames in shown["frames"]] == ["time_out", "time_out"]
    history = a.client.get("/matches").text
    assert history.count('data-outcome="time_out"') == 2 and "given_up" not in history
    a.close()
    b.close()


def test_a_match_times_out_on_time_while_pairing_and_tournaments_are_stuck(app: Any, fake_time: FakeTime) -> None:
    """A match's clock waits for nothing but its own log: with the pairer and the tournaments stuck for
    good (a pool that never answers), a seek is still answered at once and the match ends at its limit."""
    a, b, live = pair(app)
    arena = arena_of(app)
    stuck = asyncio.Event()

    async def never() -> int:
        await stuck.wait()
        return 0

    async def never_tick(pairer: bool) -> None:
        await stuck.wait()

    arena.pools.wave = never  # type: ignore[method-assign]
    arena.tournaments.tick = never_tick  # type: ignore[method-assign]
    waiting = [Page(person(app, name)) for name in ("carla", "dario")]
    for page in waiting:
        page.send("seek", {"format": FORMAT})
        page.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)  # answered: nobody pairs them
    play(a, live, random.Random(3))
    fake_time.t += 301
    for page in (a, b):
        assert end_of(page)["end"]["outcomes"] == ["time_out", "time_out"]
    assert arena.pools.made == 1  # the first pair only: the pairer is stuck
    for page in (a, b, *waiting):
        page.close()


def test_a_faecher_duel_shows_the_pool_and_adds_it_when_the_match_ends(app: Any, fake_time: FakeTime) -> None:
    """RULES.md §3: in a duel the pool drains until the match ends. A player who gives up at once banks
    nothing then: both see the pool still draining, and it comes into both scores at the match's end."""
    a, b, live = pair(app, fmt="faecher/standard/300")
    fake_time.t += 1
    gave_up = a.intent("giveup")["d"]
    assert gave_up["status"]["outcome"] == "given_up" and gave_up["status"]["score"] == 0
    assert gave_up["status"]["pool"] == {"value": 1495, "ms": 1000, "zero_ms": 300_000}
    assert gave_up["end"] is None
    seen = b.until(lambda m: m["t"] == "dev" and m["d"]["opp"]["outcome"] == "given_up")["d"]
    assert seen["opp"]["score"] == 0 and seen["opp"]["pool"] == 1495
    assert seen["status"]["pool"]["value"] == 1495 and seen["status"]["outcome"] is None
    fake_time.t += 99
    end = b.intent("giveup")["d"]
    assert end["end"]["pools"] == [1000, 1000] and end["opp"]["pool"] is None
    scores = [s.score for s in live.match.sessions]
    assert scores[a.side] == 1000 and end["end"]["scores"] == scores
    assert [line["kind"] for line in end["ledger"]] == ["pool"]  # b's own pool line, at the match's end
    told = end_of(a)
    assert told["end"]["pools"] == [1000, 1000] and told["ledger"][-1]["points"] == 1000
    shown = a.client.get(f"/api/matches/{live.id}").json()
    assert verify_match(shown["record"]).scores == tuple(scores)
    for side in (0, 1):
        assert shown["record"]["games"][side]["end"]["match_t"] == 100_000
        last = shown["frames"][side][-1]
        assert last["m"] == "match_end" and last["t"] == 100_000 and last["score"] == scores[side]
    a.close()
    b.close()


def test_an_undo_past_the_limit_is_refused_with_the_reason(app: Any) -> None:
    a, b, live = pair(app, fmt="teppich/waste/300")
    for _ in range(4):
        assert a.intent("stock")["d"]["kind"] == "move"
    for left in (2, 1, 0):
        done = a.intent("undo")["d"]
        assert done["kind"] == "undo" and done["status"]["undos_left"] == left
    version = live.version
    refused = a.intent("undo")
    assert refused["t"] == "rej" and refused["d"]["reason"] == "at most 3 moves back: make a move first"
    assert refused["d"]["why"] == {"k": "undo_row", "p": {"n": "3"}}
    assert live.version == version and len(live.match.sessions[a.side].state.waste) == 1  # nothing changed
    a.close()
    b.close()


def test_a_player_can_play_again_after_the_end(app: Any) -> None:
    a, b, live = pair(app)
    finish(a, b, live, random.Random(3), moves=2)
    a.send("seek", {"format": FORMAT})
    assert a.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)["d"]["match"] is None
    a.close()
    b.close()


def test_a_seek_on_the_page_of_a_match_over_is_answered_by_the_seek_itself(app: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The page a match ended on seeks again: the seek answers it with the lobby at once, not only the
    next view the process tells its lobby pages (here there is none)."""
    a, b, live = pair(app)
    finish(a, b, live, random.Random(3), moves=2)
    view = arena_of(app).view

    async def tell_nothing() -> None:
        return None

    def stop_telling() -> None:  # on the app's loop: views to tell from now on are not told
        monkeypatch.setattr(view, "_tell", tell_nothing)
        if view._telling is not None:
            view._telling.cancel()
            view._telling = None

    a.ws.portal.call(stop_telling)
    a.send("seek", {"format": FORMAT})
    assert a.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)["d"]["match"] is None
    a.close()
    b.close()


def test_a_move_sent_twice_is_applied_once(app: Any) -> None:
    a, b, live = pair(app)
    first = a.intent("stock")
    a.send("stock", {"ack": a.ack})  # the same intent again, as after a lost connection
    again = a.until(lambda m: m["d"].get("ack") == a.ack)
    assert again == first
    assert live.match.sessions[a.side].moves_made == 1 and live.version == 1
    a.send("stock", {"ack": 0})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "stale_ack"
    assert live.version == 1
    a.close()
    b.close()


def test_a_move_made_on_a_table_the_players_other_page_changed_is_refused_at_no_cost(app: Any) -> None:
    """A player's other page (another tab, another device) comes back to the match and, before it has drawn
    what it missed, sends a move made on the table it showed, which the first page has changed since: refused
    free with the reason. The opponent's moves never make a table stale."""
    a, b, live = pair(app)
    assert b.intent("stock", v=0)["d"]["ok"]  # the opponent's change: not this player's table
    moves = [m for m in live.match.sessions[a.side].state.legal_moves() if m not in (DRAW, REDEAL)]
    move = moves[0]
    made = a.intent("move", src=move.src, dst=move.dst, n=move.n, v=0)
    assert made["t"] == "dev" and made["d"]["ok"], made  # made at 0, after b's change: fine
    version, score = live.version, live.match.sessions[a.side].score
    other = Page(a.client, "pa2")
    other.v = 1
    other.join(live.id, 1)  # it had seen version 1, the table before a's move
    other.send("move", {"ack": 1, "src": move.src, "dst": move.dst, "n": move.n, "v": 1})
    rej = other.until(lambda m: m["t"] in ("rej", "err") or (m["t"] == "dev" and m["d"]["cid"] == "pa2"))
    assert rej["t"] == "rej" and rej["d"]["why"]["k"] == "stale", rej
    assert live.version == version and live.match.sessions[a.side].score == score
    assert live.match.sessions[a.side].moves_made == 1
    for page in (a, b, other):
        page.close()


def test_a_player_who_drops_comes_back_where_the_server_has_them(app: Any, fake_time: FakeTime) -> None:
    a, b, live = pair(app)
    rng = random.Random(5)
    for _ in range(3):
        play(a, live, rng)
    seen_version = a.v
    a.close()
    for _ in range(4):
        play(b, live, rng)
    fake_time.t += 12  # a time penalty while A is away
    b.until(lambda m: m["t"] == "dev" and m["d"]["kind"] == "tick")  # it has happened: the versions stand still
    again = Page(a.client, "pa2")
    again.v = seen_version
    again.join(live.id, seen_version)
    missed = [again.until(lambda m: m["t"] == "dev") for _ in range(live.version - seen_version)]
    assert [m["d"]["v"] for m in missed] == list(range(seen_version + 1, live.version + 1))
    assert {m["d"]["kind"] for m in missed} <= {"opp", "tick"}
    assert missed[-1]["d"]["opp"]["moves"] == 4
    whole = Page(a.client, "pa3")
    whole.join(live.id, 0)
    snap = whole.until(lambda m: m["t"] == "duel")["d"]
    session = live.match.sessions[snap["you"]]
    assert snap["table"]["piles"] == session.state.view()["piles"] and snap["status"]["score"] == session.score
    assert snap["status"]["clock"]["ms"] == session.elapsed_ms()
    play(again, live, rng)  # and plays on
    for page in (again, whole, b):
        page.close()


def test_nobody_else_can_join_or_move_in_a_match(app: Any) -> None:
    a, b, live = pair(app)
    stranger = Page(person(app, "mallory"))
    stranger.join(live.id)
    assert stranger.until(lambda m: m["t"] == "err")["d"]["code"] == "not_your_match"
    assert stranger.intent("move", src="t1", dst="f")["d"]["code"] == "no_game"
    stranger.send("seek", {"format": FORMAT})  # and being in a pool does not give a way in either
    stranger.until(lambda m: m["t"] == "lobby")
    assert stranger.intent("stock")["d"]["code"] == "no_game"
    # a forged score or a made-up message changes nothing and the match goes on
    for raw in ['{"t": "move", "d": {"ack": 5, "src": "t1", "dst": "f", "score": 99999}}',
                '{"t": "score", "d": {"score": 99999}}', '{"t": "giveup", "d": {"ack": 6, "side": 1}}',
                '{"t": "match", "d": {"id": "' + live.id + '", "you": 1}}', "x" * 5000, "{broken"]:
        a.ws.send_text(raw)
        code = a.until(lambda m: m["t"] == "err")["d"]["code"]
        assert code in ("bad_message", "unknown_type", "too_large")
    assert live.version == 0 and [s.score for s in live.match.sessions] == [0, 0]
    assert a.intent("stock")["d"]["v"] == 1
    for page in (a, b, stranger):
        page.close()


# -- the match history ---------------------------------------------------------------------------------


def finished(app: Any, number: int, fmt: str, a: tuple[str, str], b: tuple[str, str]) -> str:
    """A match of ``a`` and ``b`` (id, name) made and ended straight in the database; returns its id.
    Its end time is ``number`` (so the newest is the highest number)."""
    clock = ManualClock()
    match = Match(f"hist{number:03d}", DuelFormat.from_key(fmt), 40 + number, "ab" * 16, clock,
                  (DuelPlayer(*a), DuelPlayer(*b)))
    clock.advance(3)
    match.act(0, "giveup")
    match.act(1, "giveup")
    result, ratings = match.finish()
    with app.state.store.engine.begin() as connection:
        insert_match(connection, match)
        finish_match(connection, match, result, ratings)
        connection.execute(update(MatchRow).where(MatchRow.id == match.id).values(ended_ms=1_000_000 + number))
    return match.id


def rows_of(page: str) -> list[str]:
    return re.findall(r'<tr data-match="([^"]+)">', page)


def test_the_match_history_pages_newest_first_with_filters(stored_app: Any) -> None:
    app = stored_app
    ids = {}
    for login in ("anna", "bruno", "carla"):
        client = person(app, login)
        ids[login] = (client.get("/api/me").json()["user"]["id"], login.title())
    made = []
    for number in range(25):  # anna plays bruno in Solitaire Reloaded, carla in Der Fächer every third time
        if number % 3 == 2:
            made.append(finished(app, number, "faecher/standard/300", ids["carla"], ids["anna"]))
        else:
            made.append(finished(app, number, FORMAT, ids["anna"], ids["bruno"]))
    going_on = Match("live-one", DuelFormat.from_key(FORMAT), 3, "cd" * 16, ManualClock(),
                     (DuelPlayer(*ids["bruno"]), DuelPlayer(*ids["carla"])))
    with app.state.store.engine.begin() as connection:
        insert_match(connection, going_on)  # not finished: never in the history
    client = browser(app)
    first = client.get("/matches")
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/html")
    assert rows_of(first.text) == made[::-1][:20]  # newest first, 20 a page
    assert 'rel="next" href="/matches?page=2"' in first.text and 'rel="prev"' not in first.text
    assert "Finished matches: 25" in first.text and "page 1 of 2" in first.text
    assert f'href="/match?id={made[-1]}"' in first.text  # each row opens the replay
    assert client.get(f"/api/matches/{made[-1]}").json()["frames"]  # and the replay is there
    second = client.get("/matches?page=2")
    assert rows_of(second.text) == made[::-1][20:] and 'rel="prev" href="/matches"' in second.text
    assert 'rel="next"' not in second.text and "live-one" not in first.text + second.text

    by_id = client.get(f"/matches?player={ids['carla'][0]}")  # the profile's link: the form shows the name
    assert 'name="player" value="Carla"' in by_id.text and ids["carla"][0] not in by_id.text.split("<tbody>")[0]
    fan = [m for n, m in enumerate(made) if n % 3 == 2]
    for query in ("player=Carla", "player=carla", f"player={ids['carla'][0]}", "game=faecher", "game=fächer"):
        page = client.get(f"/matches?{query}")
        assert page.status_code == 200 and rows_of(page.text) == fan[::-1], query
    both = client.get("/matches?player=Anna&game=reloaded")
    assert rows_of(both.text) == [m for n, m in enumerate(made) if n % 3 != 2][::-1][:17]
    assert "Finished matches: 17" in both.text and 'rel="next"' not in both.text
    assert 'name="player" value="Anna"' in both.text
    assert '<option value="reloaded" data-game="reloaded" selected>' in both.text
    none = client.get("/matches?game=teppich")
    assert none.status_code == 200 and rows_of(none.text) == [] and "No finished matches." in none.text

    # a profile's recent matches lead here
    profile_page = client.get("/profile").text
    assert 'id="all-matches" href="/matches"' in profile_page
    assert "/matches?player=${encodeURIComponent(data.user.id)}" in client.get("/static/js/profile.js").text


@pytest.mark.parametrize(("query", "status", "says"), [
    ("page=0", 400, "a page number is a whole number from 1 up, not &#x27;0&#x27;"),
    ("page=-1", 400, "a page number is a whole number"),
    ("page=two", 400, "a page number is a whole number"),
    ("page=%C2%B2", 400, "a page number is a whole number"),
    ("page=99999999999999999999", 400, "a page number is a whole number"),
    ("page=2", 404, "there is no page 2: the last is 1"),
    ("player=nobody", 404, "no player &#x27;nobody&#x27;"),
    ("game=chess", 400, "&#x27;chess&#x27; is not a duel game"),
    ("player=%3Cscript%3E", 404, "no player &#x27;&lt;script&gt;&#x27;"),
])
def test_the_match_history_answers_a_bad_address_with_a_clear_page(app: Any, query: str, status: int,
                                                                   says: str) -> None:
    answer = browser(app).get(f"/matches?{query}")
    assert answer.status_code == status and answer.headers["content-type"].startswith("text/html")
    assert 'role="alert"' in answer.text and says in answer.text, answer.text
    assert answer.text.count("<head>") == 1 and ">Matches · Patience Arena</title>" in answer.text
    assert "<script>" not in answer.text


# -- what never reaches a player -------------------------------------------------------------------

class Watch:
    """Checks every message one player gets, as it arrives, against that player's own game."""

    def __init__(self, page: Page, live: LiveMatch) -> None:
        self.page = page
        self.live = live
        self.seen: set[str] = set()
        self.checked = 0
        self.ended = False

    def check_new(self) -> None:
        match = self.live.match
        state = match.sessions[self.page.side].state
        for cards in state.piles().values():
            self.seen.update(card.text for card, up in cards if up)
        needed = {n.text for n in (state.needed(s) for s in range(4)) if n is not None}  # type: ignore[attr-defined]
        for text in self.page.raw[self.checked:]:
            msg = json.loads(text)
            leaked = mentioned_cards(msg) - self.seen - needed
            assert not leaked, f"{msg['t']} names cards this player never saw face up: {leaked}"
            if msg["t"] in ("dev", "duel") and msg["d"].get("end"):
                self.ended = True  # the message that tells the end reveals the seed
            if not self.ended:
                assert str(match.seed) not in text, "the deal key before the end"
                assert '"seed"' not in text and '"nonce"' not in text
            if msg["t"] == "dev" and msg["d"]["table"] is not None:
                assert msg["d"]["table"]["piles"] == state.view()["piles"]
        self.checked = len(self.page.raw)


@pytest.mark.parametrize("fmt", ["reloaded/standard/300", "faecher/standard/300", "teppich/waste/300"])
def test_no_hidden_card_no_seed_and_no_opponent_card_is_ever_sent(app: Any, fmt: str, fake_time: FakeTime) -> None:
    at_a_scripts_pace(app)
    for round_no in range(2):
        a, b, live = pair(app, f"p{round_no}a", f"p{round_no}b", fmt)
        watches = [Watch(a, live), Watch(b, live)]
        rng = random.Random(round_no)
        for step in range(60):
            for page, watch in zip((a, b), watches, strict=True):
                if live.match.sessions[page.side].is_over:
                    continue
                roll = rng.random()
                names = list(live.match.sessions[page.side].state.piles())
                if roll < 0.1:
                    page.intent("move", src=rng.choice(names), dst=rng.choice(names))  # often refused
                elif roll < 0.14:
                    page.intent("undo")
                else:
                    play(page, live, rng)
                watch.check_new()
            if step == 30:
                fake_time.t += 11  # penalties arrive as ticks
        for page in (a, b):
            if not live.match.sessions[page.side].is_over:
                page.intent("giveup")
        for page, watch in zip((a, b), watches, strict=True):
            end_of(page)
            watch.check_new()
            page.join(live.id, 0)  # the whole match once more, after the end: now with the seed
            snap = page.until(lambda m: m["t"] == "duel")
            assert snap["d"]["end"]["seed"] == str(live.match.seed)
            watch.check_new()
            assert watch.ended
            page.close()


# -- the log, before anything is told; restarts -----------------------------------------------------


def test_every_move_is_logged_before_it_is_acknowledged(database_url: str, fake_time: FakeTime, seeds: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with running(make_app(database_url, fake_time)) as application:
        a, b, live = pair(application)
        rng = random.Random(8)
        for _ in range(4):
            reply = play(a, live, rng)
            with Session(application.state.store.engine) as db:
                logged = db.scalar(select(func.count()).select_from(MatchMoveRow)
                                   .where(MatchMoveRow.match_id == live.id))
            assert logged >= reply["d"]["v"]  # the row was there before the answer left
        told = live.version
        durable = a.ack

        def broken(connection: Any, rows: Any) -> None:
            if list(rows):
                raise RuntimeError("disk full")

        monkeypatch.setattr("patience.server.storage.writer.insert_moves", broken)
        failed = a.intent("stock")
        assert failed["t"] == "err" and failed["d"]["code"] == "server_error"  # not acknowledged
        monkeypatch.undo()
        snap = a.until(lambda m: m["t"] == "duel", faults=True)["d"]  # rebuilt from the log, without that move
        assert snap["v"] == told and snap["status"]["moves"] == 4
        assert arena_of(application).matches[live.id].version == told
        a.v = told
        a.ack = durable + 1
        assert a.intent("stock")["d"]["v"] == told + 1  # and the match goes on
        a.close()
        b.close()


def test_a_restart_in_the_middle_of_a_match_resumes_from_the_log(database_url: str, fake_time: FakeTime,
                                                                 seeds: Any) -> None:
    with running(make_app(database_url, fake_time)) as first:
        a, b, live = pair(first)
        rng = random.Random(21)
        for _ in range(6):
            play(a, live, rng)
            play(b, live, rng)
        fake_time.t += 15
        a.until(lambda m: m["t"] == "dev" and m["d"]["kind"] == "tick")
        before = [live.snapshot(side) for side in (0, 1)]
        version, match_id, last_ack = live.version, live.id, a.ack
        cookies = (a.client.cookies, b.client.cookies)
        a.close()
        b.close()
    fake_time.t += 3600  # the server was down for an hour: that time does not count
    with running(make_app(database_url, fake_time)) as second:
        back = arena_of(second).matches[match_id]
        assert back.version == version
        pages = []
        for side, jar in enumerate(cookies):
            client = browser(second)
            client.cookies = jar
            page = Page(client, ("pa", "pb")[side])
            page.ack = (a.ack, b.ack)[side]  # the same pages, come back: their acks go on
            page.join(match_id, 0)
            snap = page.until(lambda m: m["t"] == "duel")["d"]
            old = before[snap["you"]]
            assert snap["v"] == version and snap["table"] == json.loads(json.dumps(old.table, default=_plain))
            assert snap["status"]["score"] == old.status.score and snap["status"]["moves"] == old.status.moves
            assert snap["ledger"] == json.loads(json.dumps(old.ledger, default=_plain))
            assert abs(snap["status"]["clock"]["ms"] - old.status.clock.ms) <= 5000
            pages.append(page)
        a2 = pages[0]
        # the last intent sent again after the restart is answered, never played twice
        a2.send("stock", {"ack": last_ack})
        again = a2.until(lambda m: m["d"].get("ack") == last_ack)
        assert again["t"] == "dev" and back.version == version
        end = finish(pages[0], pages[1], back, random.Random(4), moves=3)
        assert end["end"]["scores"] == [s.score for s in back.match.sessions]
        record = second.state.arena.matches[match_id].match.record()
        assert verify_match(record).scores == tuple(end["end"]["scores"])
        for game in record["games"]:
            assert replay(game).score in end["end"]["scores"]
        for page in pages:
            page.close()


def _plain(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


def test_a_pair_sent_to_a_process_that_died_before_making_it_waits_in_the_pool_again(
        app: Any, fake_time: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pairer sends a pair of players on other processes to one of them to be made into a match;
    if that process dies before it makes it, the player whose page is still open waits again."""
    import time

    from patience.ratings import Rating
    from patience.server.arena import lobby
    from patience.server.arena.pools import Side

    monkeypatch.setattr(lobby, "START_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(lobby, "START_CHECKS", 60)
    arena = arena_of(app)
    portal = app.state.test_portal
    token = portal.call(arena.bus.acquire, "node:other", 60.0)  # the process the pair is sent to
    portal.call(arena.bus.acquire, "node:third", 60.0)  # B's process, alive throughout
    a = Side("ua", "A", Rating(), "other", "pa")
    b = Side("ub", "B", Rating(), "third", "pb")
    portal.call(arena.bus.hset, "online", "ub/pb", b"third")  # B's lobby page is open
    portal.call(arena._paired, DuelFormat.from_key(FORMAT), a, b)
    time.sleep(0.5)  # the owner is alive: however long it takes, the pair is left to it
    assert portal.call(arena.pools.seeking, "ub") is None
    portal.call(arena.bus.release, "node:other", token)  # now it dies, the envelope with it
    fake_time.t += 2  # past the time a process's liveness is taken as known
    for _ in range(200):
        if portal.call(arena.pools.seeking, "ub") is not None:
            break
        time.sleep(0.02)
    assert portal.call(arena.pools.seeking, "ub") == FORMAT
    assert portal.call(arena.pools.seeking, "ua") is None  # the one whose process stopped: not again
    # a pair that was made is left alone
    portal.call(arena.bus.hset, "busy", "uc", b"m1")
    c, d = Side("uc", "C", Rating(), "gone", "pc"), Side("ud", "D", Rating(), "third", "pd")
    portal.call(arena.bus.hset, "online", "ud/pd", b"third")
    portal.call(arena._paired, DuelFormat.from_key(FORMAT), c, d)
    time.sleep(0.3)
    assert portal.call(arena.pools.seeking, "ud") is None
