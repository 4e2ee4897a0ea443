"""The flow around a duel, through the real app and real websockets: the "match found" countdown
before both clocks start, a rematch on a new secret deal, what a challenge link says before
anyone accepts it, the lobby's live figures, and spectators, who see figures and never a card.
"""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec

import test_server_duel
from helpers import FakeTime, mentioned_cards
from patience.server.arena.matches import COUNTDOWN_SECONDS
from test_server_duel import (
    FORMAT,
    Page,
    arena_of,
    browser,
    end_of,
    finish,
    let_start,
    make_app,
    pair,
    person,
    play,
    running,
)

COUNTDOWN_MS = round(COUNTDOWN_SECONDS * 1000)
app, seeds = test_server_duel.app, test_server_duel.seeds  # the fixtures of the duel tests


def started(page: Page) -> dict[str, Any]:
    """The first ``duel`` message this page got (its "match found" moment)."""
    return next(m for m in map(json.loads, page.raw) if m["t"] == "duel")["d"]  # type: ignore[no-any-return]


def test_match_found_shows_both_players_and_counts_down_before_both_clocks_start(app: Any,
                                                                                 fake_time: FakeTime) -> None:
    a, b, live = pair(app, started=False)
    for page in (a, b):
        found = started(page)
        assert found["starts_in"] == COUNTDOWN_MS  # the countdown, the same for both
        assert [p["name"] for p in found["players"]] == ["Anna", "Bruno"]
        assert all(p["rating"] == 1500 and p["provisional"] for p in found["players"])
        assert found["status"]["clock"]["ms"] == 0 and found["opp"]["left_ms"] == 300_000
    refused = a.intent("stock")  # a move before the start is refused, with the reason, and changes nothing
    assert refused["t"] == "err" and refused["d"]["code"] == "not_started"
    assert "start in 3.0 s" in refused["d"]["msg"]
    assert live.version == 0 and live.match.sessions[a.side].moves_made == 0

    fake_time.t += 1.0
    a.close()  # Anna reconnects during the countdown: it goes on where it was, on the server's clock
    again = Page(a.client, "pa2")
    again.join(live.id)
    snap = again.until(lambda m: m["t"] == "duel")["d"]
    assert snap["starts_in"] == COUNTDOWN_MS - 1000 and snap["status"]["clock"]["ms"] == 0
    assert again.intent("stock")["d"]["code"] == "not_started"

    fake_time.t += COUNTDOWN_SECONDS - 1.0 + 1.5  # the countdown is over, and 1.5 s more
    moved = again.intent("stock")
    assert moved["t"] == "dev" and moved["d"]["status"]["clock"]["ms"] == 1500  # from the countdown's end
    assert moved["d"]["opp"]["left_ms"] == 300_000 - 1500  # Bruno's clock started at the same moment
    assert b.until(lambda m: m["t"] == "dev")["d"]["status"]["clock"]["ms"] == 1500
    again.close()
    b.close()


def test_a_match_rebuilt_before_its_first_row_counts_down_again(database_url: str, fake_time: FakeTime,
                                                                 seeds: Any) -> None:
    with running(make_app(database_url, fake_time)) as first:
        a, b, live = pair(first, started=False)
        fake_time.t += 2.0
        for page in (a, b):
            page.close()
    with running(make_app(database_url, fake_time)) as second:  # a restart in the countdown
        client = browser(second)
        client.cookies = a.client.cookies
        again = Page(client)
        again.join(live.id)
        snap = again.until(lambda m: m["t"] == "duel")["d"]
        assert snap["starts_in"] == COUNTDOWN_MS  # the players see a whole countdown again
        assert again.intent("stock")["d"]["code"] == "not_started"
        again.close()


def test_a_rematch_when_both_ask_is_a_new_secret_deal_of_the_same_format(app: Any) -> None:
    a, b, live = pair(app)
    first_end = finish(a, b, live, random.Random(5), moves=3)["end"]
    anna_before = first_end["ratings"][a.side]["rating"]
    a.send("rematch", {"id": live.id})
    offer = b.until(lambda m: m["t"] == "rematch")["d"]
    assert offer == {"id": live.id, "state": "offered", "by": a.side}
    assert a.until(lambda m: m["t"] == "rematch")["d"]["state"] == "offered"
    b.send("decline", {"id": live.id})  # Bruno declines: Anna's page says so
    assert a.until(lambda m: m["t"] == "rematch")["d"] == {"id": live.id, "state": "declined", "by": b.side}
    a.send("rematch", {"id": live.id})
    a.send("decline", {"id": live.id})  # and takes her offer back
    assert b.until(lambda m: m["t"] == "rematch" and m["d"]["state"] == "withdrew")["d"]["by"] == a.side
    a.send("rematch", {"id": live.id})
    b.until(lambda m: m["t"] == "rematch" and m["d"]["state"] == "offered")
    b.send("rematch", {"id": live.id})  # both accept: a new match starts for both
    new_a = a.until(lambda m: m["t"] == "duel")["d"]
    new_b = b.until(lambda m: m["t"] == "duel")["d"]
    assert new_a["id"] == new_b["id"] != live.id
    assert new_a["format"] == FORMAT and new_a["starts_in"] == COUNTDOWN_MS
    assert new_a["commitment"] != started(a)["commitment"]  # a new deal, committed anew
    assert {p["name"] for p in new_a["players"]} == {"Anna", "Bruno"}
    assert new_a["players"][new_a["you"]]["rating"] == anna_before  # the ratings after the first match
    second = arena_of(app).matches[new_a["id"]]
    assert second.match.seed != live.match.seed  # a new secret key from the stock, never the same deal
    let_start(app)
    finish(a, b, second, random.Random(6), moves=2)
    assert second.end is not None and second.end.seed != first_end["seed"]  # revealed at its end: another key
    a.close()
    b.close()


