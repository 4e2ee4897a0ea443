"""A tournament of four scripted players over two ``patience serve`` processes (PostgreSQL and Redis), run
to its end: each player is paired again as soon as their duel has ended, across the processes, never
with the same opponent twice in a row, never in two duels at once; the standings are the same on both
processes, and count no points for a duel in which neither side made a real attempt (docs/protocol.md).

The players are of known strength in Der Fächer, where a wrong move costs points: Anna makes none, Bruno
one, Carla two, Dora three, then each gives up at once; so the stronger always wins the match, and nobody
made a real attempt (the points for real duels: tests/test_tournaments.py, on both databases)."""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena_processes import Player, ServeProcess, fresh_redis, serving
from patience.server.storage.store import Store
from patience.server.storage.tournaments import Tournament, make_tournament
from patience.tournament import duel_points

pytestmark = pytest.mark.slow

FORMAT = "faecher/standard/300"
LENGTH_S = 32.0


@pytest.fixture
def two(postgres_url: str, redis_server: str, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    with serving(postgres_url, fresh_redis(redis_server, 14), tmp_path) as (one, two):
        yield one, two


def play_tournament(player: Player, tournament_id: str, wrong: int, out: dict[str, Any]) -> None:
    """Join, then play every duel the tournament brings: ``wrong`` wrong moves, then give up; until the end."""
    try:
        player.open()
        player.send("tour", {"id": tournament_id})
        player.until(lambda m: m["t"] == "tour")
        player.send("tjoin", {"id": tournament_id})
        player.until(lambda m: m["t"] == "tour" and m["d"]["joined"])
        played: list[str] = []
        over_at: float | None = None
        read = len(player.got)  # every message is looked at here, those read while a duel was played too
        while True:
            if over_at is not None and time.monotonic() - over_at > 2.0:
                break  # the tournament is over and no duel came after it (whatever else the server still says)
            if read == len(player.got):
                try:
                    player.recv(timeout=1.0)
                except TimeoutError:
                    continue
            msg = player.got[read]
            read += 1
            if msg["t"] == "duel" and msg["d"]["id"] not in played and msg["d"]["end"] is None:
                played.append(msg["d"]["id"])
                for _ in range(wrong):
                    player.intent("move", src="fs", dst="v1", n=1)
                if player.intent("giveup")["d"].get("end") is None:  # the other one has not ended yet
                    player.until(lambda m: m["t"] == "dev" and m["d"]["end"] is not None, timeout=30)
                over_at = None if over_at is None else time.monotonic()
            elif msg["t"] == "tour" and msg["d"]["state"] == "over" and over_at is None:
                over_at = time.monotonic()
        out["played"] = played
        out["last"] = next(m for m in reversed(player.got) if m["t"] == "tour")["d"]
    except BaseException as exc:  # the main thread says what went wrong
        out["error"] = exc
    finally:
        player.close()


def test_four_players_over_two_processes_play_a_tournament_to_its_end(two: tuple[ServeProcess, ServeProcess],
                                                                      postgres_url: str) -> None:
    one, other = two
    tag = secrets.token_hex(3)
    people = [Player(one.url, f"anna{tag}"), Player(one.url, f"bruno{tag}"), Player(other.url, f"carla{tag}"),
              Player(other.url, f"dora{tag}")]
    strength = {p.user_id: n for n, p in enumerate(people)}  # the number of wrong moves each makes
    store = Store(postgres_url)
    now_ms = int(time.time() * 1000)
    tournament_id = f"test{tag}"
    make_tournament(store.engine, Tournament(tournament_id, "Four", FORMAT, now_ms, now_ms + int(LENGTH_S * 1000)))
    outs: list[dict[str, Any]] = [{} for _ in people]
    threads = [threading.Thread(target=play_tournament, args=(p, tournament_id, strength[p.user_id], out))
               for p, out in zip(people, outs, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=LENGTH_S + 90)
    going = [p.login for p, thread in zip(people, threads, strict=True) if thread.is_alive()]
    assert not going, f"still playing {LENGTH_S + 90:.0f} s after the start: {going}\n{one.log()}\n{other.log()}"
    for person, out in zip(people, outs, strict=True):
        assert "error" not in out, f"{person.login}: {out.get('error')!r}\n{one.log()}\n{other.log()}"

    # the standings, as both processes show them after the end
    views = [person.http.get(f"/api/tournaments/{tournament_id}").json() for person in (people[0], people[2])]
    assert views[0]["state"] == "over" and views[0]["players"] == views[1]["players"]
    lines = {line["id"]: line for line in views[0]["players"]}
    assert set(lines) == set(strength)
    duels: dict[str, set[str]] = {}
    counts: dict[str, list[str]] = {}
    for user, line in lines.items():
        assert line["playing"] is None and not line["paused"]
        results = [d["result"] for d in line["duels"]]
        assert len(results) >= 2, line
        # nobody made a real attempt: every duel buys nothing, a loss for the side that lost, void for the winner
        names = {p.login.title(): p.user_id for p in people}
        for duel in line["duels"]:
            them = names[duel["opponent"]]
            assert duel["result"] in ("l", "v"), line
            duels.setdefault(duel["match"], set()).update({user, them})
            counts.setdefault(duel["match"], []).append(duel["result"])
        assert [d["points"] for d in line["duels"]] == duel_points(results) == [0] * len(results)
        assert line["points"] == 0
        opponents = [d["opponent"] for d in line["duels"]]
        assert all(a != b for a, b in itertools.pairwise(opponents)), opponents  # never twice in a row
        assert line["rating"] == 1500  # give-ups without a real attempt move no rating (docs/fairplay.md)
    with store.engine.connect() as connection:  # the stronger won every match all the same
        won = connection.exec_driver_sql(
            "SELECT m.player_a, m.player_b, m.winner FROM matches m JOIN tournament_duels d ON d.match_id = m.id "
            "WHERE d.tournament_id = %(t)s", {"t": tournament_id}).all()
    for a, b, winner in won:
        assert winner == (0 if strength[a] < strength[b] else 1)
    assert all(sorted(results) == ["l", "v"] for results in counts.values()), counts  # a winner each: void
    # every duel was one match of two players, each player's duels one after another, never two at once
    assert all(len(pair) == 2 for pair in duels.values())
    for person, out in zip(people, outs, strict=True):
        assert sorted(out["played"]) == sorted(d["match"] for d in lines[person.user_id]["duels"])
    one_side = {people[0].user_id, people[1].user_id}
    assert any(len(pair & one_side) == 1 for pair in duels.values())  # pairs made across the processes
    with store.engine.connect() as connection:
        spans = connection.exec_driver_sql(
            "SELECT m.player_a, m.player_b, m.created_ms, m.ended_ms FROM matches m JOIN tournament_duels d "
            "ON d.match_id = m.id WHERE d.tournament_id = %(t)s", {"t": tournament_id}).all()
    assert len(spans) == len(duels)
    for user in strength:
        mine = sorted((start, end) for a, b, start, end in spans if user in (a, b))
        assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(mine))
    store.close()
