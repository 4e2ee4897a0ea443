"""Benchmark of the duel arena, measured from outside: players held, what an intent costs, pairing.

Everything is measured as a user and an operator see it: the players are websocket clients that
speak the protocol of a page (``seek``, then ``duel``, ``dev``, ``rej``, ``err``: docs/protocol.md),
the costs are read from ``/proc`` and from Redis and PostgreSQL's own counters. Nothing here reads
or depends on the server's internals.

For each number of server processes in ``--processes`` (e.g. ``1,2,4,8``) it makes a fresh arena:

- 1 process: ``patience serve`` on an SQLite file (with ``--postgres``: on a PostgreSQL database of
  its own, still without Redis);
- N > 1 processes: N ``patience serve`` on a fresh PostgreSQL database (``CREATE DATABASE``,
  dropped at the end) and a private ``redis-server`` on a free port (or the emptied ``--redis-url``;
  a shared Redis also counts the commands of whatever else uses it). Players are spread over the
  processes in turn, so most matches have a player on a process that does not own them.

The accounts and their sessions are written into the database *before* any server starts (one
argon2 hash shared by all), so nothing else touches an SQLite file a server holds. Each simulated
player connects from a loopback address of its own (Linux routes all of 127.0.0.0/8 to loopback;
player n binds 127.1.1.1 + n, skipping .0 and .255), so the server's per-address budgets (50 messages a second, 1,024
connections, per address) meet each player as one person on the internet: the servers are started
without ``--forwarded-allow-ips`` (no forwarding header is trusted), so the address a server
charges is the TCP peer's. The "peers" column shows the established connections to the servers and
the distinct peer addresses among them, read from ``/proc/net/tcp`` at the window's start.

The players run in ``--clients`` load-generator processes (each its own asyncio loop; default: one
per core, at most 4), their results merged. They share this machine's cores with the servers,
PostgreSQL and Redis, and so does whatever else runs on it: before each level and burst the
benchmark waits up to ``--wait-quiet`` seconds (30) for the rest of the machine to keep fewer than
0.3 cores busy, and the ``other`` column says how many cores the rest kept busy during the
measurement (``/proc/stat`` less the benchmark's own processes): figures taken with ``other`` well
above 0 are not the arena's alone.

**Levels** (``--players``, e.g. ``100,200,400``): every player seeks a Solitaire Reloaded duel
(``reloaded/standard/300``); once all are paired, the **window** of ``--seconds`` starts after the
last match's countdown (``duel.starts_in``) plus one think time, so every player plays by then. Each
player sends an intent (turn the stock, or the waste's card to a foundation) every ``--think``
seconds on average, 2 % of them twice (as after a lost answer), from the end of its own countdown
until the window's end; then both give up and the match ends. Only intents sent inside the window
count. Per level:

- ``p50/p99/max``: intent sent to its answer (``dev``/``rej``/``err`` with its ack), ms;
  ``ok`` when p99 < 50 ms and nothing below went wrong;
- ``lost``/``twice``: intents answered as played but missing from, or twice in, the finished
  match's record (``/api/matches/ID``); ``unans``: intents never answered (30 s): all must be 0 (a
  match not over 10 s after both gave up cannot be checked: it is listed under the table);
- ``budget``: ``err`` messages of the per-socket/per-address budgets (``too_many``,
  ``too_many_games``); ``errors``: every other ``err``, failed connection and unpaired player (the
  codes are listed under the table);
- ``srv``: CPU (user + system) of all the server processes and their children over the window,
  core-seconds per 1,000 intents; ``idle``: the cores the servers keep busy with nobody connected
  (read over 3 s before the level: their loops, leases and sweeps, a fixed cost per process);
  ``net``: ``srv`` less that fixed cost over the window, per 1,000 intents — what the intents
  themselves cost, the figure to compare across process counts on a machine with fewer cores than
  processes; ``redis``/``pg``/``client``: the same for redis-server (its
  ``INFO cpu``), the PostgreSQL backends of the benchmark's database and the load generators;
- ``cmd/int``: Redis commands per intent (``INFO stats`` total_commands_processed over the window;
  the commands that weigh most are listed under the table); ``xact/int``: PostgreSQL transactions
  per intent (``pg_stat_database`` xact_commit + xact_rollback of the database over the window;
  backends report them about once a second, so short windows read them less exactly);
- ``RSS``: resident memory of the servers together at the window's end, MB; ``other``: see above.

With ``--find-capacity`` the levels are a ladder (default 100,200,400,600,800,1000,1400,2000) and
each process count stops at its first level that is not ``ok``; the capacity table gives the
largest level held at p99 < 50 ms.

**Bursts** (``--burst``, e.g. ``1000,2000``): that many players, connected first, all send their
seek within ``--burst-spread`` seconds (1 s). Reported: the seconds from the first seek until every
player has its ``duel`` message, players paired per second (paired / that time), the seek-to-duel
p50/p99, players turned away (an ``err`` to their seek), paired twice (two matches, or a match not
shared by exactly two players on both sides) or not at all (within half of ``--pair-timeout``),
and over the burst (the first seek to the last ``duel``): the servers' and the load generators'
CPU in core-seconds, the lobby updates each seeker received, Redis commands and PostgreSQL
transactions per seek. Then every match is given up (sent again after a ``server_error``, or when
the server sends the match whole again after rebuilding it); the ``err`` messages of that phase are
listed apart from the seeks'.

``--failover`` (N > 1): a match's owner (the process named by its lease in Redis) is killed with
SIGKILL, and the time to the first move the new owner accepts is printed.

Each run is bounded: at most ``--pair-timeout`` (180 s) to pair a level, the window (≤ 120 s),
120 s to end it; half the pair time-out for a burst's pairing. Ctrl+C or SIGTERM stops the
servers, drops the database and prints the figures so far. ``--logs DIR`` keeps the servers' logs
(warnings and errors only); the lines they said most are printed on stderr in any case.

    python benchmarks/duels.py                                   # 1 process: 100, 200, 400 players, a burst of 1000
    python benchmarks/duels.py --processes 1,2,4,8 --players 100,200,400 --burst 1000,2000
    python benchmarks/duels.py --processes 2 --find-capacity --burst 0
    python benchmarks/duels.py --processes 2 --players 100 --burst 0 --failover
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import hashlib
import json
import math
import multiprocessing
import os
import random
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect

from loopback import cpu_seconds, free_port, percentile, rss_mb, serving_many

TARGET_P99_MS = 50.0
FORMAT = "reloaded/standard/300"
COMPRESSION: str | None = "deflate"
SESSION_COOKIE = "patience_session"
POSTGRES = os.environ.get("PATIENCE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
BUDGET_CODES = frozenset({"too_many", "too_many_games"})  # the err codes of the budgets (transport/budget.py)
LADDER = "100,200,400,600,800,1000,1400,2000"
PAIR_SECONDS = 180.0  # a level's players all paired within this, or the level goes on without the others
BURST_WAIT = 90.0  # a burst's player not paired within this is "not paired"
IDLE_SECONDS = 3.0  # before each level: the servers' CPU with nobody connected is read over this long
END_SECONDS = 120.0  # after the window: the matches ended and the results in


def address_of(number: int) -> str:
    """The loopback address player ``number`` connects from: one of its own, 127.1.1.1 and up."""
    return f"127.{1 + number // 64516}.{1 + (number // 254) % 254}.{1 + number % 254}"


# --- the accounts, before any server starts ------------------------------------------------------


def make_players(database_url: str, count: int) -> list[tuple[int, str]]:
    """``count`` accounts with an open session each, written straight into the database (before
    any server holds it): [(number, session token)]."""
    from argon2 import PasswordHasher
    from sqlalchemy.orm import Session

    from patience.server.storage.store import AuthSessionRow, Store, UserRow

    store = Store(database_url)
    store.migrate()
    digest = PasswordHasher().hash("benchmark password")
    now = int(time.time() * 1000)
    players = [(number, secrets.token_urlsafe(32)) for number in range(count)]
    with Session(store.engine) as db, db.begin():
        db.add_all([UserRow(id=f"bench{n:06d}", login=f"bench{n:06d}", name=f"Player {n}", password_hash=digest,
                            created_ms=now) for n, _ in players])
        db.flush()  # the accounts before their sessions
        db.add_all([AuthSessionRow(token_hash=hashlib.sha256(token.encode()).hexdigest(), user_id=f"bench{n:06d}",
                                   created_ms=now, expires_ms=now + 86_400_000) for n, token in players])
    store.close()
    return players


# --- the load generator: one process each, its own asyncio loop ----------------------------------


class Refused(Exception):
    """The server answered a seek with ``err``."""


@dataclass
class Tally:
    """What one load generator saw in one job."""

    latencies: list[float] = field(default_factory=list)  # ms, intents sent inside the window
    intents: int = 0  # intents sent inside the window
    errors: collections.Counter[str] = field(default_factory=collections.Counter)  # err codes received
    failures: collections.Counter[str] = field(default_factory=collections.Counter)  # connections that failed
    starts: list[float] = field(default_factory=list)  # when each match's clocks start (time.monotonic)
    lobbies: int = 0  # lobby updates received
    late: collections.Counter[str] = field(default_factory=collections.Counter)  # burst: err codes once paired
    records: list[tuple[int, str | None, int, int, int, int]] = field(default_factory=list)
    # level: (number, match id, side, applied, sent, answered); burst: see burst_player


async def receive(ws: ClientConnection, tally: Tally) -> dict[str, Any]:
    """The next message that is not a lobby update; every ``err`` is counted by its code."""
    while True:
        raw = await ws.recv()
        if isinstance(raw, str) and raw.startswith('{"t":"lobby"'):
            tally.lobbies += 1
            continue  # lobby updates come to every seeking page each time a pool changes: not ours to parse
        message: dict[str, Any] = json.loads(raw)
        if message["t"] == "lobby":
            tally.lobbies += 1
            continue
        if message["t"] == "err":
            tally.errors[str(message["d"].get("code"))] += 1
        return message


def open_socket(url: str, number: int, token: str) -> Any:
    return connect(url, max_size=2**20, open_timeout=60, compression=COMPRESSION,
                   additional_headers={"cookie": f"{SESSION_COOKIE}={token}"}, local_addr=(address_of(number), 0))


async def give_up(ws: ClientConnection, tally: Tally, match_id: str, ack: int, at: float,
                  seen: list[tuple[str, int]] | None = None, seconds: float = 60.0) -> None:
    """Give match ``match_id`` up at ``at`` (``math.inf``: never; the player's own game is over), then
    wait for the match's end (``dev`` with ``end``). A match the server sends whole again (``duel``:
    rebuilt after a ``server_error`` or taken over) counts down again: the giveup is sent once that is
    over, and again a second after it is refused (``not_started``, ``server_error``). The other
    matches' ``duel`` messages are added to ``seen`` as (id, side)."""
    deadline = time.monotonic() + seconds
    while True:
        now = time.monotonic()
        if now > deadline:
            raise TimeoutError("the match did not end")
        if now >= at:
            ack += 1
            await ws.send(json.dumps({"t": "giveup", "d": {"ack": ack}}))
            at = math.inf
        try:
            message = await asyncio.wait_for(receive(ws, tally), min(0.25, max(0.01, at - now)))
        except TimeoutError:
            continue
        kind, d = message["t"], message["d"]
        if kind == "dev" and d.get("end") is not None:
            return
        if kind == "duel" and d["id"] != match_id:
            if seen is not None:
                seen.append((d["id"], d["you"]))
        elif kind == "duel":
            at = time.monotonic() + d.get("starts_in", 0) / 1000
        elif kind == "err" and d.get("ack") == ack and d.get("code") != "game_over":
            at = time.monotonic() + 1.0


