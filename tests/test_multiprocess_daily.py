"""The deal of the day in an arena of two ``patience serve`` processes (PostgreSQL and Redis): a player's
attempt begun on one process goes on through the other, starts on both at once find that one attempt, and
once it has ended neither process starts another; both show one entry on the day's board. A new account is
dealt a practice deal of its own on either process, and on no board."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

import test_multiprocess
from arena_processes import Player, ServeProcess
from helpers import establish
from patience.daily import DAILY, daily_options
from patience.games import get_game
from patience.rng import new_deal_key
from patience.server.arena.dealstock import add_deal
from patience.server.storage.daily import find_deal
from patience.server.storage.store import Store

pytestmark = pytest.mark.slow

two, arena_redis = test_multiprocess.two, test_multiprocess.arena_redis  # the arena of two processes


def start(http: httpx.Client) -> httpx.Response:
    token = http.get("/api/me").json()["csrf"]
    return http.post("/api/daily/reloaded/start", data={"csrf": token}, headers={"accept": "application/json"})


def answer(ws: Any, t: str, d: dict[str, Any]) -> dict[str, Any]:
    """Send an intent and read until its answer (or the game's snapshot, for a join)."""
    ws.send(json.dumps({"t": t, "d": d}))
    while True:
        msg = json.loads(ws.recv(timeout=20))
        if msg["t"] in ("game", "err") or ("ack" in d and msg["d"].get("ack") == d["ack"]):
            return msg  # type: ignore[no-any-return]


def test_one_attempt_across_two_processes(two: tuple[ServeProcess, ServeProcess], postgres_url: str) -> None:
    one, other = two
    store = Store(postgres_url)  # the arena's database: one proved key in the day variant's stock
    add_deal(store.engine, f"reloaded/{DAILY['reloaded']}", new_deal_key(), 1)
    ada = Player(one.url, "ada")
    establish(store, ada.user_id)  # she meets the board's entry rule: the day's deal is hers to play
    store.close()
    begun = start(ada.http)
    assert begun.status_code == 200, begun.text
    game_id = begun.json()["id"]
    cookie = {"Cookie": "; ".join(f"{k}={v}" for k, v in ada.http.cookies.items())}
    with connect(f"ws://127.0.0.1:{one.port}/ws", additional_headers=cookie) as first:
        assert answer(first, "join", {"id": game_id, "v": 0, "cid": "p1"})["t"] == "game"
        assert answer(first, "stock", {"ack": 1})["d"]["status"]["moves"] == 1

        # the same player on the other process, twice at once (two tabs): the attempt begun, not a new one
        elsewhere = httpx.Client(base_url=other.url, cookies=ada.http.cookies, timeout=10.0)
        got: list[httpx.Response] = []
        tabs = [threading.Thread(target=lambda: got.append(start(elsewhere))) for _ in range(2)]
        for tab in tabs:
            tab.start()
        for tab in tabs:
            tab.join()
        assert [(r.status_code, r.json()["id"]) for r in got] == [(200, game_id)] * 2
        with connect(f"ws://127.0.0.1:{other.port}/ws", additional_headers=cookie) as second:
            moved = answer(second, "join", {"id": game_id, "v": 0, "cid": "p2"})
            assert moved["t"] == "game" and moved["d"]["status"]["moves"] == 1  # taken along, the move with it
            told = json.loads(first.recv(timeout=10))
            while told["t"] != "err":  # the clock's events may come first
                told = json.loads(first.recv(timeout=10))
            assert told["d"]["code"] == "moved"
            assert answer(second, "giveup", {"ack": 1})["d"]["status"]["outcome"] == "given_up"

    for process in (one, other):  # neither process plays the day's deal again; both show one game of Ada
        again = start(httpx.Client(base_url=process.url, cookies=ada.http.cookies, timeout=10.0))
        assert again.status_code == 409 and again.json()["error"] == "attempt_over"
        board = httpx.get(f"{process.url}/api/daily/reloaded").json()
        assert [(e["name"], e["moves"], e["outcome"]) for e in board["entries"]] == [("Ada", 1, "given_up")]


def test_a_new_account_plays_a_practice_deal_on_either_process(two: tuple[ServeProcess, ServeProcess],
                                                               postgres_url: str) -> None:
    one, other = two
    store = Store(postgres_url)
    add_deal(store.engine, f"reloaded/{DAILY['reloaded']}", new_deal_key(), 1)
    nina = Player(one.url, "nina")
    begun = start(nina.http)
    assert begun.status_code == 200 and begun.json()["practice"] is True
    game_id = begun.json()["id"]
    elsewhere = httpx.Client(base_url=other.url, cookies=nina.http.cookies, timeout=10.0)
    assert elsewhere.get("/api/daily/reloaded").json()["practice"]["begun"] is True
    again = start(elsewhere)
    assert again.status_code == 200 and again.json() == begun.json()  # one attempt: the practice, on both
    deal = find_deal(store.engine, begun.json()["day"], "reloaded")
    assert deal is not None
    cookie = {"Cookie": "; ".join(f"{k}={v}" for k, v in nina.http.cookies.items())}
    with connect(f"ws://127.0.0.1:{other.port}/ws", additional_headers=cookie) as ws:
        shown = answer(ws, "join", {"id": game_id, "v": 0, "cid": "p1"})
        assert shown["t"] == "game" and deal.deal not in json.dumps(shown)
        day_table = get_game("reloaded").deal(deal.deal, daily_options("reloaded")).view()["piles"]
        assert shown["d"]["table"]["piles"] != day_table  # not the day's deal
        assert answer(ws, "giveup", {"ack": 1})["d"]["status"]["outcome"] == "given_up"
    store.close()
    for process in (one, other):  # on no board, on either process
        assert httpx.get(f"{process.url}/api/daily/reloaded").json()["entries"] == []
