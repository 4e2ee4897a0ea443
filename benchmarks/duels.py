"""Benchmark of live duels: N simulated players in concurrent matches over loopback.

Starts ``patience serve`` on a free loopback port (a separate process, a fresh data folder).
The accounts and their sessions are written to the database beforehand (one argon2 hash
shared by all: hashing a thousand passwords would only measure argon2). Each player opens a
websocket with its session cookie and seeks a Solitaire Reloaded duel; pairs are made by the
lobby. Then each plays at a human pace, an intent every ``--think`` seconds on average (turn the
stock, or try the waste's card on a foundation), sending 2 % of its intents twice, for
``--seconds`` seconds; then both give up and the match ends.

It prints the move round trip (intent sent to its answer), p50/p99/max; the intents lost or
applied twice (must both be 0): every answered intent is checked against the finished match's
record, which the server keeps from its move log; the server's memory (resident set); and the
CPU seconds the server and the players used while playing (both run on this machine).

With ``--processes N`` (N > 1) it starts N processes that share one arena through Redis, on a
PostgreSQL database of their own, and puts the players on them in turn, so that most matches
have a player on a process that does not own it. It then also prints the Redis commands per
intent, and, with ``--failover``, kills the owner of a match with SIGKILL and prints the time from
the kill to the first move the new owner accepted.

    python benchmarks/duels.py                       # 100, 500 and 1000 players, 10 s each
    python benchmarks/duels.py --players 50 --seconds 5
    python benchmarks/duels.py --processes 2 --players 100,500 --failover
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from argon2 import PasswordHasher
from websockets.asyncio.client import connect

from loopback import cpu_seconds, percentile, rss_mb, serving
from patience.server.storage.store import Store, sqlite_url

TARGET_P99_MS = 50.0
FORMAT = "reloaded/standard/300"
COMPRESSION: str | None = "deflate"
POSTGRES = os.environ.get("PATIENCE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("PATIENCE_BENCH_REDIS", "redis://127.0.0.1:6379/11")


@dataclass
class Player:
    number: int
    user_id: str
    token: str
    match_id: str | None = None
    side: int = 0
    applied: int = 0  # intents answered with a version of the player's own game (a move played)
    answers: dict[int, int] = field(default_factory=dict)  # ack -> answers received
    sent: int = 0


@dataclass
class Level:
    players: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    lost: int = 0
    twice: int = 0
    unanswered: int = 0
    matches: int = 0
    rss_mb: float = 0.0
    server_cpu: float = 0.0
    client_cpu: float = 0.0


def make_players(database_url: str, count: int, offset: int) -> list[Player]:
    """Accounts and open sessions, written straight into the app's database."""
    from sqlalchemy.orm import Session

    from patience.server.storage.store import AuthSessionRow, Store, UserRow

    store = Store(database_url)
    store.migrate()
    digest = PasswordHasher().hash("benchmark password")
    now = int(time.time() * 1000)
    players = []
    with Session(store.engine) as db, db.begin():
        for i in range(count):
            number = offset + i
            user_id = f"bench{number:06d}"
            token = secrets.token_urlsafe(32)
            db.add(UserRow(id=user_id, login=user_id, name=f"Player {number}", password_hash=digest, created_ms=now))
            players.append(Player(number, user_id, token))
        db.flush()  # the accounts before their sessions
        for p in players:
            db.add(AuthSessionRow(token_hash=hashlib.sha256(p.token.encode()).hexdigest(), user_id=p.user_id,
                                  created_ms=now, expires_ms=now + 86_400_000))
    store.close()
    return players