def test_a_rematch_offer_goes_when_the_other_page_leaves(app: Any) -> None:
    a, b, live = pair(app)
    finish(a, b, live, random.Random(7), moves=2)
    a.send("rematch", {"id": live.id})
    b.until(lambda m: m["t"] == "rematch")
    b.close()  # Bruno leaves the page
    assert a.until(lambda m: m["t"] == "rematch" and m["d"]["state"] != "offered")["d"] == {
        "id": live.id, "state": "left", "by": b.side}
    a.send("rematch", {"id": live.id})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "no_rematch"
    a.send("rematch", {"id": "nosuchmatch1"})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "no_game"
    a.close()


def test_no_rematch_before_the_end(app: Any) -> None:
    a, b, live = pair(app)
    a.send("rematch", {"id": live.id})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "not_over"
    a.close()
    b.close()


def look(page: Page, code: str) -> dict[str, Any]:
    page.send("look", {"code": code})
    return page.until(lambda m: m["t"] == "look" and m["d"]["code"] == code)["d"]  # type: ignore[no-any-return]


def test_a_challenge_link_says_who_challenges_and_which_duel_before_accepting(app: Any,
                                                                            fake_time: FakeTime) -> None:
    host, friend, visitor = Page(person(app, "jana")), Page(person(app, "karl")), Page(browser(app))
    host.send("challenge", {"format": "faecher/standard/600"})
    code = host.until(lambda m: m["t"] == "challenge")["d"]["code"]
    for page in (friend, visitor):  # a visitor who is not signed in sees it too
        said = look(page, code)
        assert said["state"] == "open" and said["format"] == "faecher/standard/600" and not said["away"]
        assert said["by"]["name"] == "Jana" and said["by"]["rating"] == 1500 and said["by"]["provisional"]
    assert look(host, code)["state"] == "own"
    assert look(friend, "NoSuchCode123")["state"] == "unknown"
    friend.send("accept", {"code": code})
    friend.until(lambda m: m["t"] == "duel")
    assert look(visitor, code)["state"] == "taken"
    # a challenge of an hour ago
    other = Page(person(app, "lena"))
    other.send("challenge", {"format": FORMAT})
    old = other.until(lambda m: m["t"] == "challenge")["d"]["code"]
    fake_time.t += 3601
    assert look(visitor, old) == {"code": old, "state": "expired", "by": None, "format": FORMAT, "away": False}
    other.close()  # its maker's page gone: an open challenge says its maker is away
    new_host = Page(person(app, "moritz"))
    new_host.send("challenge", {"format": FORMAT})
    fresh = new_host.until(lambda m: m["t"] == "challenge")["d"]["code"]
    new_host.close()
    assert look(visitor, fresh)["away"] is True
    fake_time.t += 86400  # a day on, the first link, taken up then, is forgotten once another is taken up
    maker, taker = Page(person(app, "nina")), Page(person(app, "otto"))
    maker.send("challenge", {"format": FORMAT})
    friend.close()  # Karl's match goes on without his page; Otto takes up Nina's link
    taker.send("accept", {"code": maker.until(lambda m: m["t"] == "challenge")["d"]["code"]})
    taker.until(lambda m: m["t"] == "duel")
    assert look(visitor, code)["state"] == "unknown"
    for page in (host, visitor, maker, taker):
        page.close()