async def play(url: str, number: int, token: str, think: float, window: list[float], tally: Tally,
               ready: asyncio.Event, pair_seconds: float = PAIR_SECONDS) -> None:
    """A player of a level: seek, play from the end of the countdown to the window's end, give up."""
    rng = random.Random(number)
    match_id, side, applied, sent, answered = None, 0, 0, 0, 0
    try:
        async with open_socket(url, number, token) as ws:
            await ws.send(json.dumps({"t": "seek", "d": {"format": FORMAT, "cid": f"p{number}"}}))
            try:
                async with asyncio.timeout(pair_seconds):
                    while True:
                        message = await receive(ws, tally)
                        if message["t"] == "duel":
                            match_id, side = message["d"]["id"], message["d"]["you"]
                            starts_at = time.monotonic() + message["d"].get("starts_in", 0) / 1000
                            break
                        if message["t"] == "err":
                            raise Refused(message["d"].get("code"))
            except TimeoutError:
                return  # never paired: counted as such
            tally.starts.append(starts_at)
            ready.set()
            await asyncio.sleep(max(0.0, starts_at - time.monotonic()) + rng.random() * think)
            ack = 0
            over = False
            while time.monotonic() < window[1] and not over:
                ack += 1
                if rng.random() < 0.75:
                    intent = json.dumps({"t": "stock", "d": {"ack": ack}})
                else:
                    intent = json.dumps({"t": "move", "d": {"ack": ack, "src": "w", "dst": "f"}})
                copies = 2 if rng.random() < 0.02 else 1  # resent, as after a lost answer
                at, clock = time.monotonic(), time.perf_counter()
                inside = window[0] <= at < window[1]
                for _ in range(copies):
                    await ws.send(intent)
                sent += 1
                tally.intents += inside
                got = 0
                async with asyncio.timeout(30):
                    while got < copies:
                        message = await receive(ws, tally)
                        d = message["d"]
                        if message["t"] not in ("dev", "rej", "err") or d.get("ack") != ack:
                            continue
                        if message["t"] == "dev" and d.get("cid") is None:
                            continue  # not an answer: the opponent's version
                        got += 1
                        if got == 1:
                            answered += 1
                            if inside:
                                tally.latencies.append((time.perf_counter() - clock) * 1000)
                            if message["t"] == "dev":
                                applied += d["kind"] in ("move", "undo", "illegal")
                                over = bool((d.get("status") or {}).get("outcome"))
                await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
            await give_up(ws, tally, match_id, ack, math.inf if over else 0.0)
    except Refused:
        pass
    except Exception as exc:  # a refused or dropped connection, a time-out: counted, the run goes on
        tally.failures[type(exc).__name__] += 1
    finally:
        ready.set()
        tally.records.append((number, match_id, side, applied, sent, answered))


