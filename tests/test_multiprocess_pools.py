"""The pools of an arena of two ``patience serve`` processes (PostgreSQL and Redis), paired in waves
by one pairer: a burst of seeks on both processes is paired with nobody left out, nobody twice and
nobody turned away, each match played on a process of one of its players; a seek is answered while
nobody can pair (the pairer's lease held elsewhere) and paired as soon as someone can; when the
pairer is killed, the other process pairs; a process stopped past its lease (SIGSTOP) has its seeker,
and its tournament player, paired once it runs again.
"""

from __future__ import annotations

import json
import secrets
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from arena_processes import Player, ServeProcess, fresh_redis, serving
from patience.server.storage.store import Store
from patience.server.storage.tournaments import Tournament, make_tournament

pytestmark = pytest.mark.slow

FORMAT = "reloaded/standard/300"
DB = 6  # a Redis database of this module's own (the tournaments' module has 14): no other arena in its pools


@pytest.fixture
def arena_redis(redis_server: str) -> str:
    return fresh_redis(redis_server, DB)


@pytest.fixture
def two(postgres_url: str, arena_redis: str, tmp_path: Path) -> Iterator[list[ServeProcess]]:
    with serving(postgres_url, arena_redis, tmp_path) as procs:
        yield procs


def players(procs: list[ServeProcess], count: int, net: int) -> list[Player]:
    """``count`` players, in turn on each process, each from a loopback address of their own."""
    tag = secrets.token_hex(2)
    made = [Player(procs[i % len(procs)].url, f"p{tag}n{i}", address=f"127.0.{net}.{i + 1}") for i in range(count)]
    for player in made:
        player.open()
    return made


def owner_of(client: redis.Redis, match_id: str, procs: list[ServeProcess]) -> ServeProcess:
    lease = client.get(f"patience:match:{match_id}")
    assert lease is not None
    return next(p for p in procs if f"-{p.proc.pid}-" in lease.decode())


def test_a_burst_of_seeks_on_both_processes_is_paired_once_each(two: list[ServeProcess], arena_redis: str) -> None:
    crowd = players(two, 40, 2)
    for player in crowd:
        player.seek(FORMAT)
    started = [player.until(lambda m: m["t"] in ("duel", "err"), timeout=20) for player in crowd]
    assert [msg["t"] for msg in started] == ["duel"] * len(crowd), [m for m in started if m["t"] == "err"]
    by_match = Counter(msg["d"]["id"] for msg in started)
    assert set(by_match.values()) == {2}  # every match has its two players, nobody is in two
    client = redis.Redis.from_url(arena_redis)
    place = {player.user_id: two[i % 2] for i, player in enumerate(crowd)}
    for match_id in by_match:
        sides = [player.user_id for player, msg in zip(crowd, started, strict=True) if msg["d"]["id"] == match_id]
        assert owner_of(client, match_id, two) in {place[user] for user in sides}  # played where a player is
    assert client.hlen(f"patience:pool:{FORMAT}") == 0 and client.hlen("patience:seeking") == 0
    for player in crowd:
        player.close()


def test_a_seek_is_answered_while_nobody_can_pair_and_paired_once_someone_can(
        two: list[ServeProcess], arena_redis: str) -> None:
    client = redis.Redis.from_url(arena_redis)
    deadline = time.monotonic() + 10
    while client.get("patience:pairer") is None:  # one of the two has become the pairer
        assert time.monotonic() < deadline
        time.sleep(0.1)
    client.set("patience:pairer", "elsewhere/0", xx=True, px=60_000)  # as if a third process paired and hung
    anna, bruno = players(two, 2, 3)
    for player in (anna, bruno):
        player.seek(FORMAT)
        assert player.until(lambda m: m["t"] in ("lobby", "err"))["d"].get("seeking") == FORMAT  # not turned away
    time.sleep(2)
    assert client.hlen(f"patience:pool:{FORMAT}") == 2  # nobody paired them
    client.delete("patience:pairer")  # the hung pairer's lease is gone: a process pairs within a wave
    ids = {player.until(lambda m: m["t"] == "duel", timeout=10)["d"]["id"] for player in (anna, bruno)}
    assert len(ids) == 1


def test_when_the_pairer_is_killed_the_other_process_pairs(two: list[ServeProcess], arena_redis: str) -> None:
    client = redis.Redis.from_url(arena_redis)
    deadline = time.monotonic() + 10
    while (holder := client.get("patience:pairer")) is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    pairer = next(p for p in two if f"-{p.proc.pid}-" in holder.decode())
    survivor = next(p for p in two if p is not pairer)
    pairer.kill()
    anna, bruno = players([survivor], 2, 4)
    for player in (anna, bruno):
        player.seek(FORMAT)
    ids = {player.until(lambda m: m["t"] == "duel", timeout=15)["d"]["id"] for player in (anna, bruno)}
    assert len(ids) == 1
    assert owner_of(client, ids.pop(), two) is survivor


