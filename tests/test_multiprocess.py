"""One arena on several ``patience serve`` processes: real processes on loopback ports, the real
PostgreSQL and Redis of this machine (started by the fixtures when they are down).

Two processes, one player on each: they are paired from the shared pool, play, the owner of the
match is killed with SIGKILL, the other process takes the match over from its move log, the
player whose socket died comes back through the other process, nothing acknowledged is lost, and
the match ends with its result and ratings. And a second process without a shared bus is refused
a database that one already uses.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from websockets.sync.client import connect

from arena_processes import Player, ServeProcess, fresh_redis, serving
from patience.duel import verify_match

pytestmark = pytest.mark.slow

FORMAT = "reloaded/standard/300"


@pytest.fixture
def arena_redis(redis_server: str) -> str:
    """A Redis database of this test alone (its keys; channels are named by process)."""
    return fresh_redis(redis_server, 9)


@pytest.fixture
def two(postgres_url: str, arena_redis: str, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    with serving(postgres_url, arena_redis, tmp_path) as (one, two):
        yield one, two


def moves_of(msg: dict[str, Any]) -> int:
    return int(msg["d"]["status"]["moves"])


def test_a_duel_across_two_processes_survives_the_owner_being_killed(two: tuple[ServeProcess, ServeProcess],
                                                                     arena_redis: str) -> None:
    one, other = two
    tag = secrets.token_hex(3)
    anna, bruno = Player(one.url, f"anna{tag}"), Player(other.url, f"bruno{tag}")
    anna.open()
    bruno.open()
    anna.seek(FORMAT)
    anna.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
    # Bruno's process sees Anna waiting on the other one: one pool
    deadline = time.monotonic() + 15  # her seek reaches the other process through Redis: ask until it has
    while True:
        bruno.send("lobby")
        shown = bruno.until(lambda m: m["t"] == "lobby")
        pool = next(p for p in shown["d"]["pools"] if p["format"] == FORMAT)
        if (pool["players"] and shown["d"]["online"] == 2) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [p["name"] for p in pool["players"]] == [anna.login.title()]
    assert shown["d"]["online"] == 2  # one player on each process
    bruno.seek(FORMAT)
    start_b = bruno.until(lambda m: m["t"] == "duel")["d"]
    start_a = anna.until(lambda m: m["t"] == "duel")["d"]
    assert start_a["id"] == start_b["id"] and start_a["commitment"] == start_b["commitment"]
    assert start_a["table"]["piles"] == start_b["table"]["piles"]  # one deal, played on one process
    match_id = start_a["id"]

    for _ in range(5):
        for player in (anna, bruno):
            answer = player.intent("stock")
            assert answer["t"] == "dev" and answer["d"]["kind"] == "move", answer
    seen_by_anna = anna.until(lambda m: m["t"] == "dev" and m["d"]["opp"]["moves"] == 5)
    clock_before = seen_by_anna["d"]["status"]["clock"]["ms"]

    lease = redis.Redis.from_url(arena_redis).get(f"patience:match:{match_id}")
    assert lease is not None
    owner_node = lease.decode().rsplit("/", 1)[0]  # the node's name holds its process id
    owner_proc = one if f"-{one.proc.pid}-" in owner_node else other
    assert f"-{owner_proc.proc.pid}-" in owner_node
    survivor = other if owner_proc is one else one
    on_owner, on_survivor = (anna, bruno) if owner_proc is one else (bruno, anna)

    killed_at = time.monotonic()
    owner_proc.kill()
    # the page on the survivor is told the match again by its new owner: the whole match, nothing lost
    again = on_survivor.until(lambda m: m["t"] == "duel", timeout=20)["d"]
    taken_over_s = time.monotonic() - killed_at
    assert again["id"] == match_id and again["status"]["moves"] == 5 and again["opp"]["moves"] == 5
    assert again["status"]["clock"]["ms"] <= clock_before + 1500  # the time nobody owned the match is not charged
    first_move = on_survivor.intent("stock")
    failover_s = time.monotonic() - killed_at
    assert first_move["t"] == "dev" and moves_of(first_move) == 6

    # the other player's socket died with its process: the page comes back through the survivor
    on_owner.close()
    on_owner.move_to(survivor.url)
    on_owner.open()
    on_owner.join(match_id, on_owner.v)
    back = on_owner.until(lambda m: m["t"] in ("duel", "dev"), timeout=20)
    if back["t"] == "dev":  # caught up by version: the snapshot is not needed
        on_owner.join(match_id, 0)
        back = on_owner.until(lambda m: m["t"] == "duel")
    assert back["d"]["status"]["moves"] == 5 and back["d"]["opp"]["moves"] == 6
    # an intent sent again after the crash is answered once, not played twice
    on_owner.ack -= 1
    repeat = on_owner.intent("stock")
    assert repeat["t"] in ("dev", "err")
    if repeat["t"] == "dev":
        assert moves_of(repeat) == 5  # the answer kept from before: the move counted once
    assert moves_of(on_owner.intent("stock")) == 6

    for player in (anna, bruno):
        player.intent("giveup")
    end = anna.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None)["d"]["end"]
    assert end["outcomes"] == ["given_up", "given_up"]
    record = httpx.get(f"{survivor.url}/api/matches/{match_id}").json()
    assert record["state"] == "over"
    result = verify_match(record["record"])
    assert result.winner == end["winner"] and list(result.scores) == end["scores"]
    games = record["record"]["games"]
    assert sum(1 for a in games[0]["actions"] if a["m"] != "giveup") == 6
    assert sum(1 for a in games[1]["actions"] if a["m"] != "giveup") == 6
    profile = httpx.get(f"{survivor.url}/api/profile/{anna.user_id}").json()
    assert profile["ratings"]["reloaded"]["matches"] == 1
    print(f"fail-over: the new owner played the match again {taken_over_s:.2f} s after kill -9; "
          f"first move accepted there after {failover_s:.2f} s")
    assert failover_s < 10


def test_a_second_process_without_a_shared_bus_is_refused(tmp_path: Path, postgres_url: str) -> None:
    for url in (f"sqlite:///{tmp_path / 'one.sqlite3'}", postgres_url):
        first = ServeProcess(url, None, tmp_path, f"first-{len(url)}")
        try:
            first.wait_ready()
            second = subprocess.run([sys.executable, "-m", "patience", "serve", "--port", "0", "--database-url", url,
                                     "--deal-stock", "0"], capture_output=True, text=True, timeout=60)
            assert second.returncode == 2
            assert "another patience serve uses the database" in second.stderr
            assert "--redis-url" in second.stderr and "Traceback" not in second.stderr
            assert httpx.get(f"{first.url}/healthz").text == "ok"  # the first goes on, untouched
        finally:
            first.stop()


def test_a_process_stopped_on_purpose_hands_its_matches_over_at_once(two: tuple[ServeProcess, ServeProcess],
                                                                     arena_redis: str) -> None:
    """Draining a process for a new version (docs/deploy.md): SIGTERM gives back its leases, and the
    other process plays its matches on within a second or two, nothing lost."""
    one, other = two
    tag = secrets.token_hex(3)
    anna, bruno = Player(one.url, f"anna{tag}"), Player(other.url, f"bruno{tag}")
    anna.open()
    bruno.open()
    anna.seek(FORMAT)
    anna.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
    bruno.seek(FORMAT)
    match_id = bruno.until(lambda m: m["t"] == "duel")["d"]["id"]
    anna.until(lambda m: m["t"] == "duel")
    for player in (anna, bruno):
        for _ in range(3):
            assert player.intent("stock")["t"] == "dev"
    lease = redis.Redis.from_url(arena_redis).get(f"patience:match:{match_id}")
    assert lease is not None
    owner_proc = one if f"-{one.proc.pid}-" in lease.decode() else other
    survivor = other if owner_proc is one else one
    on_owner, on_survivor = (anna, bruno) if owner_proc is one else (bruno, anna)
    stopped_at = time.monotonic()
    owner_proc.stop()  # SIGTERM
    again = on_survivor.until(lambda m: m["t"] == "duel", timeout=20)["d"]
    handed_over_s = time.monotonic() - stopped_at
    assert again["status"]["moves"] == 3 and again["opp"]["moves"] == 3
    assert moves_of(on_survivor.intent("stock")) == 4
    on_owner.close()
    on_owner.move_to(survivor.url)
    on_owner.open()
    back = on_owner.rejoin(match_id)
    assert back["status"]["moves"] == 3 and back["opp"]["moves"] == 4
    print(f"drain: the match was played on by the other process {handed_over_s:.2f} s after SIGTERM")
    assert handed_over_s < 4  # well before a lease would lapse by itself


# -- a solo page's websocket -------------------------------------------------------------------


def browser_cookie(server: ServeProcess) -> dict[str, str]:
    """The header of a new browser's cookie, as the server gave it."""
    with httpx.Client(base_url=server.url) as http:
        http.get("/")
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in http.cookies.items())}


