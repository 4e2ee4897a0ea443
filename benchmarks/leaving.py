"""Benchmark of leaving matches, measured from outside: after quick matches on two processes, how long is
each player still held "in a match" that is over?

Two ``patience serve`` processes on a fresh PostgreSQL database and a private ``redis-server`` (as
``benchmarks/duels.py`` makes them). ``--pairs`` pairs of players, one player of each pair on each
process (each from a loopback address of its own), meet through a challenge link and play a rematch
chain of ``--matches`` matches: every match is given up by both players at the first moment a page can,
the moment its ``duel`` message arrives (in the countdown), and both pages then ask for the rematch at
once. After the chain each player seeks a pool once (an ``in_match`` answer counts as a lock-out) and
leaves it.

From the moment a page sees a match's end, the benchmark reads the arena's shared state in Redis every
50 ms (``busy``: the match each player plays, which ``in_match`` answers from; ``live`` and
``live_info``: the matches listed as going on) until neither player is held by that match and it is no
longer listed. It prints the matches played, the time to free (p50, p99, max), the players still held
10 s after the end of their match (the target: 0), the rematches and seeks refused, and the errors::

    python benchmarks/leaving.py                     # 20 pairs × 10 matches = 200 matches
    python benchmarks/leaving.py --pairs 5 --matches 4
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from duels import SESSION_COOKIE, address_of, arena
from loopback import percentile

FORMAT = "reloaded/standard/300"
HELD_LIMIT_S = 10.0  # a player still held this long after the end of their match is locked out


@dataclass
class Tally:
    ends: list[tuple[float, str, tuple[str, str]]] = field(default_factory=list)  # (seen at, match, players)
    freed: list[float] = field(default_factory=list)  # seconds from a match's end to both players free
    held: list[str] = field(default_factory=list)  # matches whose players were held past HELD_LIMIT_S
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    matches: int = 0


class Page:
    """One player's duel page: a websocket from their own address, with their session."""

    def __init__(self, base: str, number: int, token: str) -> None:
        self.base, self.number, self.token = base, number, token
        self.user = f"bench{number:06d}"
        self.ack = 0
        self.ws: Any = None

    async def open(self) -> None:
        from websockets.asyncio.client import connect

        self.ws = await connect(self.base.replace("http://", "ws://") + "/ws", local_addr=(address_of(self.number), 0),
                                additional_headers={"cookie": f"{SESSION_COOKIE}={self.token}"}, open_timeout=30)

    async def send(self, t: str, d: dict[str, Any]) -> None:
        await self.ws.send(json.dumps({"t": t, "d": d}))

    async def until(self, wanted: Any, seconds: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), max(0.01, deadline - time.monotonic())))
            if wanted(message):
                return message  # type: ignore[no-any-return]

    async def give_up(self) -> dict[str, Any]:
        self.ack += 1
        ack = self.ack
        await self.send("giveup", {"ack": ack})
        return await self.until(lambda m: m["t"] in ("dev", "err", "rej") and m["d"].get("ack") == ack)