async def level_job(conn: Connection, players: list[tuple[int, str, str]], think: float,
                    pair_seconds: float = PAIR_SECONDS) -> Tally:
    """This generator's share of a level: [(number, token, url)]."""
    loop = asyncio.get_running_loop()
    tally = Tally()
    window = [math.inf, math.inf]
    readies = [asyncio.Event() for _ in players]
    tasks = []
    for i, ((number, token, url), ready) in enumerate(zip(players, readies, strict=True)):
        tasks.append(asyncio.create_task(play(url, number, token, think, window, tally, ready, pair_seconds)))
        if i % 25 == 24:
            await asyncio.sleep(0.05)  # players arrive in waves
    await asyncio.wait([asyncio.create_task(e.wait()) for e in readies], timeout=pair_seconds + 10)
    conn.send(("ready", max(tally.starts, default=time.monotonic())))
    window[:] = await loop.run_in_executor(None, conn.recv)
    _, pending = await asyncio.wait(tasks, timeout=max(1.0, window[1] - time.monotonic()) + END_SECONDS)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    tally.failures["did not end"] += len(pending)
    return tally


async def burst_player(url: str, number: int, token: str, ws: ClientConnection, offset: float, t0: list[float],
                       tally: Tally, paired: asyncio.Event, finish: asyncio.Event, wait: float = BURST_WAIT) -> None:
    """Seek at ``t0 + offset``; after ``finish``, give the match up (the burst is measured by then)."""
    matches: list[tuple[str, int]] = []
    sent_at, duel_at, turned = math.nan, math.nan, 0
    starts_at = 0.0
    try:
        await asyncio.sleep(max(0.0, t0[0] + offset - time.monotonic()))
        sent_at = time.monotonic()
        await ws.send(json.dumps({"t": "seek", "d": {"format": FORMAT, "cid": f"b{number}"}}))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                while not matches:
                    message = await receive(ws, tally)
                    if message["t"] == "duel":
                        duel_at = time.monotonic()
                        matches.append((message["d"]["id"], message["d"]["you"]))
                        starts_at = duel_at + message["d"].get("starts_in", 0) / 1000
                    elif message["t"] == "err":
                        turned += 1
        paired.set()
        if not matches:
            await ws.send(json.dumps({"t": "unseek", "d": {}}))
            return
        late = Tally()  # what comes once paired: not an answer to the seek
        while not finish.is_set() or time.monotonic() < starts_at:  # a second pairing would come meanwhile
            with contextlib.suppress(TimeoutError):
                message = await asyncio.wait_for(receive(ws, late), 0.2)
                if message["t"] == "duel" and message["d"]["id"] != matches[0][0]:
                    matches.append((message["d"]["id"], message["d"]["you"]))
                elif message["t"] == "duel":  # sent whole again (rebuilt): its countdown starts again
                    starts_at = time.monotonic() + message["d"].get("starts_in", 0) / 1000
        try:
            await give_up(ws, late, matches[0][0], 0, 0.0, matches)
        finally:
            tally.late += late.errors
            tally.lobbies += late.lobbies
    except Exception as exc:
        tally.failures[type(exc).__name__] += 1
    finally:
        paired.set()
        tally.records.append((number, sent_at, duel_at, turned, matches))  # type: ignore[arg-type]


