"""Benchmark of Play now on a real arena, measured from outside: how soon a player who presses it
plays, and that every match is taken once and completes once.

For each number of server processes in ``--processes`` it makes a fresh arena exactly as
``benchmarks/duels.py`` does (1 process: SQLite; more: PostgreSQL + a private Redis; the accounts
written before any server starts; each player on a loopback address of its own, so the per-address
budgets and Play now's own rule — a host's match is never dealt to the same address — meet each
player as one person). ``--players`` players then press **Play now** at random moments (a Poisson
stream of ``--rate`` presses a second, over the ten pools or ``--format``'s one), each on the
process of its turn, as a page does: ``GET /api/me`` (the CSRF token), ``POST /api/playnow/…``, the
websocket, ``join`` of the game it was given. It draws from the stock ``--moves`` times, a
``--think`` apart, and gives up. Measured:

- ``start``: from the press to the first table on the page (the ``game`` message), ms — the
  issue's target is every seeker in a rated game within 2 s; ``press``: the median of its first
  part, the HTTP requests (the rest is the websocket and the ``join``);
- ``hosts``/``takers``: how many became hosts of a new match, how many took a waiting one;
- after the last game, the arena is given ``--settle`` seconds, then every player's own list
  (``GET /api/playnow``) is read: ``done`` matches completed (each shown over, ``apart``, by
  ``/api/matches/ID``), ``twice`` matches with two challengers or two hosts, or done but not shown
  over (must be 0), ``open``/``taken`` left (a host whose match nobody took yet; none should be
  ``taken`` once every game is over);
- ``errors``: every failed request or ``err`` message, by code.

Run: ``python benchmarks/playnow.py --processes 1,2 --players 400 --rate 20``.

``--browser N`` measures instead what a lone player sees, in Chromium (Playwright, ``/usr/bin/chromium``
or ``$PATIENCE_CHROMIUM``) on one process: N players in turn open the duel page, press **Play now** on
a pool (nobody waits there: each hosts a new secret deal) and give up. Measured: from the click to the
first card face up on the table, ms (p50, p95, max; the issue's target: ≤ 1000 ms at the 95th percentile):
``python benchmarks/playnow.py --browser 20``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from duels import SESSION_COOKIE, address_of, arena
from loopback import percentile
from patience.duel import FORMATS, LIMITS, Format

POOLS = [Format(game, variant, limit).key for game, variants in FORMATS.items() for variant in variants
         for limit in LIMITS]


@dataclass
class Tally:
    starts: list[float] = field(default_factory=list)
    posts: list[float] = field(default_factory=list)  # of a start: the press (GET /api/me + POST), ms
    roles: collections.Counter[str] = field(default_factory=collections.Counter)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)


async def player(base: str, number: int, token: str, fmt: str, at: float, moves: int, think: float,
                 tally: Tally) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    pressed = time.monotonic()
    address = address_of(number)
    transport = httpx.AsyncHTTPTransport(local_address=address)
    cookies = {SESSION_COOKIE: token}
    try:
        async with httpx.AsyncClient(base_url=base, transport=transport, cookies=cookies, timeout=30) as http:
            me = await http.get("/api/me")
            answer = await http.post(f"/api/playnow/{fmt}", data={"csrf": me.json()["csrf"]},
                                     headers={"accept": "application/json"})
            if answer.status_code != 200:
                tally.errors[f"http {answer.status_code} {answer.json().get('error')}"] += 1
                return
            got = answer.json()
            posted = (time.monotonic() - pressed) * 1000
            cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        ws_url = base.replace("http://", "ws://") + "/ws"
        async with connect(ws_url, additional_headers={"cookie": cookie}, local_addr=(address, 0),
                           open_timeout=30) as ws:
            await ws.send(json.dumps({"t": "join", "d": {"id": got["game_id"], "v": 0, "cid": f"p{number}"}}))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["t"] == "game":
                    break
                if message["t"] == "err":
                    tally.errors[f"join {message['d'].get('code')}"] += 1
                    return
            tally.starts.append((time.monotonic() - pressed) * 1000)
            tally.posts.append(posted)
            tally.roles[got["role"]] += 1
            for ack in range(1, moves + 2):
                await asyncio.sleep(random.expovariate(1 / think))
                kind = "stock" if ack <= moves else "giveup"
                await ws.send(json.dumps({"t": kind, "d": {"ack": ack}}))
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    d = message.get("d") or {}
                    if d.get("ack") == ack:
                        if message["t"] == "err":
                            tally.errors[f"{kind} {d.get('code')}"] += 1
                        break
    except (OSError, TimeoutError, httpx.HTTPError, ValueError) as exc:
        tally.errors[type(exc).__name__] += 1


async def outcome(bases: list[str], players: list[tuple[int, str]]) -> dict[str, int]:
    """What the players' own lists say once the games are over (as each sees it, on the process of its
    turn): matches by state, and ``twice``: matches with more than one challenger, or done but not
    shown over (with ``apart``) by ``/api/matches/ID``."""
    roles: dict[str, list[str]] = collections.defaultdict(list)
    states: dict[str, str] = {}
    for i, (number, token) in enumerate(players):
        transport = httpx.AsyncHTTPTransport(local_address=address_of(number))
        async with httpx.AsyncClient(base_url=bases[i % len(bases)], transport=transport, timeout=30,
                                     cookies={SESSION_COOKIE: token}) as http:
            for game in (await http.get("/api/playnow")).json()["games"]:
                roles[game["id"]].append(game["role"])
                states[game["id"]] = game["state"]
    twice = sum(1 for r in roles.values() if r.count("challenger") > 1 or r.count("host") > 1)
    async with httpx.AsyncClient(base_url=bases[0], timeout=30) as http:
        for match_id, state in states.items():
            if state == "done":
                shown = (await http.get(f"/api/matches/{match_id}")).json()
                twice += not (shown.get("state") == "over" and shown.get("record", {}).get("apart") is True)
    counts = collections.Counter(states.values())
    return {**counts, "twice": twice}


async def run_all(bases: list[str], players: list[tuple[int, str]], rate: float, fmt: str | None, moves: int,
                  think: float) -> Tally:
    tally = Tally()
    t = time.monotonic() + 1.0
    jobs = []
    for i, (number, token) in enumerate(players):
        t += random.expovariate(rate)
        jobs.append(player(bases[i % len(bases)], number, token, fmt or random.choice(POOLS), t, moves, think, tally))
    await asyncio.gather(*jobs)
    return tally


def browser_starts(base: str, players: list[tuple[int, str]], fmt: str) -> list[float]:
    """Each player in turn, in Chromium: the duel page, Play now on ``fmt``, the cards; then a give-up.
    Returns the milliseconds from each click to the first card face up."""
    import os

    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("PATIENCE_CHROMIUM", "/usr/bin/chromium")
    host = base.split("//", 1)[1].split(":")[0]
    starts = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        for _, token in players:
            context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
            context.add_cookies([{"name": SESSION_COOKIE, "value": token, "domain": host, "path": "/"}])
            page = context.new_page()
            page.goto(f"{base}/duel")
            button = page.locator(f'.pool[data-format="{fmt}"] .playnow')
            button.wait_for()
            page.wait_for_function("() => { const b = document.querySelector('#banner'); return !b || b.hidden; }")
            pressed = time.monotonic()
            button.click()
            page.wait_for_selector(".card.up")
            starts.append((time.monotonic() - pressed) * 1000)
            page.locator("#menu-btn").click()
            page.locator("#m-giveup").click()
            page.locator("#confirm-yes").click()
            page.locator("#end-title").wait_for()
            context.close()
        browser.close()
    return starts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", default="1,2", help="server process counts, comma-separated")
    parser.add_argument("--players", type=int, default=300)
    parser.add_argument("--rate", type=float, default=10.0, help="presses of Play now a second")
    parser.add_argument("--format", default=None, help="one pool for all (default: the ten pools at random)")
    parser.add_argument("--moves", type=int, default=3, help="stock draws each player makes before giving up")
    parser.add_argument("--think", type=float, default=0.3, help="mean seconds between a player's moves")
    parser.add_argument("--settle", type=float, default=15.0, help="seconds given to the arena to complete")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--browser", type=int, default=0, metavar="N",
                        help="instead: N lone players in Chromium, click to cards (one process)")
    args = parser.parse_args()
    random.seed(args.seed)
    if args.browser:
        fmt = args.format or "reloaded/standard/300"
        with arena(1, False, None, args.browser) as (where, players):
            starts = browser_starts(where.bases[0], players, fmt)
        print(f"Play now in Chromium, one process: {len(starts)} lone players on {fmt}, click to the first card")
        print(f"p50 {percentile(starts, 50):.0f} ms  p95 {percentile(starts, 95):.0f} ms  max {max(starts):.0f} ms  "
              f"(target: p95 ≤ 1000 ms)")
        return 0
    print(f"Play now: {args.players} players pressing it at {args.rate:g} a second "
          f"({args.format or 'the ten pools at random'}), {args.moves} draws {args.think:g} s apart, then a give-up; "
          "1 process: SQLite, more: PostgreSQL + Redis")
    print(f"{'procs':>5} {'players':>7} {'hosts':>6} {'takers':>6} {'start p50':>9} {'p99':>7} {'max':>7} "
          f"{'≤2 s':>6} {'press':>6} {'done':>5} {'twice':>5} {'open':>5} {'taken':>5}  errors")
    for processes in (int(p) for p in args.processes.split(",")):
        with arena(processes, False, None, args.players) as (where, players):
            started = time.monotonic()
            tally = asyncio.run(run_all(where.bases, players, args.rate, args.format, args.moves, args.think))
            time.sleep(args.settle)
            counts = asyncio.run(outcome(where.bases, players))
            took = time.monotonic() - started
        starts = tally.starts
        within = sum(1 for s in starts if s <= 2000) / len(starts) if starts else 0.0
        errors = ", ".join(f"{k}: {v}" for k, v in tally.errors.most_common()) or "none"
        print(f"{processes:>5} {args.players:>7} {tally.roles['host']:>6} {tally.roles['challenger']:>6} "
              f"{percentile(starts, 50):>9.0f} {percentile(starts, 99):>7.0f} {max(starts, default=0):>7.0f} "
              f"{within:>6.1%} {percentile(tally.posts, 50):>6.0f} "
              f"{counts.get('done', 0):>5} {counts['twice']:>5} {counts.get('open', 0):>5} "
              f"{counts.get('taken', 0):>5}  {errors} ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
