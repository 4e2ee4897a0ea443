"""Fair play in an arena of two ``patience serve`` processes (PostgreSQL and Redis, docs/fairplay.md): an
account that played a rated duel across the processes and is then marked through the moderators' API on
process one is refused a seek (websocket) and Play now (HTTP) on process two, and is gone from the
leaderboard of both, while its opponent stays."""

from __future__ import annotations

import secrets
import time
from typing import Any

import pytest
import redis

import test_multiprocess
from arena_processes import Player, ServeProcess, meet
from patience.server.storage.roles import grant
from patience.server.storage.store import Store

pytestmark = pytest.mark.slow

two, arena_redis = test_multiprocess.two, test_multiprocess.arena_redis  # the arena of two processes

FORMAT = "reloaded/standard/300"


def board_ids(player: Player) -> set[str]:
    return {p["id"] for p in player.http.get("/api/leaderboard", params={"game": "reloaded"}).json()["players"]}


def post(player: Player, path: str, **fields: str) -> Any:
    token = player.http.get("/api/me").json()["csrf"]
    return player.http.post(path, data={"csrf": token, **fields}, headers={"accept": "application/json"})


def test_an_account_marked_on_one_process_is_refused_on_the_other(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    tag = secrets.token_hex(3)
    bot = Player(one.url, f"fpbot{tag}", address="127.0.41.1")
    human = Player(other.url, f"fphum{tag}", address="127.0.41.2")
    moderator = Player(one.url, f"fpmod{tag}", address="127.0.41.3")
    store = Store(postgres_url)
    try:
        assert grant(store, moderator.login, "moderator")
    finally:
        store.close()
    try:
        meet(bot, human, FORMAT)  # a rated duel between the processes: both give up at once
        bot.intent("giveup")
        human.intent("giveup")
        deadline = time.monotonic() + 30
        while not {bot.user_id, human.user_id} <= board_ids(bot) & board_ids(human):
            assert time.monotonic() < deadline, "the rated duel never reached both leaderboards"
            time.sleep(0.5)

        # the mod API is for moderators only, on every process
        assert post(human, f"/api/mod/account/{bot.user_id}", action="mark_bot", note="x").status_code == 404
        answer = post(moderator, f"/api/mod/account/{bot.user_id}", action="mark_bot", note="machine-made games")
        assert answer.status_code == 200 and answer.json()["state"] == "marked", answer.text

        bot.close()
        bot.move_to(other.url)
        bot.open()
        bot.seek(FORMAT)
        assert bot.until(lambda m: m["t"] == "err")["d"]["code"] == "marked"
        answer = post(bot, f"/api/playnow/{FORMAT}")
        assert answer.status_code == 403 and answer.json()["error"] == "marked", answer.text
        for where in (moderator, human):  # process one, process two
            ids = board_ids(where)
            assert bot.user_id not in ids and human.user_id in ids
        assert human.http.get(f"/api/profile/{bot.user_id}").json()["fairplay"]["marked"] is True
    finally:
        for player in (bot, human, moderator):
            player.close()
            player.http.close()


def test_a_duel_going_on_is_ended_by_a_mark_made_on_the_other_process(
        two: tuple[ServeProcess, ServeProcess], postgres_url: str, arena_redis: str) -> None:
    """The moderator marks on the process that does not own the match: the owner ends it at once (the bus
    channel ``marked``) and both pages, one on each process, get the end; the honest player loses nothing."""
    one, other = two
    tag = secrets.token_hex(3)
    bot = Player(one.url, f"fpbot{tag}", address="127.0.42.1")
    human = Player(other.url, f"fphum{tag}", address="127.0.42.2")
    store = Store(postgres_url)
    try:
        match_id = meet(bot, human, FORMAT)
        lease = redis.Redis.from_url(arena_redis).get(f"patience:match:{match_id}")
        assert lease is not None
        owner = one if f"-{one.proc.pid}-" in lease.decode().rsplit("/", 1)[0] else other
        moderator = Player((other if owner is one else one).url, f"fpmod{tag}", address="127.0.42.3")
        assert grant(store, moderator.login, "moderator")
        bot.intent("stock")
        human.intent("stock")
        answer = post(moderator, f"/api/mod/account/{bot.user_id}", action="mark_bot", note="machine-made games")
        assert answer.status_code == 200, answer.text
        for page in (bot, human):
            end = page.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None, timeout=20)["d"]["end"]
            assert [c["reason"] for c in end["changes"]] == ["marked", "marked"]
            assert [r["rating"] for r in end["ratings"]] == [1500, 1500]
        profile = human.http.get(f"/api/profile/{human.user_id}").json()
        assert profile["ratings"]["reloaded"]["rating"] == 1500
        assert profile["recent"][0]["change"]["reason"] == "marked"
        moderator.close()
        moderator.http.close()
    finally:
        store.close()
        for player in (bot, human):
            player.close()
            player.http.close()