async def burst_job(conn: Connection, players: list[tuple[int, str, str, float]], wait: float = BURST_WAIT) -> Tally:
    """This generator's share of a burst: [(number, token, url, when to seek after the start)]."""
    loop = asyncio.get_running_loop()
    tally = Tally()
    async with contextlib.AsyncExitStack() as stack:

        async def opened(number: int, token: str, url: str) -> ClientConnection | None:
            try:
                return await stack.enter_async_context(open_socket(url, number, token))
            except Exception as exc:
                tally.failures[type(exc).__name__] += 1
                return None

        sockets = []
        for i in range(0, len(players), 50):  # connected in waves before the burst
            sockets += await asyncio.gather(*(opened(n, tok, url) for n, tok, url, _ in players[i:i + 50]))
        conn.send(("connected", sum(ws is not None for ws in sockets)))
        t0 = [await loop.run_in_executor(None, conn.recv)]
        pairs = [asyncio.Event() for _ in players]
        finish = asyncio.Event()
        tasks = [asyncio.create_task(burst_player(url, n, tok, ws, offset, t0, tally, e, finish, wait))
                 for (n, tok, url, offset), ws, e in zip(players, sockets, pairs, strict=True) if ws is not None]
        await asyncio.gather(*(e.wait() for e, ws in zip(pairs, sockets, strict=True) if ws is not None))
        conn.send(("paired", time.monotonic()))
        await loop.run_in_executor(None, conn.recv)
        finish.set()
        _, pending = await asyncio.wait(tasks, timeout=END_SECONDS) if tasks else (set(), set())
        for task in pending:
            task.cancel()
        tally.failures["did not end"] += len(pending)
    return tally


def client_process(conn: Connection) -> None:
    """A load generator: runs the jobs it is sent, each in an asyncio loop of its own, until None."""
    while (job := conn.recv()) is not None:
        kind, arguments = job
        gc.disable()  # its own collections would add pauses the server did not cause
        try:
            tally = asyncio.run(level_job(conn, *arguments) if kind == "level" else burst_job(conn, *arguments))
        except Exception as exc:
            tally = Tally(failures=collections.Counter({f"generator: {exc!r}": 1}))
        gc.enable()
        gc.collect()
        conn.send(("result", dict(vars(tally))))  # builtins only: the class is the child's __mp_main__'s


class Generators:
    """``count`` load-generator processes."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.procs = []
        for _ in range(count):
            mine, theirs = context.Pipe()
            proc = context.Process(target=client_process, args=(theirs,), daemon=True)
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.pid is not None]

    def send(self, message: Any) -> None:
        for pipe in self.pipes:
            pipe.send(message)

    def gather(self, kind: str, timeout: float) -> list[Any]:
        """The next message of each generator, which must be of ``kind``."""
        got = []
        deadline = time.monotonic() + timeout
        for pipe in self.pipes:
            if not pipe.poll(max(0.0, deadline - time.monotonic())):
                raise SystemExit(f"a load generator did not answer '{kind}' in {timeout:g} s")
            message = pipe.recv()
            if message[0] != kind:
                raise SystemExit(f"a load generator said {message!r}, not {kind!r}")
            got.append(message[1])
        return got

    def close(self) -> None:
        for pipe, proc in zip(self.pipes, self.procs, strict=True):
            with contextlib.suppress(OSError):
                pipe.send(None)
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()


# --- the arena and what is read from outside ------------------------------------------------------


@dataclass
class Arena:
    processes: int
    bases: list[str]
    procs: list[subprocess.Popen[bytes]]
    database_url: str
    database: str | None  # the PostgreSQL database's name
    redis_url: str | None
    redis_pid: int | None  # a private redis-server's


@contextlib.contextmanager
def postgres_database() -> Iterator[tuple[str, str]]:
    """A fresh PostgreSQL database, dropped at the end: (its name, its SQLAlchemy URL)."""
    import psycopg

    name = f"bench_duels_{secrets.token_hex(4)}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    parts = urlsplit(POSTGRES)
    url = urlunsplit(("postgresql+psycopg", parts.netloc, f"/{name}", parts.query, ""))
    try:
        yield name, url
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def private_redis(data_dir: str) -> Iterator[tuple[str, int]]:
    """A redis-server of this run's own on a free port (nothing else's commands counted): (URL, pid)."""
    import redis

    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", data_dir, "--logfile", f"redis-{port}.log"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("redis-server did not start") from None
                time.sleep(0.05)
        yield url, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def arena(processes: int, postgres: bool, redis_url: str | None, accounts: int, logs: str | None = None
          ) -> Iterator[tuple[Arena, list[tuple[int, str]]]]:
    """A fresh arena of ``processes`` servers with ``accounts`` players made before they start (the
    servers' logs copied to folder ``logs`` at the end, if given)."""
    import redis

    with tempfile.TemporaryDirectory(prefix="duels-") as data_dir:
        try:
            with contextlib.ExitStack() as stack:
                database, extra, redis_pid = None, [], None
                if processes == 1 and not postgres:
                    from patience.server.storage.store import sqlite_url

                    url = sqlite_url(Path(data_dir) / "patience.sqlite3")  # the data folder's file (app.DB_FILE)
                else:
                    database, url = stack.enter_context(postgres_database())
                    extra += ["--database-url", url]
                if processes > 1:
                    if redis_url is None:
                        redis_url, redis_pid = stack.enter_context(private_redis(data_dir))
                    client = redis.Redis.from_url(redis_url)
                    client.flushdb()
                    client.close()
                    extra += ["--redis-url", redis_url]
                else:
                    redis_url = None
                players = make_players(url, accounts)  # before any server: nothing holds the database yet
                served = stack.enter_context(serving_many(data_dir, processes, extra))
                yield (Arena(processes, [b for b, _ in served], [p for _, p in served], url, database, redis_url,
                             redis_pid), players)
        finally:
            if logs:
                Path(logs).mkdir(parents=True, exist_ok=True)
                for log in Path(data_dir).glob("*.log"):
                    shutil.copy(log, Path(logs) / f"{processes}p-{log.name}")
            said = collections.Counter(line.strip()[:160] for log in Path(data_dir).glob("serve-*.log")
                                       for line in log.read_text(errors="replace").splitlines()
                                       if line.strip() and not line.startswith(("Patience Arena:", "Stop with")))
            if said:
                print(f"  server logs ({processes} processes): {sum(said.values())} lines; most said:",
                      file=sys.stderr)
                for line, n in said.most_common(5):
                    print(f"    {n} × {line}", file=sys.stderr)


def tree_cpu(pids: Sequence[int]) -> float:
    """CPU seconds (user + system) of processes ``pids`` and all their descendants."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                children[int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])].append(int(entry.name))
    total, todo = 0.0, list(pids)
    while todo:
        pid = todo.pop()
        seconds = cpu_seconds(pid)
        total += 0.0 if math.isnan(seconds) else seconds
        todo += children.get(pid, [])
    return total


def server_peers(ports: set[int]) -> tuple[int, int, int]:
    """Connections established to ``ports`` (the servers' side, /proc/net/tcp): (connections, distinct
    peer addresses, connections from 127.0.0.1)."""
    connections, addresses, local = 0, set(), 0
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "01" or int(fields[1].split(":")[1], 16) not in ports:
                continue
            peer = socket.inet_ntoa(bytes.fromhex(fields[2].split(":")[0])[::-1])
            connections += 1
            addresses.add(peer)
            local += peer == "127.0.0.1"
    return connections, len(addresses), local


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores; /proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(x) for x in fields]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


@dataclass
class Reading:
    at: float
    server_cpu: float
    client_cpu: float
    machine: float = field(default_factory=machine_busy)
    redis_commands: int = 0
    redis_stats: dict[str, int] = field(default_factory=dict)
    redis_cpu: float = 0.0
    pg_xacts: int = 0
    pg_cpu: dict[int, float] = field(default_factory=dict)


class Probe:
    """Reads an arena's costs from outside: /proc, Redis INFO, pg_stat_database."""

    def __init__(self, arena: Arena, generators: Generators) -> None:
        self.arena, self.generators = arena, generators
        self.redis = self.pg = None
        if arena.redis_url:
            import redis

            self.redis = redis.Redis.from_url(arena.redis_url)
        if arena.database:
            import psycopg

            self.pg = psycopg.connect(POSTGRES, autocommit=True)

    def read(self) -> Reading:
        reading = Reading(time.monotonic(), tree_cpu([p.pid for p in self.arena.procs]),
                          tree_cpu(self.generators.pids))
        if self.redis is not None:
            reading.redis_commands = int(self.redis.info("stats")["total_commands_processed"])
            reading.redis_stats = {name.removeprefix("cmdstat_"): int(v["calls"])
                                   for name, v in self.redis.info("commandstats").items()}
            cpu = self.redis.info("cpu")
            reading.redis_cpu = float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
        if self.pg is not None:
            row = self.pg.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                                  (self.arena.database,)).fetchone()
            reading.pg_xacts = int(row[0]) if row else 0
            pids = [r[0] for r in self.pg.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s",
                                                  (self.arena.database,))]
            reading.pg_cpu = {pid: cpu_seconds(pid) for pid in pids}
        return reading

    def close(self) -> None:
        if self.redis is not None:
            self.redis.close()
        if self.pg is not None:
            self.pg.close()