def answer(ws: Any, ack: int) -> dict[str, Any]:
    """The answer to the intent ``ack`` (what comes before it is passed over)."""
    while True:
        msg = json.loads(ws.recv(timeout=15))
        if msg["d"].get("ack") == ack:
            return msg  # type: ignore[no-any-return]


def draw(ws: Any, ack: int) -> dict[str, Any]:
    ws.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
    return answer(ws, ack)


def join(ws: Any, game_id: str, seen: int = 0) -> dict[str, Any]:
    """Show solo game ``game_id`` on this page, whose last version seen is ``seen``: the game, or an error."""
    ws.send(json.dumps({"t": "join", "d": {"id": game_id, "v": seen, "cid": "page"}}))
    while True:
        msg = json.loads(ws.recv(timeout=20))
        if msg["t"] in ("game", "err"):
            return msg  # type: ignore[no-any-return]


def test_a_solo_game_goes_on_at_whichever_process_its_page_reaches(two: tuple[ServeProcess, ServeProcess]) -> None:
    """A solo game is played by one process at a time (its lease): a page that comes back through
    another process takes the game along, every acknowledged move with it, even after a kill -9."""
    one, other = two
    cookie = browser_cookie(one)

    with connect(f"ws://127.0.0.1:{one.port}/ws", additional_headers=cookie) as first:
        first.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": "9", "cid": "page"}}))
        game_id = json.loads(first.recv(timeout=10))["d"]["id"]
        for ack in (1, 2, 3):
            assert draw(first, ack)["t"] == "ev"
        with connect(f"ws://127.0.0.1:{other.port}/ws", additional_headers=cookie) as second:
            moved = join(second, game_id)
            assert moved["t"] == "game" and moved["d"]["status"]["moves"] == 3
            told = json.loads(first.recv(timeout=10))
            assert told["t"] == "err" and told["d"]["code"] == "moved"  # the first page is told where it went
            assert draw(second, 4)["d"]["status"]["moves"] == 4
    other.kill()
    with connect(f"ws://127.0.0.1:{one.port}/ws", additional_headers=cookie) as back:
        again = join(back, game_id)  # after the dead process's lease lapses
        assert again["t"] == "game" and again["d"]["status"]["moves"] == 4
        assert draw(back, 5)["d"]["status"]["moves"] == 5


