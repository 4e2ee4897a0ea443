"""Leaving a match on one process (SQLite and PostgreSQL): a give-up in the countdown counts at once, so a
series of quick matches and rematches never leaves a player "in a match" that is over; a match whose
owner died between its result and freeing its players is freed by whoever finds it; and a pool does not
pair two accounts that met last while another player waits."""

from __future__ import annotations

from typing import Any

import test_server_duel
from helpers import FakeTime
from patience.server.arena.matches import COUNTDOWN_SECONDS
from patience.server.arena.pools import MET_KEEP_SECONDS, MET_PRUNE_SECONDS
from test_server_duel import FORMAT, Page, arena_of, make_app, pair, person, running

app, seeds = test_server_duel.app, test_server_duel.seeds  # the fixtures of the duel tests


def shared(app: Any) -> dict[str, dict[str, bytes]]:
    """What the arena's bus says is going on: who plays (``busy``) and which matches (``live``, ``live_info``)."""
    bus = arena_of(app).bus
    return {key: app.state.test_portal.call(bus.hgetall, key) for key in ("busy", "live", "live_info")}


def test_give_ups_in_the_countdown_end_the_match_at_once_and_a_rematch_chain_never_locks_anyone(
        app: Any, fake_time: FakeTime) -> None:
    a, b, live = pair(app, started=False)
    ids = [live.id]
    for _ in range(5):
        given = a.intent("giveup")  # at the first moment a page can: the countdown has not ended
        assert given["t"] == "dev" and given["d"]["status"]["outcome"] == "given_up"
        assert given["d"]["status"]["clock"]["ms"] == 0  # at 0:00: no time of the match was played
        assert b.intent("stock")["d"]["code"] == "not_started"  # a move still waits for the start
        end = b.intent("giveup")["d"]["end"]  # the last give-up ends the match, before its clocks ever ran
        assert end is not None and end["outcomes"] == ["given_up", "given_up"]
        assert shared(app) == {"busy": {}, "live": {}, "live_info": {}}  # nobody is held by a match that is over
        a.send("rematch", {"id": ids[-1]})
        b.until(lambda m: m["t"] == "rematch")
        b.send("rematch", {"id": ids[-1]})
        found = a.until(lambda m: m["t"] == "duel")["d"]
        assert b.until(lambda m: m["t"] == "duel")["d"]["id"] == found["id"] not in ids
        assert found["starts_in"] == round(COUNTDOWN_SECONDS * 1000)
        ids.append(found["id"])
    # the last of the chain: a seek while it goes on is refused; once over, it is taken at once
    a.send("seek", {"format": FORMAT, "cid": a.cid})
    assert a.until(lambda m: m["t"] == "err")["d"]["code"] == "in_match"
    fake_time.t += COUNTDOWN_SECONDS
    a.intent("giveup")
    b.intent("giveup")
    a.send("seek", {"format": FORMAT, "cid": a.cid})
    assert a.until(lambda m: m["t"] in ("lobby", "err"))["t"] == "lobby"
    a.close()
    b.close()


def test_a_match_left_listed_by_an_owner_that_died_is_freed_by_whoever_finds_it(database_url: str,
                                                                                 fake_time: FakeTime,
                                                                                 seeds: Any) -> None:
    with running(make_app(database_url, fake_time)) as application:
        a, b, live = pair(application)
        a.intent("giveup")
        b.intent("giveup")
        arena = arena_of(application)
        owned, portal, bus = arena.owned, application.state.test_portal, arena.bus
        # as if the owner had died after the result's commit and before freeing the players: listed, busy
        portal.call(bus.hset, "live", live.id, b"a-process-that-died")
        portal.call(bus.hset, "live_info", live.id, b"{}")
        for player in live.match.players:
            portal.call(bus.hset, "busy", player.id, live.id.encode())
        del owned.matches[live.id]
        portal.call(bus.release, f"match:{live.id}", owned.leases.pop(live.id))
        assert portal.call(owned.take_over, live.id) is None  # over in the database: nothing to play
        assert shared(application) == {"busy": {}, "live": {}, "live_info": {}}
        # a player left busy with a match no longer listed (a process died halfway) is free at their next seek
        portal.call(bus.hset, "busy", live.match.players[0].id, live.id.encode())
        a.send("seek", {"format": FORMAT, "cid": a.cid})
        assert a.until(lambda m: m["t"] in ("lobby", "err"))["t"] == "lobby"
        a.close()
        b.close()


def test_a_pool_pairs_two_who_met_last_apart_while_a_third_waits(app: Any) -> None:
    a, b, live = pair(app)
    a.intent("giveup")
    b.intent("giveup")
    arena = arena_of(app)
    for page in (a, b):  # both seek again at the same moment, on the page of their match
        page.send("seek", {"format": FORMAT, "cid": page.cid})
        page.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
    app.state.test_portal.call(arena.pools.wave)
    assert app.state.test_portal.call(arena.pools.waiting, FORMAT).keys() == {p.id for p in live.match.players}
    carla = Page(person(app, "carla"), "pc")  # a third comes: she meets one of them
    carla.send("seek", {"format": FORMAT, "cid": carla.cid})
    met = carla.until(lambda m: m["t"] == "duel")["d"]
    names = {p["name"] for p in met["players"]}
    assert "Carla" in names and len(names & {"Anna", "Bruno"}) == 1
    for page in (a, b, carla):
        page.close()


def test_whom_a_player_met_last_is_forgotten_once_it_no_longer_counts(app: Any, fake_time: FakeTime) -> None:
    """``met`` holds a field per player of the last minutes, never one per player ever paired: the
    pairer deletes the fields that lapsed (MET_KEEP_SECONDS after the match's end)."""
    a, b, live = pair(app)
    a.intent("giveup")
    b.intent("giveup")
    bus, portal, pools = arena_of(app).bus, app.state.test_portal, arena_of(app).pools
    ids = {p.id for p in live.match.players}
    portal.call(pools.wave)
    assert portal.call(bus.hgetall, "met").keys() == ids  # still counts: the pools keep them apart
    fake_time.t += MET_KEEP_SECONDS - 5
    portal.call(pools.wave)
    assert portal.call(bus.hgetall, "met").keys() == ids
    fake_time.t += max(10.0, MET_PRUNE_SECONDS)
    portal.call(pools.wave)
    assert portal.call(bus.hgetall, "met") == {}
    a.close()
    b.close()