@dataclass
class Costs:
    """What the arena spent between two readings."""

    seconds: float
    server_cpu: float
    client_cpu: float
    redis_commands: int | None
    redis_cpu: float | None
    pg_xacts: int | None
    pg_cpu: float | None
    by_command: dict[str, int]
    other: float  # cores busy on average with processes that are not the benchmark's (other work on the machine)

    @classmethod
    def between(cls, a: Reading, b: Reading, arena: Arena) -> Costs:
        by_command = {name: calls - a.redis_stats.get(name, 0) for name, calls in b.redis_stats.items()}
        by_command["info"] = by_command.get("info", 0) - 3  # this probe's own
        pg_cpu = sum(seconds - a.pg_cpu.get(pid, 0.0) for pid, seconds in b.pg_cpu.items() if not math.isnan(seconds))
        ours = (b.server_cpu - a.server_cpu + b.client_cpu - a.client_cpu + pg_cpu
                + (b.redis_cpu - a.redis_cpu if arena.redis_pid else 0.0))
        return cls(b.at - a.at, b.server_cpu - a.server_cpu, b.client_cpu - a.client_cpu,
                   b.redis_commands - a.redis_commands - 3 if arena.redis_url else None,
                   b.redis_cpu - a.redis_cpu if arena.redis_url else None,
                   b.pg_xacts - a.pg_xacts if arena.database else None,
                   pg_cpu if arena.database else None,
                   {k: v for k, v in by_command.items() if v > 0},
                   max(0.0, (b.machine - a.machine - ours) / max(1e-9, b.at - a.at)))


# --- a level, a burst, a fail-over ---------------------------------------------------------------


@dataclass
class Level:
    processes: int
    players: int
    latencies: list[float] = field(default_factory=list)
    intents: int = 0
    matches: int = 0
    lost: int = 0
    twice: int = 0
    unanswered: int = 0
    unpaired: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: collections.Counter[str] = field(default_factory=collections.Counter)
    peers: tuple[int, int, int] = (0, 0, 0)
    costs: Costs | None = None
    rss_mb: float = 0.0
    idle_cores: float = 0.0  # the servers' CPU with no player connected, cores (before the level)

    @property
    def net_cpu(self) -> float:
        """The servers' core-seconds in the window above what they spend with nobody connected."""
        assert self.costs is not None
        return max(0.0, self.costs.server_cpu - self.idle_cores * self.costs.seconds)

    @property
    def budget(self) -> int:
        return sum(n for code, n in self.errors.items() if code in BUDGET_CODES)

    @property
    def other_errors(self) -> int:
        return (sum(n for code, n in self.errors.items() if code not in BUDGET_CODES) + sum(self.failures.values())
                + self.unpaired)

    @property
    def p99(self) -> float:
        return percentile(self.latencies, 99)

    @property
    def ok(self) -> bool:
        return (self.p99 < TARGET_P99_MS and not self.budget and not self.other_errors and not self.lost
                and not self.twice and not self.unanswered)


def wait_quiet(arena: Arena, generators: Generators, most: float, limit: float = 0.3) -> None:
    """Wait up to ``most`` seconds until the rest of the machine (processes not the benchmark's: other
    work on this machine) keeps fewer than ``limit`` cores busy over a second; it shares the cores."""
    deadline = time.monotonic() + most
    probe = Probe(arena, generators)
    try:
        while True:
            before = probe.read()
            time.sleep(1.0)
            other = Costs.between(before, probe.read(), arena).other
            if other < limit or time.monotonic() > deadline:
                return
            print(f"  waiting: {other:.2f} cores busy with other work", file=sys.stderr)
    finally:
        probe.close()


