"""A mark takes effect at once, on one process (SQLite; PostgreSQL too where said): the marked account's open
Play now matches close and the one it had taken is void for the other player, who is told; a duel of it going
on ends at once, its opponent losing nothing; a rematch of a match with it and an
accept of its challenge link are refused; and no page or API that shows an account answers an error for
a marked account that had played duels, a tournament and the deal of the day, nor once it is cleared."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import test_daily
from helpers import FakeTime, at_a_scripts_pace
from patience.server.solo.hints import simple_hint
from patience.server.storage import apart as db
from patience.server.storage import fairplay as fp
from patience.server.storage.roles import grant
from patience.server.storage.store import MatchRow
from patience.server.storage.tournaments import Tournament, join_tournament, make_tournament
from test_fairplay import bot_move
from test_playnow import play_and_give_up, play_now, player
from test_server_app import reply_to, send
from test_server_duel import FORMAT, Page, make_app, pair, person, post, running
from test_server_duel import seeds as seeds  # the fixture: duels deal from known keys
from test_tournaments import play as play_tournament_duel


@pytest.fixture
def app(tmp_path: Path, fake_time: FakeTime, seeds: Any) -> Any:
    with running(make_app(tmp_path, fake_time)) as application:
        at_a_scripts_pace(application)
        application.state.fairplay.hint = lambda session: simple_hint(session.state)  # fast and deterministic
        yield test_daily.stocked(application)


def user_id(client: Any) -> str:
    return client.get("/api/me").json()["user"]["id"]  # type: ignore[no-any-return]


def moderate(app: Any, user: str, action: str) -> None:
    """A moderator's action on an account, through the moderators' API (the moderator made once)."""
    if not hasattr(app.state, "test_moderator"):
        app.state.test_moderator = person(app, "ada")
        grant(app.state.store, "ada", "moderator")
    answer = post(app.state.test_moderator, f"/api/mod/account/{user}", action=action, note="plays like a script")
    assert answer.status_code == 200, answer.text


def test_a_mark_closes_the_hosts_open_matches_and_voids_the_one_taken(app: Any) -> None:
    host = player(app, "hugo", "127.0.0.2")
    first = play_now(host).json()
    play_and_give_up(host, first["game_id"])  # hosts a match, played: open for a challenger
    carla = player(app, "carla", "127.0.0.3")
    taken = play_now(carla).json()  # Carla takes it and plays on
    assert taken["role"] == "challenger" and taken["id"] == first["id"]
    second = play_now(host).json()
    play_and_give_up(host, second["game_id"])  # another, nobody took it yet
    page = Page(carla, "pc")  # the duel page, where Play now is played: it shows the lobby too
    page.send("join", {"id": taken["game_id"], "v": 0, "cid": page.cid})
    page.send("lobby", {})
    page.until(lambda m: m["t"] == "lobby")
    moderate(app, user_id(host), "mark_bot")
    told = page.until(lambda m: m["t"] == "playnow")  # at once, on her page
    assert told["d"] == {"id": first["id"], "state": "void"}
    page.send("giveup", {"ack": 1})
    page.until(lambda m: m["d"].get("ack") == 1)
    page.close()
    app.state.test_portal.call(app.state.arena.playnow.sweep)
    engine = app.state.store.engine
    assert (db.find_apart(engine, first["id"]).state, db.find_apart(engine, second["id"]).state) == ("void",
                                                                                                     "closed")
    mine = carla.get("/api/playnow").json()["games"]
    assert [(g["state"], g["result"]) for g in mine] == [("void", None)]  # no result, no rating change
    assert carla.get(f"/api/profile/{user_id(carla)}").json()["ratings"] == {} or all(
        r["matches"] == 0 for r in carla.get(f"/api/profile/{user_id(carla)}").json()["ratings"].values())
    dora = player(app, "dora", "127.0.0.4")
    assert play_now(dora).json()["role"] == "host"  # the closed match is dealt to nobody


def test_a_bot_marked_by_the_detection_has_its_open_match_closed(app: Any, fake_time: FakeTime) -> None:
    bot, human, live = pair(app, "robo", "slowpoke")
    hosted = play_now(bot.client).json()
    play_and_give_up(bot.client, hosted["game_id"])  # a match of Play now waits for a challenger
    for _ in range(40):  # the duel at machine speed: marked by the analysis of its evidence
        if live.match.sessions[bot.side].is_over:
            break
        bot_move(bot, live, fake_time, 0.1)
    if not live.match.sessions[bot.side].is_over:
        bot.intent("giveup")
    human.intent("giveup")
    app.state.test_portal.call(app.state.fairplay.settled)
    assert fp.marked_category(app.state.store.engine, user_id(bot.client)) == "bot"
    for _ in range(100):  # carried out on the arena's loop, just after the analysis
        if db.find_apart(app.state.store.engine, hosted["id"]).state == "closed":
            break
        time.sleep(0.02)
    assert db.find_apart(app.state.store.engine, hosted["id"]).state == "closed"
    bot.close()
    human.close()


def test_no_rematch_and_no_accept_with_a_marked_account(app: Any) -> None:
    a, b, live = pair(app)
    a.intent("giveup")
    b.intent("giveup")
    a.send("rematch", {"id": live.id})
    b.until(lambda m: m["t"] == "rematch")
    moderate(app, user_id(a.client), "mark_bot")
    assert b.until(lambda m: m["t"] == "rematch")["d"] == {"id": live.id, "state": "marked", "by": a.side}
    b.send("rematch", {"id": live.id})  # both pages still ask: refused, whatever the page had been told
    assert b.until(lambda m: m["t"] == "err")["d"]["code"] == "marked"
    a.send("rematch", {"id": live.id})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "marked"
    assert app.state.arena.matches.keys() == {live.id}  # no new match
    a.close()
    b.close()
    # a challenge link made before the mark is not taken up after it
    eve, fritz = Page(person(app, "eve"), "pe"), Page(person(app, "fritz"), "pf")
    eve.send("challenge", {"format": FORMAT, "cid": eve.cid})
    code = eve.until(lambda m: m["t"] == "challenge")["d"]["code"]
    moderate(app, user_id(eve.client), "mark_bot")
    fritz.send("accept", {"code": code, "cid": fritz.cid})
    assert fritz.until(lambda m: m["t"] == "err")["d"]["code"] in ("marked", "no_such_challenge")
    assert app.state.arena.matches.keys() == {live.id}
    eve.close()
    fritz.close()


def test_every_page_of_a_marked_then_cleared_account_answers(app: Any) -> None:
    a, b, live = pair(app)
    a.intent("giveup")
    b.intent("giveup")
    anna, bruno = user_id(a.client), user_id(b.client)
    store = app.state.store
    make_tournament(store.engine, Tournament("tour0001", "Cup", "faecher/standard/300", 0, 10**13))
    for user in (anna, bruno):
        join_tournament(store.engine, "tour0001", user)
    play_tournament_duel(store, "tour0001", "tourmatch01", anna, bruno, 0)
    daily = test_daily.start(a.client).json()["id"]
    with a.client.websocket_connect("/ws") as ws:
        send(ws, "join", {"id": daily, "v": 0, "cid": "pd"})
        ws.receive_json()
        send(ws, "giveup", {"ack": 1})
        reply_to(ws, 1)
    visitor = person(app, "vera")
    paths = ["/profile", f"/api/profile/{anna}", f"/matches?player={anna}", f"/api/matches?player={anna}",
             f"/match?id={live.id}", f"/api/matches/{live.id}", "/api/matches/tourmatch01", "/tournament?id=tour0001",
             "/api/tournaments/tour0001", "/api/tournaments", "/daily", "/api/daily/reloaded", "/leaderboard",
             "/api/leaderboard", "/api/leaderboard?game=faecher"]
    for state in ("mark_bot", "clear"):
        moderate(app, anna, state)
        for client in (a.client, visitor):
            for path in [*paths, "/api/daily/mine", "/api/playnow"]:
                answer = client.get(path)
                assert answer.status_code < 500, (state, path, answer.text[:300])
        profile = visitor.get(f"/api/profile/{anna}").json()
        assert profile["fairplay"]["marked"] is (state == "mark_bot")
        places = [t["id"] for t in profile.get("tournaments", [])]
        assert places == ([] if state == "mark_bot" else ["tour0001"])  # a marked account has no place
    a.close()
    b.close()



@pytest.fixture
def arena_app(database_url: str, fake_time: FakeTime, seeds: Any) -> Any:
    """As ``app``, on each database in turn (SQLite, PostgreSQL)."""
    with running(make_app(database_url, fake_time)) as application:
        at_a_scripts_pace(application)
        application.state.fairplay.hint = lambda session: simple_hint(session.state)
        yield test_daily.stocked(application)


def test_a_clear_reopens_the_play_now_matches_its_mark_closed_and_takes_the_voided_again(arena_app: Any) -> None:
    """A true undo (docs/fairplay.md): the match the mark closed is open again and dealt to the next
    challenger; the one it voided is taken again and, both games over, completed and rated; each in the
    audit log of both players."""
    app = arena_app
    host = player(app, "hugo", "127.0.0.2")
    first = play_now(host).json()
    play_and_give_up(host, first["game_id"])
    carla = player(app, "carla", "127.0.0.3")
    taken = play_now(carla).json()
    assert taken["id"] == first["id"]
    second = play_now(host).json()
    play_and_give_up(host, second["game_id"])
    moderate(app, user_id(host), "mark_bot")
    engine = app.state.store.engine
    assert (db.find_apart(engine, first["id"]).state, db.find_apart(engine, second["id"]).state) == ("void",
                                                                                                     "closed")
    play_and_give_up(carla, taken["game_id"])  # her game ends while the match is void
    moderate(app, user_id(host), "clear")
    assert (db.find_apart(engine, first["id"]).state, db.find_apart(engine, second["id"]).state) == ("taken",
                                                                                                     "open")
    app.state.test_portal.call(app.state.arena.playnow.sweep)  # both games over: completed, rated
    assert db.find_apart(engine, first["id"]).state == "done"
    assert [g["state"] for g in carla.get("/api/playnow").json()["games"]] == ["done"]
    dora = player(app, "dora", "127.0.0.4")
    dealt = play_now(dora).json()  # the match the mark had closed is dealt again
    assert dealt["role"] == "challenger" and dealt["id"] == second["id"]
    for who in (host, carla):
        view = fp.account_view(engine, user_id(who))
        assert view is not None and "reopen" in [a["action"] for a in view["audit"]]


def test_a_duel_going_on_when_the_mark_lands_ends_at_once_and_the_honest_player_loses_nothing(
        arena_app: Any, fake_time: FakeTime) -> None:
    bot, human, live = pair(arena_app, "robo", "hannah")
    for _ in range(3):  # a few moves each: no real attempt yet
        bot_move(bot, live, fake_time, 1.0)
        bot_move(human, live, fake_time, 1.0)
    moderate(arena_app, user_id(bot.client), "mark_bot")
    for page in (human, bot):  # both pages get the end at once, neither having asked for it
        end = page.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None)["d"]["end"]
        assert end["outcomes"] == ["given_up", "given_up"]
        assert [c["reason"] for c in end["changes"]] == ["marked", "marked"]
        assert [r["rating"] for r in end["ratings"]] == [1500, 1500]
    assert human.until(lambda m: m["t"] == "rematch")["d"]["state"] == "marked"
    assert live.match.is_over
    with arena_app.state.store.engine.connect() as c:
        assert c.scalar(select(MatchRow.state).where(MatchRow.id == live.id)) == "over"  # written, as any end
    profile = human.client.get(f"/api/profile/{user_id(human.client)}").json()
    assert profile["ratings"]["reloaded"]["rating"] == 1500
    assert profile["recent"][0]["change"]["reason"] == "marked"  # no quit counted against the honest player
    bot.close()
    human.close()