async def chain(a: Page, b: Page, matches: int, tally: Tally) -> None:
    """A challenge link, then a rematch chain of ``matches`` matches given up in their countdowns."""
    try:
        for page in (a, b):
            await page.open()
        await a.send("challenge", {"format": FORMAT, "cid": f"p{a.number}"})
        code = (await a.until(lambda m: m["t"] in ("challenge", "err")))["d"].get("code")
        if code is None:
            tally.errors["challenge refused"] += 1
            return
        await b.send("accept", {"code": code, "cid": f"p{b.number}"})
        match_id = (await a.until(lambda m: m["t"] == "duel"))["d"]["id"]
        await b.until(lambda m: m["t"] == "duel" and m["d"]["id"] == match_id)
        for n in range(matches):
            first, last = await a.give_up(), await b.give_up()
            if first["t"] != "dev" or last["t"] != "dev" or last["d"].get("end") is None:
                tally.errors[f"give-up answered {first['t']}/{last['t']} {first['d'].get('code')}"] += 1
                return
            tally.matches += 1
            tally.ends.append((time.monotonic(), match_id, (a.user, b.user)))
            if n == matches - 1:
                break
            await a.send("rematch", {"id": match_id})
            await b.send("rematch", {"id": match_id})
            found = await a.until(lambda m: m["t"] == "duel" or (m["t"] == "err" and m["d"]["code"] != "not_over"))
            if found["t"] == "err":
                tally.errors[f"rematch refused {found['d']['code']}"] += 1
                return
            match_id = found["d"]["id"]
            await b.until(lambda m, wanted=match_id: m["t"] == "duel" and m["d"]["id"] == wanted)
        for page in (a, b):
            await page.send("seek", {"format": FORMAT, "cid": f"p{page.number}"})
            answer = await page.until(lambda m: m["t"] == "err" or (m["t"] == "lobby" and m["d"]["seeking"]))
            if answer["t"] == "err":
                tally.errors[f"seek refused {answer['d']['code']}"] += 1
            await page.send("unseek", {})
            await page.until(lambda m: m["t"] == "lobby" and m["d"]["seeking"] is None)
    except (TimeoutError, OSError) as exc:
        tally.errors[f"{type(exc).__name__}"] += 1
    finally:
        for page in (a, b):
            if page.ws is not None:
                await page.ws.close()


async def watch(redis_url: str, tally: Tally, done: asyncio.Event) -> None:
    """Every 50 ms: the ends seen so far whose players are still held, or whose match is still listed."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    seen = 0
    open_ends: list[tuple[float, str, tuple[str, str]]] = []
    try:
        while not (done.is_set() and not open_ends and seen == len(tally.ends)):
            open_ends += tally.ends[seen:]
            seen = len(tally.ends)
            left = []
            for at, match_id, users in open_ends:
                busy = await client.hmget("patience:busy", list(users))
                listed = await client.hexists("patience:live", match_id) or await client.hexists(
                    "patience:live_info", match_id)
                if listed or any(found is not None and found.decode() == match_id for found in busy):
                    if time.monotonic() - at > 60:
                        tally.held.append(match_id)  # given up on: counted as held
                    else:
                        left.append((at, match_id, users))
                    continue
                tally.freed.append(time.monotonic() - at)
            open_ends = left
            await asyncio.sleep(0.05)
    finally:
        await client.aclose()


async def run(bases: list[str], players: list[tuple[int, str]], redis_url: str, matches: int) -> Tally:
    tally = Tally()
    done = asyncio.Event()
    watcher = asyncio.create_task(watch(redis_url, tally, done))
    pages = [Page(bases[n % 2], n, token) for n, token in players]
    await asyncio.gather(*(chain(pages[i], pages[i + 1], matches, tally) for i in range(0, len(pages) - 1, 2)))
    done.set()
    await watcher
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="pairs of players, each a rematch chain (20)")
    parser.add_argument("--matches", type=int, default=10, help="matches in each chain (10)")
    parser.add_argument("--redis-url", default=None, help="a Redis to use (emptied!); default: a private one")
    args = parser.parse_args()
    with arena(2, True, args.redis_url, 2 * args.pairs) as (served, players):
        assert served.redis_url is not None
        started = time.monotonic()
        tally = asyncio.run(run(served.bases, players, served.redis_url, args.matches))
        took = time.monotonic() - started
    late = [s for s in tally.freed if s > HELD_LIMIT_S]
    print(f"{tally.matches} quick matches (given up in the countdown, rematch chains of {args.matches}) by "
          f"{2 * args.pairs} players on 2 processes in {took:.1f} s")
    if tally.freed:
        print(f"  a match's end to both players free: p50 {percentile(tally.freed, 50) * 1000:.0f} ms, "
              f"p99 {percentile(tally.freed, 99) * 1000:.0f} ms, max {max(tally.freed) * 1000:.0f} ms")
    print(f"  players still held {HELD_LIMIT_S:.0f} s after their match ended: {2 * (len(late) + len(tally.held))} "
          f"(matches: {len(late) + len(tally.held)})")
    print(f"  errors: {dict(tally.errors) or 'none'}")
    return 0 if not late and not tally.held and not tally.errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