def shares(items: list[Any], parts: int) -> list[list[Any]]:
    """``items`` dealt in turn into ``parts`` lists."""
    return [items[i::parts] for i in range(parts)]


def run_level(arena: Arena, generators: Generators, players: list[tuple[int, str]], seconds: float,
              think: float, pair_seconds: float = PAIR_SECONDS) -> Level:
    level = Level(arena.processes, len(players))
    pids = [p.pid for p in arena.procs]
    idle_from, cpu_from = time.monotonic(), tree_cpu(pids)  # the servers' own cost with nobody there
    time.sleep(IDLE_SECONDS)
    level.idle_cores = (tree_cpu(pids) - cpu_from) / (time.monotonic() - idle_from)
    urls = [base.replace("http", "ws") + "/ws" for base in arena.bases]
    jobs = [(number, token, urls[i % len(urls)]) for i, (number, token) in enumerate(players)]
    for pipe, share in zip(generators.pipes, shares(jobs, len(generators.pipes)), strict=True):
        pipe.send(("level", (share, think, pair_seconds)))
    last_start = max(generators.gather("ready", pair_seconds + 30))
    start = max(last_start, time.monotonic()) + think + 0.25  # every countdown over, every player playing
    generators.send((start, start + seconds))
    probe = Probe(arena, generators)
    try:
        time.sleep(max(0.0, start - time.monotonic()))
        before = probe.read()
        level.peers = server_peers({urlsplit(base).port or 0 for base in arena.bases})
        time.sleep(max(0.0, start + seconds - time.monotonic()))
        after = probe.read()
    finally:
        probe.close()
    level.costs = Costs.between(before, after, arena)
    level.rss_mb = sum(rss_mb(p.pid) for p in arena.procs)
    records = []
    for tally in map(lambda d: Tally(**d), generators.gather("result", seconds + END_SECONDS + 60)):
        level.latencies += tally.latencies
        level.intents += tally.intents
        level.errors += tally.errors
        level.failures += tally.failures
        records += tally.records
    level.unpaired = sum(1 for r in records if r[1] is None)
    asyncio.run(check_records(arena.bases[0], records, level))
    return level


async def check_records(base: str, records: list[tuple[int, str | None, int, int, int, int]], level: Level) -> None:
    """Every intent answered as played is in the match record exactly once: none lost, none twice."""
    by_match: dict[str, list[tuple[int, str | None, int, int, int, int]]] = collections.defaultdict(list)
    for record in records:
        if record[1] is not None:
            by_match[record[1]].append(record)
    level.matches = len(by_match)
    level.unanswered = sum(sent - answered for _, _, _, _, sent, answered in records)
    gate = asyncio.Semaphore(16)

    async def check(client: httpx.AsyncClient, match_id: str, pair: list[tuple[int, str | None, int, int, int, int]]
                    ) -> None:
        async with gate:
            for _ in range(100):
                shown = (await client.get(f"/api/matches/{match_id}")).json()
                if shown.get("state") == "over":
                    break
                await asyncio.sleep(0.1)
            else:
                level.failures["match not over"] += 1  # its intents cannot be checked
                return
        games = shown["record"]["games"]
        for _, _, side, applied, _, _ in pair:
            logged = sum(1 for a in games[side]["actions"] if a["m"] != "giveup")
            level.lost += max(0, applied - logged)
            level.twice += max(0, logged - applied)

    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await asyncio.gather(*(check(client, m, pair) for m, pair in by_match.items()))


@dataclass
class Burst:
    processes: int
    players: int
    connected: int = 0
    all_paired: float = math.nan  # seconds from the first seek to the last duel
    paired: int = 0
    waits: list[float] = field(default_factory=list)  # ms, seek to duel
    turned_away: int = 0
    twice: int = 0
    unpaired: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: collections.Counter[str] = field(default_factory=collections.Counter)
    costs: Costs | None = None
    lobbies: int = 0  # lobby updates the seekers received, in all
    late: collections.Counter[str] = field(default_factory=collections.Counter)  # err codes once paired


def run_burst(arena: Arena, generators: Generators, players: list[tuple[int, str]], spread: float,
              wait: float = BURST_WAIT) -> Burst:
    burst = Burst(arena.processes, len(players))
    urls = [base.replace("http", "ws") + "/ws" for base in arena.bases]
    jobs = [(number, token, urls[i % len(urls)], spread * i / len(players)) for i, (number, token) in
            enumerate(players)]
    for pipe, share in zip(generators.pipes, shares(jobs, len(generators.pipes)), strict=True):
        pipe.send(("burst", (share, wait)))
    burst.connected = sum(generators.gather("connected", 300))
    probe = Probe(arena, generators)
    try:
        t0 = time.monotonic() + 0.5
        generators.send(t0)
        time.sleep(max(0.0, t0 - time.monotonic()))
        before = probe.read()
        generators.gather("paired", wait + spread + 30)
        after = probe.read()
    finally:
        probe.close()
    burst.costs = Costs.between(before, after, arena)
    generators.send("finish")
    records = []
    for tally in map(lambda d: Tally(**d), generators.gather("result", END_SECONDS + 60)):
        burst.errors += tally.errors
        burst.failures += tally.failures
        burst.lobbies += tally.lobbies
        burst.late += tally.late
        records += tally.records
    sides: dict[str, set[tuple[int, int]]] = collections.defaultdict(set)
    last = t0
    for number, sent_at, duel_at, turned, matches in records:  # type: ignore[misc]
        burst.turned_away += turned > 0
        if not matches:
            burst.unpaired += 1
            continue
        burst.paired += 1
        burst.waits.append((duel_at - sent_at) * 1000)
        last = max(last, duel_at)
        burst.twice += len(matches) > 1
        for match_id, side in matches:
            sides[match_id].add((number, side))
    burst.unpaired += len(players) - len(records)  # never connected
    burst.twice += sum(1 for members in sides.values()
                       if len(members) != 2 or {side for _, side in members} != {0, 1})
    burst.all_paired = last - t0 if burst.paired else math.nan
    return burst


