"""Benchmark of the web app: move round trips under concurrent websocket players, and page weight.

Starts ``patience serve`` on a free loopback port (a separate process, with a fresh data
folder), then for each player count connects that many websockets, each playing Solitaire
Reloaded (untimed) at a human pace: an intent (turn the stock, or try a card on a foundation)
every ``--think`` seconds on average, for ``--seconds`` seconds. It prints the round-trip
latency of the intents (send to answer), p50/p99/max, and the size of what a browser downloads
for a game page (raw and gzip as sent), with the server's memory and the machine's load average
(the players and the server share this machine's cores). The players come from 250 loopback
addresses (127.0.3.1–250), a few each as behind a home's NAT, so the server's budgets per address
meet them as they would on the internet. Everything stays on loopback and ends on its own.

    python benchmarks/server.py                      # 1, 100 and 500 players, 10 s each
    python benchmarks/server.py --players 50 --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field

import httpx
from websockets.asyncio.client import connect

from loopback import percentile, rss_mb, serving

TARGET_P99_MS = 50.0
TARGET_PAGE_KB = 300.0
PLAYER_ADDRESSES = 250  # the players' source addresses, 127.0.3.1 and up


@dataclass
class Result:
    players: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    connected: int = 0


async def player(url: str, number: int, stop_at: list[float], think: float, result: Result,
                 ready: asyncio.Event, go: asyncio.Event, address: str | None = None) -> None:
    """One player; ``address`` is the local (loopback) address its socket comes from."""
    rng = random.Random(number)
    try:
        async with connect(url, max_size=2**20, open_timeout=60,
                           local_addr=(address, 0) if address else None) as ws:
            await ws.send(json.dumps({"t": "new", "d": {"game": "reloaded", "variant": "untimed",
                                                       "seed": str(1000 + number), "cid": f"p{number}"}}))
            while json.loads(await ws.recv())["t"] != "game":
                pass
            result.connected += 1
            ready.set()
            await go.wait()
            await asyncio.sleep(rng.random() * think)  # spread the players over the first period
            ack = 0
            while time.monotonic() < stop_at[0]:
                ack += 1
                if rng.random() < 0.75:
                    intent = {"t": "stock", "d": {"ack": ack}}
                else:
                    intent = {"t": "move", "d": {"ack": ack, "src": "w", "dst": "f"}}
                sent = time.perf_counter()
                await ws.send(json.dumps(intent))
                while True:
                    message = json.loads(await ws.recv())
                    if message["d"].get("ack") == ack:
                        break
                result.latencies.append((time.perf_counter() - sent) * 1000)
                if message["t"] == "err":
                    result.errors += 1
                await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
    except Exception:  # a refused or dropped connection counts as an error, the run goes on
        result.errors += 1
        ready.set()


async def run_level(url: str, players: int, seconds: float, think: float) -> Result:
    result = Result(players)
    go = asyncio.Event()
    readies = [asyncio.Event() for _ in range(players)]
    stop_at = [time.monotonic() + 3600]  # set for real once everyone is connected
    tasks = []
    for i in range(players):
        tasks.append(asyncio.create_task(player(url, i, stop_at, think, result, readies[i], go,
                                                 f"127.0.3.{1 + i % PLAYER_ADDRESSES}")))
        if i % 50 == 49:
            await asyncio.sleep(0.05)  # connect in waves, as real players would arrive
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in readies)), timeout=120)
    stop_at[0] = time.monotonic() + seconds
    go.set()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=seconds + 60)
    return result


def page_weight(base: str) -> tuple[int, int, list[tuple[str, int, int]]]:
    """What a browser downloads for a game page: every file, raw and as sent (gzip)."""
    seen: dict[str, tuple[int, int]] = {}
    todo = ["/play?game=reloaded"]
    with httpx.Client(base_url=base, headers={"accept-encoding": "gzip"}) as client:
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            response = client.get(path)
            response.raise_for_status()
            body = response.content
            seen[path] = (len(body), response.num_bytes_downloaded)
            text = body.decode("utf-8", "replace")
            if path.startswith("/play"):
                todo += re.findall(r'(?:href|src)="(/static/[^"]+)"', text)
            elif path.endswith(".js"):
                folder = path.rsplit("/", 1)[0]
                todo += [f"{folder}/{name[2:]}" for name in re.findall(r'from "(\./[^"]+\.js)"', text)]
    rows = [(path, raw, sent) for path, (raw, sent) in sorted(seen.items())]
    return sum(r for _, r, _ in rows), sum(s for _, _, s in rows), rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="1,100,500", help="player counts, comma-separated (at most 2000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring time per player count (≤ 120)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a player's intents")
    args = parser.parse_args()
    levels = [min(2000, max(1, int(n))) for n in args.players.split(",")]
    seconds = min(120.0, max(1.0, args.seconds))

    with tempfile.TemporaryDirectory() as data_dir, serving(data_dir) as (base, server):
        print(f"patience serve on {base} ({os.cpu_count()} CPUs); Solitaire Reloaded, an intent every "
              f"~{args.think:g} s per player, {seconds:g} s per level")
        print(f"{'players':>8} {'intents':>8} {'per s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} "
              f"{'errors':>7} {'RSS MB':>7} {'load':>5}")
        worst_p99 = 0.0
        for players in levels:
            # the players' own garbage collections would add pauses the server did not cause
            gc.disable()
            result = asyncio.run(run_level(base.replace("http", "ws", 1) + "/ws", players, seconds, args.think))
            gc.enable()
            gc.collect()
            lat = result.latencies
            p50 = statistics.median(lat) if lat else float("nan")
            p99 = percentile(lat, 99) if lat else float("nan")
            worst_p99 = max(worst_p99, p99) if players == max(levels) else worst_p99
            print(f"{players:>8} {len(lat):>8} {len(lat) / seconds:>7.0f} {p50:>8.2f} {percentile(lat, 95):>8.2f} "
                  f"{p99:>8.2f} {max(lat, default=float('nan')):>8.2f} {result.errors:>7} {rss_mb(server.pid):>7.0f} "
                  f"{os.getloadavg()[0]:>5.1f}")
        raw, sent, rows = page_weight(base)
        print("\ngame page download (what the browser fetches):")
        for path, r, s in rows:
            print(f"  {path:<34} {r / 1024:>7.1f} KB  ({s / 1024:.1f} KB sent)")
        print(f"  {'total':<34} {raw / 1024:>7.1f} KB  ({sent / 1024:.1f} KB sent)")
        print(f"\ntargets: p99 < {TARGET_P99_MS:g} ms at {max(levels)} players: "
              f"{'met' if worst_p99 < TARGET_P99_MS else 'NOT met'} ({worst_p99:.1f} ms); "
              f"page < {TARGET_PAGE_KB:g} KB: {'met' if raw / 1024 < TARGET_PAGE_KB else 'NOT met'} "
              f"({raw / 1024:.1f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
