"""The deal of the day: one secret deal per game and UTC day, chosen once whatever the number of processes;
one attempt a player, written before the first card is shown and never played again; its key and its games
shown only once the day is over; and a deal nobody can compute from the cards they see."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select

from helpers import FakeTime, established_person, opponents_for_the_board
from patience.daily import DAILY, daily_commitment, daily_options, day_of, verify_daily
from patience.duel import verify_commitment
from patience.errors import RecordError
from patience.games import get_game
from patience.rng import is_deal_key, new_deal_key
from patience.server import create_app
from patience.server.arena.dealstock import add_deal, prove, stock_counts
from patience.server.storage.daily import AttemptRow, choose_deal, find_attempt, find_deal, start_attempt
from patience.server.storage.store import SavedGame, Store, UserRow
from patience.session import ManualClock, Session
from test_duel_deals import candidates
from test_server_app import hub_of, reply_to, send
from test_server_duel import FAST_HASH, browser, csrf, make_app, person, running

DAY = day_of(1000 * 1000)  # the fake clock starts at 1000 s: 1970-01-01
NEXT_DAY_S = 86_400.0 + 10.0


def start(client: Any, game: str = "reloaded") -> Any:
    return client.post(f"/api/daily/{game}/start", data={"csrf": csrf(client)}, headers={"accept": "application/json"})


def join(ws: Any, game_id: str, cid: str = "page1") -> dict[str, Any]:
    send(ws, "join", {"id": game_id, "v": 0, "cid": cid})
    msg = ws.receive_json()
    assert msg["t"] == "game", msg
    return msg["d"]  # type: ignore[no-any-return]


def stocked(application: Any) -> Any:
    """A key in the stock of each day variant (no solver process), kept as ``state.test_keys``."""
    application.state.test_keys = {}
    for game, variant in DAILY.items():
        key = new_deal_key()
        add_deal(application.state.store.engine, f"{game}/{variant}", key, 1)
        application.state.test_keys[game] = key
    return application


@pytest.fixture
def app(tmp_path: Path, fake_time: FakeTime) -> Any:
    with running(make_app(tmp_path, fake_time)) as application:
        yield stocked(application)


# -- choosing the day's deal -----------------------------------------------------------------------


def test_concurrent_takers_agree_on_one_deal_of_the_day(database_url: str) -> None:
    store = Store(database_url)
    try:
        store.migrate()
        keys = [new_deal_key() for _ in range(8)]
        chosen: list[str] = []
        barrier = threading.Barrier(len(keys))

        def take(key: str) -> None:
            barrier.wait()
            chosen.append(choose_deal(store.engine, "2026-11-24", "reloaded", "reloaded/standard", key,
                                      daily_commitment("reloaded", key), True).deal)

        threads = [threading.Thread(target=take, args=(key,)) for key in keys]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(chosen) == len(keys) and len(set(chosen)) == 1 and chosen[0] in keys
        found = find_deal(store.engine, "2026-11-24", "reloaded")
        assert found is not None and found.deal == chosen[0]
        assert verify_commitment(found.commitment, "reloaded", daily_options("reloaded"), found.deal)
        assert find_deal(store.engine, "2026-11-25", "reloaded") is None  # another day, another deal
    finally:
        store.close()


def established_pair(app: Any) -> tuple[Any, Any]:
    """Ada and Bea, whose accounts meet the board's entry rule: they are dealt the day's deal."""
    opponents = opponents_for_the_board(app.state.store)
    return established_person(app, "ada", opponents), established_person(app, "bea", opponents)


def test_the_day_deal_comes_from_the_proved_stock_and_is_the_same_for_everyone(app: Any) -> None:
    ada, bea = established_pair(app)
    ids = [start(client).json()["id"] for client in (ada, bea)]
    assert ids[0] != ids[1]  # a game each, of one deal
    deal = find_deal(app.state.store.engine, DAY, "reloaded")
    assert deal is not None and deal.deal == app.state.test_keys["reloaded"] and deal.proved
    assert stock_counts(app.state.store.engine)["reloaded/standard"] == 0  # taken out of the stock
    tables = []
    for client, game_id in zip((ada, bea), ids, strict=True):
        with client.websocket_connect("/ws") as ws:
            tables.append(join(ws, game_id)["table"]["piles"])
    assert tables[0] == tables[1]


def test_with_an_empty_stock_the_day_deal_is_proved_on_demand(tmp_path: Path, fake_time: FakeTime) -> None:
    with running(make_app(tmp_path, fake_time)) as application:
        engine = application.state.store.engine
        assert stock_counts(engine)["teppich/waste"] == 0
        assert start(person(application, "cleo"), "teppich").status_code == 200
        deal = find_deal(engine, DAY, "teppich")
        assert deal is not None and deal.proved and is_deal_key(deal.deal)
        assert prove("teppich/waste", deal.deal, 10.0)[0]  # proved again here: winnable


# -- one attempt -------------------------------------------------------------------------------------


def test_one_attempt_a_day_goes_on_in_any_tab_and_is_never_played_again(app: Any) -> None:
    ada = established_person(app, "ada")
    first = start(ada)
    assert first.status_code == 200, first.text
    game_id = first.json()["id"]
    assert app.state.store.load_game(game_id) is not None  # in the database before any card is shown
    with ada.websocket_connect("/ws") as ws:
        shown = join(ws, game_id)
        assert shown["seed"] == f"day:{DAY}" and shown["variant"] == "standard"
        send(ws, "stock", {"ack": 1})
        assert reply_to(ws, 1)["t"] == "ev"
        send(ws, "hint", {})
        refused = ws.receive_json()
        assert refused["t"] == "err" and "hints are off" in refused["d"]["msg"]
    again = start(ada)  # another tab, a reload: the same game, one move in
    assert again.status_code == 200 and again.json()["id"] == game_id
    with ada.websocket_connect("/ws") as ws:
        assert join(ws, game_id, "page2")["status"]["moves"] == 1
        send(ws, "giveup", {"ack": 1})
        assert reply_to(ws, 1)["d"]["status"]["outcome"] == "given_up"
    over = start(ada)
    assert over.status_code == 409 and over.json()["error"] == "attempt_over"
    assert "one attempt a day" in over.json()["msg"]
    board = ada.get("/api/daily/reloaded").json()
    assert [(e["name"], e["outcome"], e["moves"]) for e in board["entries"]] == [("Ada", "given_up", 1)]
    assert board["mine"] == 1
    assert board["games"] == list(DAILY)  # the page's tabs


def test_concurrent_starts_of_one_player_make_one_attempt(database_url: str) -> None:
    """Two processes (or tabs) starting the same player's attempt at the same instant: one game, both told it."""
    store = Store(database_url)
    try:
        store.migrate()
        with store.engine.begin() as connection:
            connection.execute(insert(UserRow), [{"id": "u1", "login": "ada", "name": "Ada", "password_hash": "x",
                                                  "created_ms": 0, "name_key": "ada"}])
        key = new_deal_key()
        session = Session(get_game("reloaded"), key, {}, clock=ManualClock())
        got: list[str] = []
        barrier = threading.Barrier(6)

        def begin(n: int) -> None:
            saved = SavedGame(id=f"g{n}", browser_id="b1", game="reloaded", variant="standard", seed=f"day:{DAY}",
                              record=session.record(), ms=0, moves=0, score=0, outcome=None)
            barrier.wait()
            got.append(start_attempt(store.engine, DAY, "reloaded", "u1", saved))

        threads = [threading.Thread(target=begin, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(got) == 6 and len(set(got)) == 1
        assert find_attempt(store.engine, DAY, "reloaded", "u1") == got[0]
        others = [f"g{n}" for n in range(6) if f"g{n}" != got[0]]
        assert all(store.load_game(g) is None for g in others)  # the losers' games went with their transactions
    finally:
        store.close()


def test_the_board_shows_an_attempt_as_it_stands_after_each_move(tmp_path: Path, fake_time: FakeTime) -> None:
    """The board reads the games' rows: an attempt's row takes its time, moves and score with each
    acknowledged action, not only when its record is next written whole (here: not within the test)."""
    application = create_app(data_dir=tmp_path, now=fake_time, wall=fake_time, tick_seconds=0.02,
                             save_seconds=3600.0, password_hasher=FAST_HASH)
    with running(application):
        stocked(application)
        ada = established_person(application, "ada")
        game_id = start(ada).json()["id"]
        with ada.websocket_connect("/ws") as ws:
            join(ws, game_id)
            state = hub_of(ada).games[game_id].session.state
            status: dict[str, Any] = {"score": 0}
            for ack in range(1, 200):  # draw until a card can go to a foundation, and play it: points
                fake_time.t += 1.0
                home = next((m for m in state.legal_moves() if m.dst.startswith("f")), None)
                if home is None:
                    send(ws, "stock", {"ack": ack})
                else:
                    send(ws, "move", {"ack": ack, "src": home.src, "dst": home.dst, "n": home.n})
                status = reply_to(ws, ack)["d"]["status"]
                if status["score"]:
                    break
            assert status["score"] and status["outcome"] is None
            entry, = ada.get("/api/daily/reloaded").json()["entries"]
            assert (entry["moves"], entry["score"], entry["ms"], entry["outcome"]) == (
                status["moves"], status["score"], ack * 1000, None)
            saved = application.state.store.load_game(game_id)
            assert saved is not None and saved.record["actions"] and not saved.record.get("end")


def test_signed_out_visitors_see_the_board_but_do_not_play(app: Any) -> None:
    visitor = browser(app)
    assert visitor.get("/api/daily/faecher").status_code == 200
    answer = start(visitor, "faecher")
    assert answer.status_code == 401 and answer.json()["error"] == "sign_in"
    assert visitor.get("/api/daily/solitaire").status_code == 400
    assert visitor.get("/api/daily/reloaded?day=24-11-2026").status_code == 400


# -- the key and the games: after the day ------------------------------------------------------------


def test_the_key_and_the_replays_are_shown_only_after_the_day(app: Any) -> None:
    ada, bea = established_pair(app)
    raw: list[str] = []
    for client in (ada, bea):
        game_id = start(client, "teppich").json()["id"]
        with client.websocket_connect("/ws") as ws:
            send(ws, "join", {"id": game_id, "v": 0, "cid": "p"})
            raw.append(ws.receive_text())
            send(ws, "stock", {"ack": 1})
            raw.append(json.dumps(reply_to(ws, 1)))
            send(ws, "giveup", {"ack": 2})
            raw.append(json.dumps(reply_to(ws, 2)))
    key = app.state.test_keys["teppich"]
    today = ada.get("/api/daily/teppich")
    raw.append(today.text)
    board = today.json()
    assert board["over"] is False and "seed" not in board and len(board["entries"]) == 2
    assert all("game_id" not in e for e in board["entries"])
    refused = ada.get(f"/api/daily/teppich/{DAY}/record")
    assert refused.status_code == 403 and refused.json()["error"] == "not_over"
    mine = app.state.store.load_game  # the games of the day, known to the test only
    with app.state.store.engine.connect() as connection:
        game_ids = list(connection.scalars(select(AttemptRow.game_id)))
    early = ada.get(f"/api/daily/teppich/{DAY}/replay/{game_ids[0]}")
    raw.append(early.text)
    assert early.status_code == 403 and early.json()["error"] == "not_over"
    assert not any(key in text for text in raw)  # nothing a player saw during the day holds the key

    app.state.daily.wall = lambda: NEXT_DAY_S  # the day is over (UTC)
    past = ada.get(f"/api/daily/teppich?day={DAY}").json()
    assert past["over"] is True and past["seed"] == key and all(e["game_id"] for e in past["entries"])
    record = ada.get(f"/api/daily/teppich/{DAY}/record").json()
    sessions = verify_daily(record)  # the key opens the commitment; each game replays to its score
    assert len(sessions) == 2 and record["commitment"] == board["commitment"]
    for game_id in game_ids:
        view = ada.get(f"/api/daily/teppich/{DAY}/replay/{game_id}").json()
        saved = mine(game_id)
        assert saved is not None and view["frames"][0][-1]["score"] == saved.score  # step by step to its score
        assert view["record"]["seed"] == key and len(view["players"]) == 1
    assert ada.get(f"/api/daily/teppich/{DAY}/replay/nosuchgame").status_code == 404
    forged = {**record, "seed": new_deal_key()}
    with pytest.raises(RecordError):
        verify_daily(forged)
    assert ada.get("/api/daily/teppich").json()["day"] == day_of(NEXT_DAY_S * 1000)  # a new day, a new deal
    assert start(ada, "teppich").status_code == 200  # and a new attempt


# -- nobody can compute the deal ------------------------------------------------------------------


@pytest.mark.parametrize("game", list(DAILY))
def test_no_listed_or_low_seed_deals_the_day_deal(app: Any, game: str) -> None:
    ada = established_person(app, f"ada{game[:3]}")
    with ada.websocket_connect("/ws") as ws:
        send(ws, "join", {"id": start(ada, game).json()["id"], "v": 0, "cid": "p"})
        text = ws.receive_text()
    seen = json.loads(text)["d"]["table"]["piles"]
    cls = get_game(game)
    options = daily_options(game)
    key = app.state.test_keys[game]
    assert is_deal_key(key) and key not in text
    for seed in candidates(game, options):
        assert cls.deal(seed, options).view()["piles"] != seen, f"seed {seed} deals the day's deal"
    assert cls.deal(key, options).view()["piles"] == seen  # the key the day reveals deals it


# -- a daily habit: the streaks and the month of one's days ----------------------------------------------


@pytest.mark.parametrize(("days", "today", "expected"), [
    ([], "2026-11-27", (0, 0)),
    (["2026-11-27"], "2026-11-27", (1, 1)),
    (["2026-11-26"], "2026-11-27", (1, 1)),  # today not played yet: the streak goes on until midnight
    (["2026-11-25"], "2026-11-27", (0, 1)),  # a day missed ends it
    (["2026-11-25", "2026-11-26", "2026-11-27"], "2026-11-27", (3, 3)),
    (["2026-11-26", "2026-11-25", "2026-11-26"], "2026-11-27", (2, 2)),  # in any order, a day counted once
    (["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02", "2026-11-26", "2026-11-27"], "2026-11-27", (2, 4)),
    (["2024-02-28", "2024-02-29", "2024-03-01"], "2024-03-02", (3, 3)),  # a leap day in between
    (["2026-12-31", "2027-01-01"], "2027-01-01", (2, 2)),  # across the year's end
])
def test_the_streaks_count_consecutive_utc_days(days: list[str], today: str, expected: tuple[int, int]) -> None:
    from patience.server.arena.daily import streaks

    assert streaks(days, today) == expected


@pytest.mark.parametrize("month", ["2026-13", "2026-00", "26-11", "2026-1", "2026/11", "abcd-ef", "2026-11-01", ""])
def test_a_month_not_written_yyyy_mm_is_refused(month: str) -> None:
    from patience.errors import BadInputError
    from patience.server.arena.daily import check_month

    with pytest.raises(BadInputError):
        check_month(month)
    assert check_month("2026-11") == "2026-11"


def test_my_days_show_the_streak_and_the_month_of_my_attempts_only(app: Any, fake_time: FakeTime) -> None:
    visitor = browser(app)
    assert visitor.get("/api/daily/mine").status_code == 401  # signed out: nothing
    ada, bob = person(app, "ada"), person(app, "bob")
    assert ada.get("/api/daily/mine?month=1970-13").status_code == 400
    assert ada.get("/api/daily/mine?month=nope").json()["error"] == "bad_month"
    empty = ada.get("/api/daily/mine").json()
    assert (empty["month"], empty["streak"], empty["best_streak"], empty["days"]) == ("1970-01", 0, 0, [])
    first = start(ada)
    assert first.status_code == 200
    going = ada.get("/api/daily/mine").json()
    assert going["streak"] == 1 and going["days"] == [{"day": DAY, "games": {"reloaded": None}}]
    assert set(going) == {"month", "today", "streak", "best_streak", "days"}  # no key, no card, no score
    with ada.websocket_connect("/ws") as ws:
        join(ws, first.json()["id"])
        send(ws, "giveup", {"ack": 1})
        assert reply_to(ws, 1)["d"]["status"]["outcome"] == "given_up"
    assert start(ada, "faecher").status_code == 200
    fake_time.t += NEXT_DAY_S  # the next day: played yesterday, the streak stands
    stocked(app)  # a key for the new day
    mine = ada.get("/api/daily/mine?month=1970-01").json()
    assert mine["today"] == "1970-01-02" and (mine["streak"], mine["best_streak"]) == (1, 1)
    assert mine["days"] == [{"day": DAY, "games": {"faecher": None, "reloaded": "given_up"}}]
    assert start(ada).status_code == 200
    assert (ada.get("/api/daily/mine").json()["streak"]) == 2
    assert bob.get("/api/daily/mine").json()["days"] == []  # one's own days only
    fake_time.t += 2 * 86_400.0
    assert ada.get("/api/daily/mine").json()["streak"] == 0
    assert ada.get("/api/daily/mine").json()["best_streak"] == 2
    assert ada.get("/api/daily/mine?month=1969-12").json()["days"] == []