async def failover(arena: Arena, players: list[tuple[int, str]]) -> float:
    """Seconds from the kill -9 of a match's owner to the first move the new owner accepts."""
    import redis

    tally = Tally()
    socks = []
    for (number, token), base in zip(players, arena.bases, strict=False):
        ws = await open_socket(base.replace("http", "ws") + "/ws", number, token)
        socks.append(ws)
        await ws.send(json.dumps({"t": "seek", "d": {"format": FORMAT, "cid": f"f{number}"}}))
    match_id = None
    while match_id is None:
        message = await receive(socks[1], tally)
        if message["t"] == "duel":
            match_id = message["d"]["id"]
            await asyncio.sleep(message["d"].get("starts_in", 0) / 1000)  # the countdown: moves count after it
    await socks[1].send(json.dumps({"t": "stock", "d": {"ack": 1}}))  # a first move: the log has the start
    while not ((message := await receive(socks[1], tally))["t"] == "dev" and message["d"].get("ack") == 1):
        pass
    assert arena.redis_url is not None
    client = redis.Redis.from_url(arena.redis_url)
    lease = client.get(f"patience:match:{match_id}")
    client.close()
    owner = next((i for i, proc in enumerate(arena.procs[:2]) if lease and f"-{proc.pid}-" in lease.decode()), None)
    if owner is None:
        return math.nan  # the lease does not name one of the two processes
    survivor = socks[1 - owner]
    killed = time.monotonic()
    arena.procs[owner].kill()
    ack = 1
    while True:  # the page that survives sends its move until the new owner plays it
        ack += 1
        await survivor.send(json.dumps({"t": "stock", "d": {"ack": ack}}))
        try:
            while True:
                message = await asyncio.wait_for(receive(survivor, tally), 0.25)
                if message["t"] == "dev" and message["d"].get("ack") == ack and message["d"].get("cid"):
                    return time.monotonic() - killed
        except TimeoutError:
            if time.monotonic() - killed > 60:
                return math.nan


# --- the tables ----------------------------------------------------------------------------------


def per(value: float | None, count: int, scale: float = 1.0, digits: int = 2) -> str:
    if value is None or not count:
        return "–"
    return f"{value / count * scale:.{digits}f}"


def level_row(level: Level) -> str:
    c = level.costs
    assert c is not None
    lat = level.latencies
    p50 = statistics.median(lat) if lat else math.nan
    peers = f"{level.peers[0]}/{level.peers[1]}"
    return (f"{level.processes:>5} {level.players:>7} {level.intents:>7} {p50:>7.1f} {level.p99:>7.1f} "
            f"{max(lat, default=math.nan):>7.1f} {'ok' if level.ok else 'NO':>3} {level.lost:>5} {level.unanswered:>5} "
            f"{level.twice:>5} {level.budget:>6} {level.other_errors:>6} {peers:>9} "
            f"{per(c.server_cpu, level.intents, 1000):>6} {per(level.net_cpu, level.intents, 1000):>6} "
            f"{level.idle_cores:>5.2f} {per(c.redis_cpu, level.intents, 1000):>6} "
            f"{per(c.pg_cpu, level.intents, 1000):>6} {per(c.client_cpu, level.intents, 1000):>6} "
            f"{per(c.redis_commands, level.intents, 1, 1):>7} {per(c.pg_xacts, level.intents):>8} "
            f"{level.rss_mb:>6.0f} {c.other:>5.2f}")


LEVEL_HEADER = (f"{'procs':>5} {'players':>7} {'intents':>7} {'p50':>7} {'p99':>7} {'max':>7} {'ok':>3} "
                f"{'lost':>5} {'unans':>5} {'twice':>5} {'budget':>6} {'errors':>6} {'peers':>9} {'srv':>6} "
                f"{'net':>6} {'idle':>5} {'redis':>6} {'pg':>6} {'client':>6} {'cmd/int':>7} {'xact/int':>8} "
                f"{'RSS':>6} {'other':>5}")


def burst_row(b: Burst) -> str:
    c = b.costs
    assert c is not None
    rate = b.paired / b.all_paired if b.paired and b.all_paired > 0 else math.nan
    p50 = statistics.median(b.waits) if b.waits else math.nan
    return (f"{b.processes:>5} {b.players:>7} {b.connected:>9} {b.all_paired:>11.2f} {rate:>9.0f} {p50:>8.0f} "
            f"{percentile(b.waits, 99):>8.0f} {b.turned_away:>7} {b.twice:>6} {b.unpaired:>8} "
            f"{c.server_cpu:>7.1f} {c.client_cpu:>7.1f} {b.lobbies / max(1, b.players):>7.0f} "
            f"{per(c.redis_commands, b.players, 1, 1):>8} {per(c.pg_xacts, b.players):>9} {c.other:>5.2f}")


BURST_HEADER = (f"{'procs':>5} {'seekers':>7} {'connected':>9} {'all paired':>11} {'paired/s':>9} {'p50 ms':>8} "
                f"{'p99 ms':>8} {'turned':>7} {'twice':>6} {'unpaired':>8} {'srv CPU':>7} {'client':>7} {'lobbies':>7} "
                f"{'cmd/seek':>8} {'xact/seek':>9} {'other':>5}")


