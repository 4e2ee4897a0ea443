"""Spectators and rematches in an arena of two ``patience serve`` processes (PostgreSQL and Redis):
the players' pages on different processes, a spectator on each process (so one of them always
watches through the bus, on a process that does not own the match), every message a spectator
gets read for a card, and a rematch settled across the processes on a new secret deal."""

from __future__ import annotations

import json
import secrets

import pytest
import redis

import test_multiprocess
from arena_processes import Player, ServeProcess, meet
from helpers import mentioned_cards

pytestmark = pytest.mark.slow

FORMAT = "reloaded/standard/300"
two, arena_redis = test_multiprocess.two, test_multiprocess.arena_redis  # the arena of two processes


def test_spectators_on_both_processes_and_a_rematch_across_them(two: tuple[ServeProcess, ServeProcess]) -> None:
    one, other = two
    tag = secrets.token_hex(3)
    anna, bruno = Player(one.url, f"anna{tag}"), Player(other.url, f"bruno{tag}")
    fans = [Player(one.url, f"carla{tag}"), Player(other.url, f"dora{tag}")]
    match_id = meet(anna, bruno, FORMAT)
    first = next(m for m in bruno.got if m["t"] == "duel")["d"]
    for fan in fans:
        fan.open()
    for fan in fans:
        fan.send("lobby", {})
        fan.until(lambda m: m["t"] == "lobby" and any(info["id"] == match_id for info in m["d"]["live"]))
        fan.send("watch", {"id": match_id})
        view = fan.until(lambda m: m["t"] == "watch")["d"]
        assert view["id"] == match_id and {p["name"] for p in view["players"]} == {anna.login.title(),
                                                                                 bruno.login.title()}
    for _ in range(3):
        for player in (anna, bruno):
            assert player.intent("stock")["t"] == "dev"
    for fan in fans:  # both spectators see both players' figures, wherever the match is played
        fan.until(lambda m: m["t"] == "watch" and [s["moves"] for s in m["d"]["sides"]] == [3, 3])
    anna.intent("giveup")
    bruno.intent("giveup")
    end = anna.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None)["d"]["end"]
    for fan in fans:
        ended = fan.until(lambda m: m["t"] == "watch" and m["d"]["end"] is not None)["d"]["end"]
        assert ended["winner"] == end["winner"] and ended["seed"] == end["seed"]
        for msg in fan.got:  # every message a spectator got: never a card, a table or a ledger
            assert msg["t"] in ("watch", "lobby"), msg
            assert not mentioned_cards(msg), msg
            text = json.dumps(msg)
            assert '"table"' not in text and '"piles"' not in text and '"ledger"' not in text
    for player in (anna, bruno):
        assert all(msg["t"] != "watch" for msg in player.got)

    # a rematch: the offer crosses the processes, and both pages get the new match
    anna.send("rematch", {"id": match_id})
    offer = bruno.until(lambda m: m["t"] == "rematch")["d"]
    assert offer == {"id": match_id, "state": "offered", "by": anna.side}
    bruno.send("rematch", {"id": match_id})
    again = [player.until(lambda m: m["t"] == "duel" and m["d"]["id"] != match_id)["d"] for player in (anna, bruno)]
    assert again[0]["id"] == again[1]["id"]
    assert again[0]["format"] == FORMAT and again[0]["commitment"] != first["commitment"]
    assert again[0]["starts_in"] > 0
    anna.intent("giveup")
    second_end = bruno.intent("giveup")["d"]["end"]  # the last give-up ends the match
    assert second_end["seed"] != end["seed"]  # a new secret deal
    for person in (anna, bruno, *fans):
        person.close()



def test_a_spectator_follows_the_match_when_its_owner_is_killed(two: tuple[ServeProcess, ServeProcess],
                                                                arena_redis: str) -> None:
    one, other = two
    tag = secrets.token_hex(3)
    anna, bruno = Player(one.url, f"anna{tag}"), Player(other.url, f"bruno{tag}")
    match_id = meet(anna, bruno, FORMAT)
    for player in (anna, bruno):
        assert player.intent("stock")["t"] == "dev"
    lease = redis.Redis.from_url(arena_redis).get(f"patience:match:{match_id}")
    assert lease is not None
    owner_proc = one if f"-{one.proc.pid}-" in lease.decode() else other
    survivor = other if owner_proc is one else one
    on_survivor = bruno if owner_proc is one else anna
    fan = Player(survivor.url, f"erik{tag}")  # watches from the process that will live on
    fan.open()
    fan.send("watch", {"id": match_id})
    fan.until(lambda m: m["t"] == "watch" and [s["moves"] for s in m["d"]["sides"]] == [1, 1])
    owner_proc.kill()
    on_survivor.until(lambda m: m["t"] == "duel", timeout=20)  # the survivor took the match over
    assert on_survivor.intent("stock")["t"] == "dev"
    side = on_survivor.side
    seen = fan.until(lambda m: m["t"] == "watch" and m["d"]["sides"][side]["moves"] == 2, timeout=20)
    assert not mentioned_cards(seen)
    for person in (anna, bruno, fan):
        person.close()