async def play(url: str, p: Player, level: Level, stop_at: list[float], think: float, ready: asyncio.Event,
               go: asyncio.Event, done: asyncio.Event) -> None:
    rng = random.Random(p.number)
    headers = {"cookie": f"patience_session={p.token}"}
    try:
        async with connect(url, max_size=2**20, open_timeout=60, additional_headers=headers,
                           compression=COMPRESSION) as ws:
            await ws.send(json.dumps({"t": "seek", "d": {"format": FORMAT, "cid": f"p{p.number}"}}))
            while True:
                message = json.loads(await ws.recv())
                if message["t"] == "duel":
                    p.match_id, p.side = message["d"]["id"], message["d"]["you"]
                    starts_at = time.monotonic() + message["d"].get("starts_in", 0) / 1000
                    break
                if message["t"] == "err":
                    raise RuntimeError(message["d"]["msg"])
            ready.set()
            await go.wait()
            await asyncio.sleep(max(0.0, starts_at - time.monotonic()))  # the countdown after "match found"
            await asyncio.sleep(rng.random() * think)
            ack = 0
            own_over = False
            while time.monotonic() < stop_at[0] and not own_over:
                ack += 1
                roll = rng.random()
                if roll < 0.75:
                    intent = {"t": "stock", "d": {"ack": ack}}
                else:
                    intent = {"t": "move", "d": {"ack": ack, "src": "w", "dst": "f"}}
                copies = 2 if rng.random() < 0.02 else 1  # resent, as after a lost answer
                sent = time.perf_counter()
                for _ in range(copies):
                    await ws.send(json.dumps(intent))
                p.sent += 1
                got = 0
                while got < copies:
                    message = json.loads(await ws.recv())
                    d = message["d"]
                    if d.get("ack") != ack or message["t"] not in ("dev", "rej", "err"):
                        continue
                    if message["t"] == "dev" and d.get("cid") is None:
                        continue  # not an answer: the opponent's version
                    got += 1
                    if got == 1:
                        level.latencies.append((time.perf_counter() - sent) * 1000)
                        p.answers[ack] = 1
                        if message["t"] == "dev" and d["kind"] in ("move", "undo", "illegal"):
                            p.applied += 1
                        if message["t"] == "err":
                            level.errors += 1
                        own_over = bool(d.get("status", {}).get("outcome")) if message["t"] == "dev" else False
                await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
            if not own_over:
                ack += 1
                await ws.send(json.dumps({"t": "giveup", "d": {"ack": ack}}))
            while True:  # until the match ends (the opponent gives up too)
                message = json.loads(await ws.recv())
                if message["t"] == "dev" and message["d"].get("end") is not None:
                    break
            done.set()
    except Exception:  # a refused or dropped connection counts as an error, the run goes on
        level.errors += 1
        ready.set()
        done.set()


async def run_level(bases: list[str], players: list[Player], seconds: float, think: float, level: Level,
                    server_pids: list[int]) -> None:
    urls = [base.replace("http", "ws") + "/ws" for base in bases]
    go = asyncio.Event()
    readies = [asyncio.Event() for _ in players]
    dones = [asyncio.Event() for _ in players]
    stop_at = [time.monotonic() + 3600]
    tasks = []
    for i, p in enumerate(players):
        url = urls[i % len(urls)]  # the players spread over the processes
        tasks.append(asyncio.create_task(play(url, p, level, stop_at, think, readies[i], go, dones[i])))
        if i % 50 == 49:
            await asyncio.sleep(0.05)  # players arrive in waves
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in readies)), timeout=180)
    stop_at[0] = time.monotonic() + seconds
    server_before, client_before = sum(map(cpu_seconds, server_pids)), time.process_time()
    go.set()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=seconds + 120)
    level.server_cpu = sum(map(cpu_seconds, server_pids)) - server_before  # while playing (to the matches' end)
    level.client_cpu = time.process_time() - client_before
    await check_records(bases[0], players, level)


async def check_records(base: str, players: list[Player], level: Level) -> None:
    """Every intent answered as played is in the match record exactly once: none lost, none twice."""
    by_match: dict[str, list[Player]] = {}
    for p in players:
        if p.match_id:
            by_match.setdefault(p.match_id, []).append(p)
    level.matches = len(by_match)
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        for match_id, pair in by_match.items():
            for _ in range(50):
                shown = (await client.get(f"/api/matches/{match_id}")).json()
                if shown.get("state") == "over":
                    break
                await asyncio.sleep(0.1)
            else:
                level.lost += sum(p.applied for p in pair)
                continue
            games = shown["record"]["games"]
            for p in pair:
                logged = sum(1 for a in games[p.side]["actions"] if a["m"] != "giveup")
                level.lost += max(0, p.applied - logged)
                level.twice += max(0, logged - p.applied)
                level.unanswered += p.sent - len(p.answers)


def redis_commands(url: str) -> int:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return int(client.info("stats")["total_commands_processed"])
    finally:
        client.close()


@contextlib.contextmanager
def arena(processes: int, data_dir: str) -> Iterator[tuple[list[str], list[subprocess.Popen[bytes]], str, str]]:
    """One process on SQLite, or ``processes`` on a PostgreSQL schema of their own and Redis:
    (base URLs, processes, database URL, Redis URL or "")."""
    if processes == 1:
        url = sqlite_url(Path(data_dir) / "patience.sqlite3")
        with serving(data_dir) as (base, server):
            yield [base], [server], url, ""
        return
    import psycopg
    import redis

    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = f"postgresql+psycopg://{POSTGRES.split('://', 1)[1]}?options=-csearch_path%3D{schema}"
    client = redis.Redis.from_url(REDIS)
    client.flushdb()
    client.close()
    Store(url).migrate()
    try:
        with contextlib.ExitStack() as stack:
            served = [stack.enter_context(serving(data_dir, extra=["--database-url", url, "--redis-url", REDIS]))
                      for _ in range(processes)]
            yield [base for base, _ in served], [proc for _, proc in served], url, REDIS
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