def counts_of(text: str) -> list[int]:
    return [min(5000, max(2, int(n) // 2 * 2)) for n in text.split(",") if n.strip() and int(n) > 0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", default="1", help="server process counts, comma-separated, e.g. 1,2,4,8")
    parser.add_argument("--players", default=None,
                        help=f"player counts, comma-separated (even; default 100,200,400, or {LADDER} with "
                             f"--find-capacity)")
    parser.add_argument("--find-capacity", action="store_true",
                        help="step the players up until a level is not ok (p99 ≥ 50 ms or anything wrong)")
    parser.add_argument("--burst", default="1000", help="burst sizes, comma-separated (0: none)")
    parser.add_argument("--burst-spread", type=float, default=1.0, help="seconds over which a burst's seeks come")
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring window per level (≤ 120)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a player's intents")
    parser.add_argument("--clients", type=int, default=min(4, os.cpu_count() or 1), help="load-generator processes")
    parser.add_argument("--postgres", action="store_true", help="1 process on PostgreSQL instead of SQLite")
    parser.add_argument("--redis-url", default=None,
                        help="Redis for N > 1 (emptied!); default: a private redis-server on a free port")
    parser.add_argument("--failover", action="store_true", help="with N ≥ 2: measure a kill -9 fail-over")
    parser.add_argument("--pair-timeout", type=float, default=PAIR_SECONDS,
                        help="seconds a level's player waits to be paired (a burst's: half of it)")
    parser.add_argument("--wait-quiet", type=float, default=30.0,
                        help="before each level, wait up to this many seconds for other work on the machine to "
                             "quieten (below 0.3 cores); the 'other' column says how busy it was")
    parser.add_argument("--logs", default=None, help="a folder to copy the servers' (and redis-server's) logs to")
    args = parser.parse_args()
    processes = [min(16, max(1, int(n))) for n in args.processes.split(",")]
    counts = counts_of(args.players or (LADDER if args.find_capacity else "100,200,400"))
    bursts = counts_of(args.burst)
    seconds = min(120.0, max(1.0, args.seconds))
    if any(n > 1 for n in processes) and args.redis_url is None and shutil.which("redis-server") is None:
        parser.error("no redis-server on PATH: give --redis-url")

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)  # a kill (or timeout) stops the servers and drops the database too
    generators = Generators(max(1, args.clients))
    levels: list[Level] = []
    bursts_done: list[Burst] = []
    failovers: list[tuple[int, float]] = []
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load {load}; {args.clients} load generators; Solitaire Reloaded duels "
          f"({FORMAT}), an intent every ~{args.think:g} s per player (2 % sent twice), {seconds:g} s windows; "
          f"1 process: {'PostgreSQL' if args.postgres else 'SQLite'}, more: PostgreSQL + Redis", flush=True)
    try:
        for count in processes:
            with arena(count, args.postgres, args.redis_url, sum(counts) + sum(bursts) + 2,
                       args.logs) as (where, players):
                print(f"\n{count} process{'es' if count > 1 else ''} on {', '.join(where.bases)}", file=sys.stderr)
                used = 0
                for n in counts:
                    wait_quiet(where, generators, args.wait_quiet)
                    level = run_level(where, generators, players[used:used + n], seconds, args.think,
                                      args.pair_timeout)
                    used += n
                    levels.append(level)
                    print(f"  {n} players: p99 {level.p99:.1f} ms, {'ok' if level.ok else 'not ok'}", file=sys.stderr)
                    if args.find_capacity and not level.ok:
                        break
                used = sum(counts)
                for n in bursts:
                    wait_quiet(where, generators, args.wait_quiet)
                    burst = run_burst(where, generators, players[used:used + n], args.burst_spread,
                                      args.pair_timeout / 2)
                    used += n
                    bursts_done.append(burst)
                    print(f"  burst of {n}: all paired in {burst.all_paired:.2f} s", file=sys.stderr)
                if args.failover and count > 1:
                    failovers.append((count, asyncio.run(failover(where, players[-2:]))))
    except KeyboardInterrupt:
        print("interrupted: the figures so far", file=sys.stderr)
    finally:
        generators.close()
    print("\nLevels: p50/p99/max ms of intents sent in the window; CPU in core-seconds per 1,000 intents "
          "(srv: the servers, net: less their cost with nobody connected, idle: the cores they keep busy then; "
          "redis, pg: the database's backends, client: the load generators); peers: "
          "connections/distinct addresses the servers had")
    print(LEVEL_HEADER)
    for level in levels:
        print(level_row(level))
    codes = collections.Counter[str]()
    for level in levels:
        codes += level.errors + level.failures
        codes["unpaired"] += level.unpaired
    for level in levels:
        if level.costs and level.costs.redis_commands and level.intents:
            top = sorted(level.costs.by_command.items(), key=lambda kv: -kv[1])[:6]
            print(f"  Redis per intent, {level.processes} processes, {level.players} players: "
                  + ", ".join(f"{name} {calls / level.intents:.2f}" for name, calls in top))
    if +codes:
        print("  errors and failures: " + ", ".join(f"{code} {n}" for code, n in (+codes).most_common()))
    print(f"\nPlayers held at p99 < {TARGET_P99_MS:g} ms (largest level ok; the first level not ok)")
    for count in processes:
        mine = [level for level in levels if level.processes == count]
        if not mine:
            continue
        held = max((level.players for level in mine if level.ok), default=0)
        failed = next((level for level in mine if not level.ok), None)
        beyond = f"; not at {failed.players} (p99 {failed.p99:.1f} ms)" if failed else "; every level ok"
        print(f"{count:>5} process{'es' if count > 1 else '  '}: {held or 'none'}{beyond}")
    if bursts_done:
        print(f"\nBursts: every seek sent within {args.burst_spread:g} s; 'all paired': seconds from the first seek "
              "to the last duel message; srv CPU: core-seconds of the servers until then")
        print(BURST_HEADER)
        for burst in bursts_done:
            print(burst_row(burst))
        for burst in bursts_done:
            said = [f"{what}: " + ", ".join(f"{code} {n}" for code, n in codes.most_common())
                    for what, codes in (("err to seeks", burst.errors), ("failed", burst.failures),
                                        ("err once paired, while giving up", burst.late)) if codes]
            if said:
                print(f"  {burst.processes} × {burst.players}: " + "; ".join(said))
            if burst.costs and burst.costs.redis_commands:
                top = sorted(burst.costs.by_command.items(), key=lambda kv: -kv[1])[:8]
                print(f"  Redis per seek, {burst.processes} processes, {burst.players} seekers: "
                      + ", ".join(f"{name} {calls / burst.players:.2f}" for name, calls in top))
    for count, took in failovers:
        print(f"\nfail-over ({count} processes): kill -9 of a match's owner to the first move accepted by the new "
              f"owner: {took:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
