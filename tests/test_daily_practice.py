"""Scout-then-main on the deal of the day, stopped at its root (issue 33, docs/fairplay.md *Scouted deals of the
day*): an account that does not meet the board's entry rule, or is marked, is dealt a practice deal of its own
while the day lasts (a key from a server secret, the day, the game and the account: never the day's, and
nothing of the day's can be computed from it), on no board. The day's deal opens to it at its first attempt
begun once it meets the rule. On SQLite and on PostgreSQL, through the server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

import patience.server.storage.fairplay as fp
from helpers import FakeTime, at_a_scripts_pace, establish, established_person, opponents_for_the_board, user_id_of
from patience.daily import daily_options
from patience.games import DRAW, REDEAL, get_game
from patience.server.storage.daily import AttemptRow, day_board, entered, find_deal, practice_key, scouting
from patience.solve import Budget, Status, solve
from test_daily import DAY, NEXT_DAY_S, join, start, stocked
from test_server_app import reply_to, send
from test_server_duel import make_app, person, running


@pytest.fixture
def app(database_url: str, fake_time: FakeTime) -> Any:
    with running(make_app(database_url, fake_time)) as application:
        yield stocked(application)


def table(client: Any, game_id: str) -> tuple[dict[str, Any], str]:
    """The cards ``client``'s page is shown of game ``game_id`` as it joins, and the raw message."""
    with client.websocket_connect("/ws") as ws:
        send(ws, "join", {"id": game_id, "v": 0, "cid": "p"})
        text = ws.receive_text()
    return json.loads(text)["d"]["table"]["piles"], text


def give_up(client: Any, game_id: str) -> None:
    with client.websocket_connect("/ws") as ws:
        join(ws, game_id)
        send(ws, "giveup", {"ack": 1})
        assert reply_to(ws, 1)["d"]["status"]["outcome"] == "given_up"


def seed_of(app: Any, game_id: str) -> Any:
    saved = app.state.store.load_game(game_id)
    assert saved is not None
    return saved.record["seed"]


def test_a_new_account_is_dealt_a_practice_deal_of_its_own_on_no_board(app: Any) -> None:
    engine = app.state.store.engine
    old = established_person(app, "olga")
    new = person(app, "nina")
    nina = user_id_of(app, "nina")
    page = new.get("/api/daily/reloaded").json()
    assert page["practice"] == {"why": "entry", "begun": False, "outcome": None, "score": None}
    begun = start(new)
    assert begun.status_code == 200 and begun.json()["practice"] is True
    assert start(old).json()["practice"] is False and old.get("/api/daily/reloaded").json()["practice"] is None
    deal = find_deal(engine, DAY, "reloaded")
    assert deal is not None and deal.deal == app.state.test_keys["reloaded"]
    new_table, seen = table(new, begun.json()["id"])
    old_table, _ = table(old, start(old).json()["id"])
    day_table = get_game("reloaded").deal(deal.deal, daily_options("reloaded")).view()["piles"]
    assert old_table == day_table and new_table != day_table  # the established account plays the day's deal
    assert deal.deal not in seen and json.loads(seen)["d"]["seed"] == f"day:{DAY}"  # no key shown
    # the practice key: from the server's secret, the day, the game and the account, not from the day's key
    key = seed_of(app, begun.json()["id"])
    assert key != deal.deal and key == practice_key(engine, DAY, "reloaded", nina, deal.deal)
    assert key == practice_key(engine, DAY, "reloaded", nina, "0" * 64)  # whatever the day's deal: nothing of it
    assert practice_key(engine, DAY, "reloaded", nina, key) != key  # never the day's deal itself
    assert practice_key(engine, "1970-01-02", "reloaded", nina, deal.deal) != key  # a deal a day
    assert practice_key(engine, DAY, "reloaded", user_id_of(app, "olga"), deal.deal) != key  # an account
    give_up(new, begun.json()["id"])
    assert [e["name"] for e in day_board(engine, DAY, "reloaded")] == ["Olga"]  # the practice: on no board
    after = new.get("/api/daily/reloaded").json()
    assert after["practice"]["outcome"] == "given_up" and after["mine"] is None
    assert start(new).status_code == 409  # one attempt a day, practice or not
    with engine.connect() as c:
        assert c.scalar(select(AttemptRow.practice).where(AttemptRow.user_id == nina)) is True

    app.state.daily.wall = lambda: NEXT_DAY_S  # the day is over: its deal is public, the practice on no board
    past = new.get(f"/api/daily/reloaded?day={DAY}").json()
    assert past["seed"] == deal.deal and [e["name"] for e in past["entries"]] == ["Olga"]
    assert "practice" not in past
    record = new.get(f"/api/daily/reloaded/{DAY}/record").json()
    assert [p["name"] for p in record["players"]] == ["Olga"]


def test_a_marked_account_is_dealt_a_practice_deal(app: Any) -> None:
    mark = established_person(app, "mark")
    uid = user_id_of(app, "mark")
    assert entered(app.state.store.engine, uid)
    with app.state.store.engine.begin() as c:
        fp._set(c, uid, "marked", "bot", None, "marked", None)
    assert not entered(app.state.store.engine, uid)
    assert mark.get("/api/daily/reloaded").json()["practice"]["why"] == "marked"
    begun = start(mark)
    assert begun.status_code == 200 and begun.json()["practice"] is True
    assert seed_of(app, begun.json()["id"]) != app.state.test_keys["reloaded"]


