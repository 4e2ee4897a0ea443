"""Leaving matches and marks in an arena of two ``patience serve`` processes (PostgreSQL and Redis): quick
series of matches given up at the first moment a page can (in the countdown) and rematch chains, across
the processes, never leave a player ``in_match`` once a match is over; neither does a match whose owner
was killed with ``kill -9`` and that was finished on the other process; an account marked on one
process is refused a rematch on the other, its open Play now match is dealt to nobody and the one it
had taken is void, with the challenger told on her process."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from arena_processes import Player, ServeProcess, fresh_redis, meet, serving
from patience.server.storage.roles import grant
from patience.server.storage.store import Store

pytestmark = pytest.mark.slow

DB = 7  # a Redis database of this module's own: no other arena's players in its pools


@pytest.fixture
def arena_redis(redis_server: str) -> str:
    return fresh_redis(redis_server, DB)


@pytest.fixture
def two(postgres_url: str, arena_redis: str, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    with serving(postgres_url, arena_redis, tmp_path) as (one, other):
        yield one, other

FORMAT = "reloaded/standard/300"
FREE_WITHIN_S = 10.0


def give_up_now(player: Player) -> dict[str, Any]:
    """A give-up sent the moment the page has the match (the countdown has not ended), and its answer."""
    player.ack += 1
    ack = player.ack
    player.send("giveup", {"ack": ack})
    return player.until(lambda m: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack)


def held(client: redis.Redis, players: list[Player], matches: list[str]) -> dict[str, int]:
    """The entries of these players and matches the arena's shared state still holds: busy, listed."""
    busy = client.hmget("patience:busy", [p.user_id for p in players])
    return {"busy": sum(found is not None for found in busy),
            **{key: sum(found is not None for found in client.hmget(f"patience:{key}", matches))
               for key in ("live", "live_info")}}


def all_free(client: redis.Redis, players: list[Player], matches: list[str], within: float = FREE_WITHIN_S) -> float:
    """Seconds until none of ``players`` is busy and none of ``matches`` is listed (fails after ``within``)."""
    started = time.monotonic()
    while (found := held(client, players, matches)) != {"busy": 0, "live": 0, "live_info": 0}:
        assert time.monotonic() - started < within, f"still held {within:.0f} s after the end: {found}"
        time.sleep(0.1)
    return time.monotonic() - started


def series(a: Player, b: Player, matches: int) -> list[str]:
    """``matches`` matches of ``a`` and ``b`` in a rematch chain, each given up by both in its countdown."""
    match_id = meet(a, b, FORMAT)
    ids = [match_id]
    for n in range(matches):
        first = give_up_now(a)
        assert first["t"] == "dev" and first["d"]["status"]["outcome"] == "given_up", first
        end = give_up_now(b)
        assert end["t"] == "dev" and end["d"]["end"] is not None, end
        if n == matches - 1:
            break
        a.send("rematch", {"id": match_id})
        b.until(lambda m: m["t"] == "rematch" and m["d"]["state"] == "offered")
        b.send("rematch", {"id": match_id})
        match_id = a.until(lambda m: m["t"] == "duel" and m["d"]["id"] != ids[-1])["d"]["id"]
        assert b.until(lambda m: m["t"] == "duel" and m["d"]["id"] != ids[-1])["d"]["id"] == match_id
        ids.append(match_id)
    return ids


def test_quick_series_and_a_kill_never_leave_a_player_in_a_match_that_is_over(
        two: tuple[ServeProcess, ServeProcess], arena_redis: str) -> None:
    one, other = two
    client = redis.Redis.from_url(arena_redis)
    tag = secrets.token_hex(3)
    played = 0
    for n in range(3):  # three pairs, one player on each process: 3 × 8 matches
        a, b = Player(one.url, f"qa{n}{tag}"), Player(other.url, f"qb{n}{tag}")
        ids = series(a, b, 8)
        played += len(ids)
        all_free(client, [a, b], ids)
        a.seek(FORMAT)  # free at once: a seek is taken, never answered in_match
        assert a.until(lambda m: m["t"] == "err" or (m["t"] == "lobby" and m["d"]["seeking"]))["t"] == "lobby"
        a.send("unseek", {})
        a.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] is None)
        for player in (a, b):
            player.close()
    assert played == 24

    # kill -9 of the process that owns a match going on: the other takes it over, it is finished there
    anna, bruno = Player(one.url, f"ka{tag}"), Player(other.url, f"kb{tag}")
    match_id = meet(anna, bruno, FORMAT)
    time.sleep(max(0.0, anna.starts_at - time.monotonic()))
    assert anna.intent("stock")["t"] == "dev"
    lease = client.get(f"patience:match:{match_id}")
    assert lease is not None
    owner = one if f"-{one.proc.pid}-" in lease.decode() else other
    survivor = other if owner is one else one
    on_owner, on_survivor = (anna, bruno) if owner is one else (bruno, anna)
    owner.kill()
    on_survivor.until(lambda m: m["t"] == "duel", timeout=20)  # taken over: its page is told the match again
    on_owner.close()
    on_owner.move_to(survivor.url)
    on_owner.open()
    assert on_owner.rejoin(match_id)["id"] == match_id
    on_survivor.intent("giveup")
    assert on_owner.intent("giveup")["d"]["end"] is not None
    freed_s = all_free(client, [anna, bruno], [match_id])
    on_owner.seek(FORMAT)
    assert on_owner.until(lambda m: m["t"] == "err" or (m["t"] == "lobby" and m["d"]["seeking"]))["t"] == "lobby"
    print(f"{played} quick matches in rematch chains: nobody held; after a kill -9 and a takeover, freed in "
          f"{freed_s:.2f} s")
    for player in (anna, bruno):
        player.close()