def test_an_intent_in_flight_when_the_owner_dies_is_answered_by_the_next_owner(
        two: list[ServeProcess], arena_redis: str) -> None:
    """A page on the other process sends an intent that reaches the owner just as it stops (frozen,
    then killed): the page's process sends it again to the process that takes the match over, and
    the page gets its answer without reconnecting, played once."""
    anna, bruno = players(two, 2, 5)
    for player in (anna, bruno):
        player.seek(FORMAT)
    match_id = {player.until(lambda m: m["t"] == "duel")["d"]["id"] for player in (anna, bruno)}.pop()
    for player in (anna, bruno):
        assert player.intent("stock")["t"] == "dev"
    owner = owner_of(redis.Redis.from_url(arena_redis), match_id, two)
    far = bruno if owner is two[0] else anna  # anna's page is on the first process, bruno's on the second
    owner.proc.send_signal(signal.SIGSTOP)  # it reads nothing more: the intent waits at a process that is gone
    try:
        time.sleep(max(0.0, far.starts_at - time.monotonic()))
        far.ack += 1
        ack = far.ack
        far.send("stock", {"ack": ack})
        time.sleep(0.5)
    finally:
        owner.kill()
    answer = far.until(lambda m: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack, timeout=30)
    assert answer["t"] == "dev" and answer["d"]["status"]["moves"] == 2, answer
    assert far.intent("stock", timeout=20)["d"]["status"]["moves"] == 3  # played once: the next is the third


def test_a_seeker_of_a_process_that_stalled_past_its_lease_is_still_paired(
        two: list[ServeProcess], arena_redis: str) -> None:
    """A process stopped (SIGSTOP) past its heartbeat looks dead to the pairer, which takes its seeker out
    of the pool; once it runs again, its seeker (whose page stayed connected) waits again and is paired
    with a seeker on the other process."""
    client = redis.Redis.from_url(arena_redis)
    deadline = time.monotonic() + 10
    while (holder := client.get("patience:pairer")) is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    stalled = next(p for p in two if f"-{p.proc.pid}-" in holder.decode())  # the pairer: the other takes over
    other = next(p for p in two if p is not stalled)
    anna, = players([stalled], 1, 6)
    bruno, = players([other], 1, 7)
    anna.seek(FORMAT)
    assert anna.until(lambda m: m["t"] in ("lobby", "err"))["d"].get("seeking") == FORMAT
    stalled.proc.send_signal(signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 60
        while client.hget(f"patience:pool:{FORMAT}", anna.user_id) is not None:  # the other pairs now, without her
            assert time.monotonic() < deadline, "the pairer never took the stalled process's seeker out"
            time.sleep(0.2)
    finally:
        stalled.proc.send_signal(signal.SIGCONT)
    bruno.seek(FORMAT)
    ids = {player.until(lambda m: m["t"] == "duel", timeout=30)["d"]["id"] for player in (anna, bruno)}
    assert len(ids) == 1
    assert client.hlen(f"patience:pool:{FORMAT}") == 0 and client.hlen("patience:seeking") == 0


def pairer_of(client: redis.Redis, procs: list[ServeProcess]) -> ServeProcess:
    deadline = time.monotonic() + 10
    while (holder := client.get("patience:pairer")) is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return next(p for p in procs if f"-{p.proc.pid}-" in holder.decode())


def test_a_tournament_player_of_a_process_that_stalled_past_its_lease_is_still_paired(
        two: list[ServeProcess], arena_redis: str, postgres_url: str) -> None:
    """As for a seeker: the pairer takes the page of a player on a process that looks dead out of the
    tournament's pages; once that process runs again, it puts the page back and the player is paired."""
    client = redis.Redis.from_url(arena_redis)
    stalled = pairer_of(client, two)
    other = next(p for p in two if p is not stalled)
    now_ms = int(time.time() * 1000)
    tournament_id = f"test{secrets.token_hex(3)}"
    make_tournament(Store(postgres_url).engine, Tournament(tournament_id, "Stalled", FORMAT, now_ms,
                                                            now_ms + 600_000))
    anna, = players([stalled], 1, 8)
    bruno, = players([other], 1, 9)
    anna.send("tjoin", {"id": tournament_id})
    anna.until(lambda m: m["t"] == "tour" and m["d"]["joined"])
    pages = f"patience:tour_pages:{tournament_id}"
    node = json.loads(client.hget(pages, anna.user_id) or b"{}")["node"]
    stalled.proc.send_signal(signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 60
        while client.get(f"patience:node:{node}") is not None:  # its lease lapses: it looks dead
            assert time.monotonic() < deadline
            time.sleep(0.2)
        bruno.send("tjoin", {"id": tournament_id})  # two free players: the new pairer looks for their pages
        bruno.until(lambda m: m["t"] == "tour" and m["d"]["joined"])
        deadline = time.monotonic() + 60
        while client.hget(pages, anna.user_id) is not None:
            assert time.monotonic() < deadline, "the pairer never took the stalled process's page out"
            time.sleep(0.2)
    finally:
        stalled.proc.send_signal(signal.SIGCONT)
    ids = {player.until(lambda m: m["t"] == "duel", timeout=30)["d"]["id"] for player in (anna, bruno)}
    assert len(ids) == 1