async def failover(bases: list[str], procs: list[subprocess.Popen[bytes]], players: list[Player]) -> float:
    """Seconds from the kill -9 of a match's owner to the first move the new owner accepts."""
    import redis

    a, b = players[0], players[1]
    socks = []
    for p, base in ((a, bases[0]), (b, bases[1])):
        ws = await connect(base.replace("http", "ws") + "/ws",
                           additional_headers={"cookie": f"patience_session={p.token}"})
        socks.append(ws)
        await ws.send(json.dumps({"t": "seek", "d": {"format": FORMAT, "cid": f"f{p.number}"}}))
    match_id = None
    while match_id is None:
        message = json.loads(await socks[1].recv())
        if message["t"] == "duel":
            match_id = message["d"]["id"]
            await asyncio.sleep(message["d"].get("starts_in", 0) / 1000)  # the countdown: moves count after it
    await socks[1].send(json.dumps({"t": "stock", "d": {"ack": 1}}))  # a first move: the log has the start
    while not ((message := json.loads(await socks[1].recv()))["t"] == "dev" and message["d"].get("ack") == 1):
        pass
    client = redis.Redis.from_url(REDIS)
    lease = client.get(f"patience:match:{match_id}")
    client.close()
    owner = next(i for i, proc in enumerate(procs) if lease and f"-{proc.pid}-" in lease.decode())
    survivor = socks[1 - owner]
    killed = time.monotonic()
    procs[owner].kill()
    ack = 1
    while True:  # the page that survives sends its move until the new owner plays it
        ack += 1
        await survivor.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
        try:
            while True:
                message = json.loads(await asyncio.wait_for(survivor.recv(), 0.25))
                if message["t"] == "dev" and message["d"].get("ack") == ack and message["d"].get("cid"):
                    return time.monotonic() - killed
        except TimeoutError:
            if time.monotonic() - killed > 60:
                return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="100,500,1000", help="player counts, comma-separated (even, ≤ 2000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring time per player count (≤ 120)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a player's intents")
    parser.add_argument("--processes", type=int, default=1, help="server processes (more than 1: PostgreSQL + Redis)")
    parser.add_argument("--failover", action="store_true", help="with --processes ≥ 2: measure a kill -9 fail-over")
    args = parser.parse_args()
    counts = [min(2000, max(2, int(n) // 2 * 2)) for n in args.players.split(",")]
    seconds = min(120.0, max(1.0, args.seconds))
    processes = min(8, max(1, args.processes))
    with tempfile.TemporaryDirectory() as data_dir, arena(processes, data_dir) as (bases, servers, url, redis_url):
        everyone = make_players(url, sum(counts) + 2, 0)
        print("server logs:", data_dir)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        where = "SQLite move log" if processes == 1 else f"{processes} processes, PostgreSQL move log, Redis bus"
        print(f"patience serve on {', '.join(bases)} ({os.cpu_count()} CPUs, load {load}); Solitaire Reloaded "
              f"duels, an intent every ~{args.think:g} s per player (2 % sent twice), {seconds:g} s per level; "
              f"{where}")
        print(f"{'players':>8} {'matches':>8} {'intents':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
              f"{'lost':>5} {'twice':>6} {'errors':>7} {'RSS MB':>8} {'CPU s':>6} {'client':>7} {'redis/int':>9}")
        used = 0
        worst = 0.0
        for count in counts:
            players = everyone[used:used + count]
            used += count
            level = Level(count)
            before = redis_commands(redis_url) if redis_url else 0
            gc.disable()  # the players' own collections would add pauses the server did not cause
            asyncio.run(run_level(bases, players, seconds, args.think, level, [s.pid for s in servers]))
            gc.enable()
            gc.collect()
            per_intent = (redis_commands(redis_url) - before) / max(1, len(level.latencies)) if redis_url else 0.0
            level.rss_mb = sum(rss_mb(s.pid) for s in servers)
            lat = level.latencies
            p50 = statistics.median(lat) if lat else float("nan")
            p99 = percentile(lat, 99) if lat else float("nan")
            if count == max(counts):
                worst = p99
            print(f"{count:>8} {level.matches:>8} {len(lat):>8} {p50:>8.2f} {p99:>8.2f} "
                  f"{max(lat, default=float('nan')):>8.2f} {level.lost + level.unanswered:>5} {level.twice:>6} "
                  f"{level.errors:>7} {level.rss_mb:>8.1f} {level.server_cpu:>6.1f} {level.client_cpu:>7.1f} "
                  f"{per_intent:>9.1f}")
        print(f"\ntarget: p99 < {TARGET_P99_MS:g} ms at {max(counts)} players: "
              f"{'met' if worst < TARGET_P99_MS else 'NOT met'} ({worst:.1f} ms)")
        if args.failover and processes > 1:
            seconds_to_move = asyncio.run(failover(bases, servers, everyone[used:used + 2]))
            print(f"fail-over: kill -9 of a match's owner to the first move accepted by the new owner: "
                  f"{seconds_to_move:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