def post(player: Player, path: str, **fields: str) -> Any:
    token = player.http.get("/api/me").json()["csrf"]
    return player.http.post(path, data={"csrf": token, **fields}, headers={"accept": "application/json"})


def play_now_and_give_up(player: Player) -> dict[str, Any]:
    """Press Play now and give the game up at once (it waits then for a challenger, or is the challenger's)."""
    answer = post(player, f"/api/playnow/{FORMAT}")
    assert answer.status_code == 200, answer.text
    started: dict[str, Any] = answer.json()
    player.send("join", {"id": started["game_id"], "v": 0, "cid": player.cid})
    player.until(lambda m: m["t"] == "game")
    player.send("giveup", {"ack": 1})
    player.until(lambda m: m["d"].get("ack") == 1)
    return started


def test_a_mark_on_one_process_closes_what_the_account_had_open_on_both(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    tag = secrets.token_hex(3)
    bot = Player(one.url, f"mbot{tag}", address="127.0.42.1")
    victim = Player(other.url, f"mvic{tag}", address="127.0.42.2")
    carla = Player(other.url, f"mcar{tag}", address="127.0.42.3")
    dora = Player(other.url, f"mdor{tag}", address="127.0.42.4")
    moderator = Player(one.url, f"mmod{tag}", address="127.0.42.5")
    store = Store(postgres_url)
    try:
        assert grant(store, moderator.login, "moderator")
    finally:
        store.close()
    bot.open()
    hosted = [play_now_and_give_up(bot) for _ in range(2)]  # two matches of Play now wait for a challenger
    bot.close()
    match_id = meet(bot, victim, FORMAT)  # a match across the processes, over
    give_up_now(bot)
    give_up_now(victim)
    for player in (carla, dora):
        player.open()
    carla.send("lobby", {})
    carla.until(lambda m: m["t"] == "lobby")
    taken = post(carla, f"/api/playnow/{FORMAT}").json()
    assert taken["role"] == "challenger" and taken["id"] in {h["id"] for h in hosted}
    victim.send("rematch", {"id": match_id})
    bot.until(lambda m: m["t"] == "rematch" and m["d"]["state"] == "offered")

    answer = post(moderator, f"/api/mod/account/{bot.user_id}", action="mark_bot", note="machine-made games")
    assert answer.status_code == 200 and answer.json()["state"] == "marked", answer.text
    marked = victim.until(lambda m: m["t"] == "rematch" and m["d"]["state"] != "offered")["d"]
    assert marked == {"id": match_id, "state": "marked", "by": bot.side}  # told on the other process
    told = carla.until(lambda m: m["t"] == "playnow")["d"]  # the taken match is void, and she is told
    assert told == {"id": taken["id"], "state": "void"}
    bot.send("rematch", {"id": match_id})  # both pages ask anyway: refused, on both processes
    assert bot.until(lambda m: m["t"] == "err")["d"]["code"] == "marked"
    victim.send("rematch", {"id": match_id})
    assert victim.until(lambda m: m["t"] == "err")["d"]["code"] == "marked"
    assert post(dora, f"/api/playnow/{FORMAT}").json()["role"] == "host"  # the open one is dealt to nobody
    states = {g["id"]: g["state"] for g in bot.http.get("/api/playnow").json()["games"]}
    assert sorted(states.values()) == ["closed", "void"]
    for player in (bot, victim, carla, dora):
        player.close()