def test_the_lobby_is_pushed_live_with_who_waits_who_is_online_and_the_matches_to_watch(app: Any) -> None:
    watcher = Page(person(app, "olga"))
    watcher.send("lobby", {})
    first = watcher.until(lambda m: m["t"] == "lobby")["d"]
    assert first["online"] == 1 and first["live"] == []
    newcomer = Page(person(app, "paul"))
    newcomer.send("lobby", {})  # another player opens the duel page: the count rises on Olga's page unasked
    assert watcher.until(lambda m: m["t"] == "lobby" and m["d"]["online"] == 2)
    newcomer.send("seek", {"format": "reloaded/standard/600"})  # Paul waits: his name and rating are shown

    def pool(lobby: dict[str, Any]) -> dict[str, Any]:
        return next(p for p in lobby["pools"] if p["format"] == "reloaded/standard/600")

    shown = watcher.until(lambda m: m["t"] == "lobby" and pool(m["d"])["waiting"] == 1)["d"]
    assert pool(shown)["players"] == [{"id": newcomer_id(app), "name": "Paul", "rating": 1500, "provisional": True}]
    a, b, live = pair(app)
    listed = watcher.until(lambda m: m["t"] == "lobby" and m["d"]["live"] != [])["d"]["live"]
    assert listed == [{"id": live.id, "format": FORMAT, "players": [
        {"id": p.id, "name": p.name, "rating": 1500, "provisional": True} for p in live.match.players]}]
    for page in (a, b):
        page.intent("giveup")
    assert watcher.until(lambda m: m["t"] == "lobby" and m["d"]["live"] == [])
    for page in (watcher, newcomer, a, b):
        page.close()


def newcomer_id(app: Any) -> str:
    return next(c.user.id for c in arena_of(app).peers.values() if c.user is not None and c.user.name == "Paul")


def test_spectators_see_both_players_figures_and_never_a_card(app: Any, fake_time: FakeTime) -> None:
    a, b, live = pair(app, started=False)
    fan, visitor = Page(person(app, "quinn")), Page(browser(app))  # a player, and a visitor not signed in
    for page in (fan, visitor):
        page.send("watch", {"id": live.id})
        view = page.until(lambda m: m["t"] == "watch")["d"]
        assert view["id"] == live.id and view["starts_in"] == COUNTDOWN_MS
        assert [p["name"] for p in view["players"]] == ["Anna", "Bruno"] and view["end"] is None
    let_start(app)
    rng = random.Random(9)
    for _ in range(12):
        for page in (a, b):
            if not live.match.sessions[page.side].is_over:
                play(page, live, rng)
    fake_time.t += 11  # a time penalty arrives as a tick, and the spectators are told
    last = fan.until(lambda m: m["t"] == "watch" and m["d"]["sides"][0]["ms"] >= 11_000)["d"]
    assert last["sides"] == [msgspec.structs.asdict(live.progress(side)) for side in (0, 1)]
    assert last["sides"][0]["moves"] > 0 and last["sides"][1]["moves"] > 0
    assert fan.intent("stock")["d"]["code"] == "no_game"  # a spectator plays nothing
    for page in (a, b):
        page.intent("giveup")
    end = end_of(a)["end"]
    for page in (fan, visitor):
        ended = page.until(lambda m: m["t"] == "watch" and m["d"]["end"] is not None)["d"]
        assert ended["end"]["winner"] == end["winner"] and ended["end"]["finals"] == end["finals"]
        for text in page.raw:  # every message a spectator got: no card, no table, no deal before the end
            msg = json.loads(text)
            assert msg["t"] in ("watch", "err", "lobby"), msg["t"]
            assert not mentioned_cards(msg), msg
            assert "table" not in text and "piles" not in text and "ledger" not in text
            if msg["t"] == "watch" and msg["d"]["end"] is None:
                assert str(live.match.seed) not in text
    for page in (a, b):  # and the players' pages never get a spectator's message
        assert all(json.loads(text)["t"] != "watch" for text in page.raw)
    for page in (a, b, fan, visitor):
        page.close()


def test_watching_an_unknown_match_says_so(app: Any) -> None:
    visitor = Page(browser(app))
    visitor.send("watch", {"id": "nosuchmatch1"})
    assert visitor.until(lambda m: m["t"] == "err")["d"]["code"] == "no_such_match"
    visitor.close()


def test_a_spectator_whose_challenge_is_taken_up_plays_and_watches_no_more(app: Any) -> None:
    a, b, live = pair(app)
    host, friend = Page(person(app, "jana")), Page(person(app, "karl"))
    host.send("challenge", {"format": FORMAT})
    code = host.until(lambda m: m["t"] == "challenge")["d"]["code"]
    host.send("watch", {"id": live.id})  # Jana watches while she waits for her friend
    host.until(lambda m: m["t"] == "watch")
    friend.send("accept", {"code": code})
    own = host.until(lambda m: m["t"] == "duel")["d"]
    assert own["id"] != live.id
    seen = len(host.raw)
    rng = random.Random(4)
    for page in (a, b):
        play(page, live, rng)
    a.until(lambda m: m["t"] == "dev" and m["d"]["kind"] == "opp")  # Bruno's move is told
    host.send("ping", {})
    host.until(lambda m: m["t"] == "pong")
    assert all(json.loads(text)["t"] != "watch" for text in host.raw[seen:])  # her page plays: no spectator's view
    for page in (a, b, host, friend):
        page.close()