def test_workers_share_one_port_and_one_arena(postgres_url: str, arena_redis: str, tmp_path: Path) -> None:
    server = ServeProcess(postgres_url, arena_redis, tmp_path, "workers", extra=("--workers", "2"))
    try:
        server.wait_ready()
        client = redis.Redis.from_url(arena_redis)
        deadline = time.monotonic() + 20
        while len(nodes := list(client.scan_iter("patience:node:*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(nodes) == 2  # two processes, each a node of the arena
        tag = secrets.token_hex(3)
        anna, bruno = Player(server.url, f"anna{tag}"), Player(server.url, f"bruno{tag}")
        for player in (anna, bruno):
            player.open()
        anna.seek(FORMAT)
        anna.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] == FORMAT)
        bruno.seek(FORMAT)
        match_id = bruno.until(lambda m: m["t"] == "duel")["d"]["id"]
        assert anna.until(lambda m: m["t"] == "duel")["d"]["id"] == match_id
        assert anna.intent("stock")["t"] == "dev" and bruno.intent("stock")["t"] == "dev"
        for player in (anna, bruno):
            player.close()
    finally:
        server.stop()


def test_an_intent_sent_again_to_another_process_is_not_played_twice(two: tuple[ServeProcess, ServeProcess]) -> None:
    """A page whose answer was lost reconnects through another process and sends its intent again: the
    process that took the game over answers it as the first one did (the answer was written with the
    move), and the stock is not turned twice; even after that process is killed with SIGKILL."""
    one, other = two
    cookie = browser_cookie(one)

    with connect(f"ws://127.0.0.1:{one.port}/ws", additional_headers=cookie) as first:
        first.send(json.dumps({"t": "new", "d": {"game": "reloaded", "seed": "9", "cid": "page"}}))
        game_id = json.loads(first.recv(timeout=10))["d"]["id"]
        answers = [draw(first, ack) for ack in (1, 2, 3)]
    assert [a["t"] for a in answers] == ["ev"] * 3 and moves_of(answers[2]) == 3
    with connect(f"ws://127.0.0.1:{other.port}/ws", additional_headers=cookie) as second:
        moved = join(second, game_id, answers[1]["d"]["v"])  # the page never saw the answer to ack 3
        assert moved["t"] == "game" and moves_of(moved) == 3 and moved["d"]["v"] >= answers[2]["d"]["v"]
        second.send(json.dumps({"t": "stock", "d": {"ack": 3}}))  # sent again
        assert answer(second, 3) == answers[2]  # the same answer, not a second draw
        second.send(json.dumps({"t": "stock", "d": {"ack": 2}}))
        assert answer(second, 2)["d"]["code"] == "stale_ack"  # older: refused, never carried out
        fourth = draw(second, 4)
        assert fourth["t"] == "ev" and moves_of(fourth) == 4
    other.kill()
    with connect(f"ws://127.0.0.1:{one.port}/ws", additional_headers=cookie) as back:
        again = join(back, game_id, 0)  # after the dead process's lease lapses
        assert again["t"] == "game" and moves_of(again) == 4
        back.send(json.dumps({"t": "stock", "d": {"ack": 4}}))
        assert answer(back, 4) == fourth
        assert moves_of(draw(back, 5)) == 5