def test_the_days_deal_opens_at_the_first_attempt_once_the_rule_is_met(app: Any, fake_time: FakeTime) -> None:
    """Decided: the rule is read when the day's attempt begins. An account that meets it later in a day it
    has begun its practice in keeps that practice (one attempt a day); its next day's attempt is the day's."""
    new = person(app, "nils")
    practice = start(new).json()
    assert practice["practice"] is True
    establish(app.state.store, user_id_of(app, "nils"))  # five rated duels later, the same day
    assert start(new).json() == practice  # the attempt begun goes on: still the practice
    assert new.get("/api/daily/reloaded").json()["practice"]["begun"] is True
    give_up(new, practice["id"])
    fake_time.t += NEXT_DAY_S  # the next day
    stocked(app)
    assert new.get("/api/daily/reloaded").json()["practice"] is None
    today = start(new).json()
    assert today["practice"] is False and seed_of(app, today["id"]) == app.state.test_keys["reloaded"]
    # ... and one that meets the rule before beginning the day's attempt plays the day's deal that same day
    late = person(app, "lena")
    establish(app.state.store, user_id_of(app, "lena"))
    assert start(late).json()["practice"] is False


def play_line(ws: Any, moves: list[Any]) -> dict[str, Any]:
    """Play ``moves`` at full speed, one intent after another; the last status (or the refusal)."""
    status: dict[str, Any] = {}
    for ack, move in enumerate(moves, start=1):
        if move in (DRAW, REDEAL):
            send(ws, "stock", {"ack": ack})
        else:
            send(ws, "move", {"ack": ack, "src": move.src, "dst": move.dst, "n": move.n})
        answer = reply_to(ws, ack)
        if answer["t"] == "err" or "status" not in answer["d"]:  # refused: the line does not fit this deal
            return answer["d"]  # type: ignore[no-any-return]
        status = answer["d"]["status"]
    return status


def test_scout_then_main_never_reaches_the_board(app: Any) -> None:
    """The issue's attack: a brand-new scout plays the day's deal at full speed to see its cards, the solver
    finds the line, the established main plays it. The scout is dealt its practice deal: the line it learns
    is that deal's, and the main's deal is another. Nothing of the attack reaches the board."""
    at_a_scripts_pace(app)
    engine = app.state.store.engine
    scout, main = person(app, "scout"), established_person(app, "main")
    begun = start(scout).json()
    key = seed_of(app, begun["id"])  # all the scout could ever learn: its own deal's cards, here every one
    day_key = app.state.test_keys["reloaded"]
    assert key != day_key
    solution = solve(get_game("reloaded").deal(key, daily_options("reloaded")), Budget(seconds=10, memory_mb=64))
    line = list(solution.moves) if solution.status is Status.WON else []
    with scout.websocket_connect("/ws") as ws:
        shown = join(ws, begun["id"])
        assert shown["table"]["piles"] != get_game("reloaded").deal(day_key, daily_options("reloaded")).view()["piles"]
        scouted = play_line(ws, line) if line else {}
    assert not line or scouted.get("outcome") == "won"  # the scout's own deal, won at machine pace
    mains = start(main).json()
    with main.websocket_connect("/ws") as ws:
        join(ws, mains["id"])
        played = play_line(ws, line)
        if played.get("outcome") != "won":
            send(ws, "giveup", {"ack": 10_000})
            reply_to(ws, 10_000)
    assert played.get("outcome") != "won"  # the scout's line does not win the day's deal
    board = day_board(engine, DAY, "reloaded")
    assert [(e["name"], e["outcome"]) for e in board] == [("Main", "given_up")]  # the scout: on no board
    assert all(e["outcome"] != "won" for e in board)
    assert scouting(engine, mains["id"]) == ""  # a practice deal scouts nothing: the main's game is not held
    assert scouting(engine, begun["id"]) == ""


def test_a_practice_attempt_scouts_nothing_and_a_scouted_day_is_only_a_flagged_established_one(
        app: Any) -> None:
    """Store level: a new account's practice attempt is no scout; an established account's attempt flagged
    ``machine`` scouts the day (and every later win the hidden cards decided is then held)."""
    engine = app.state.store.engine
    opponents = opponents_for_the_board(app.state.store)
    new, fast, main = person(app, "neo"), established_person(app, "fast", opponents), \
        established_person(app, "honest", opponents)
    start(new)
    fasts = start(fast).json()["id"]
    mains = start(main).json()["id"]
    assert scouting(engine, mains) == ""
    with engine.begin() as c:
        fp.write_evidence(c, [fp.Evidence(f"g:{fasts}", user_id_of(app, "fast"), "daily", "reloaded", None, fasts,
                                          1500.0, [], {})])
        c.execute(fp.EvidenceRow.__table__.update().where(fp.EvidenceRow.key == f"g:{fasts}")
                  .values(verdict="machine", analysed_ms=1))
    assert scouting(engine, mains) == "day"
