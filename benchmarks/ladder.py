"""The ladder against accounts that farm, launder and outlive a mark, through real servers.

Each kind below is an attack of issue 33 played with real websocket clients against real ``patience serve``
processes: every person from a loopback address of their own (127.x.y.z), live rated duels of Solitaire
Reloaded (5 minutes), challenge links and rematches as the page sends them, marks by a moderator through
the moderators' API. What each kind got is read from the server's own answers (the profile API, the
leaderboard API, the moderators' API, the websocket's refusals):

- ``farm-quit``: accounts A and B; in each match B turns the stock once and gives up, A plays real moves
  at 0.6–1.2 s until it leads, then gives up too; both ask for a rematch (``--matches`` matches).
- ``farm-effort``: the step aside: B makes a show of an attempt before giving up (12 real moves, any of
  the useful ones, over 32 s).
- ``farm-rotate``: A against a fresh puppet every match (a challenge link each), each quitting at once.
- ``launder``: A and puppet B play matches whose loser tries (12 real moves over 32 s) before giving up; B
  wins 2, A wins the rest; then B is marked: what A gets back against what it genuinely lost to B.
- ``rematch-after-mark``: a match ends, B is marked, both pages ask for a rematch: does a match start?
- ``mark-mid-match``: A loses a rated match to B; in the next, B is marked while it runs (the match ends
  then). A's refund must stay, and the running match's loss must not count.
- ``puppet-self-mark``: A and puppet B play real matches (B wins the first, A the next two), then B plays
  one at machine speed (the hint's moves 0.1 s apart) until the detection marks it: A must get back
  nothing beyond what it genuinely lost to B.
- ``playnow-marked-host``: H hosts two matches of Play now; C takes the first and plays on; H is marked:
  C's match must be void with no rating lost, H's other one closed (dealt to nobody).

It prints, per kind, the first account's rating before and after, its leaderboard place, its fair-play
state, refunds and refusals. The targets (issue 33): a second account's give-ups earn the first under 100
points over 8 matches and never a top-10 place; a marked puppet returns nothing beyond what was genuinely
lost; a rematch after a mark never starts; a refund is never overwritten.

    python benchmarks/ladder.py                                   # one process, SQLite
    python benchmarks/ladder.py --database-url postgresql+psycopg://127.0.0.1:5432/bench \\
        --redis-url redis://127.0.0.1:6379/0 --processes 2         # two processes of one arena
    python benchmarks/ladder.py --kinds farm-quit,launder --matches 8
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from fairplay import Client, match_deal
from loopback import serving_many
from patience.errors import PatienceError
from patience.games import DRAW, REDEAL
from patience.server.solo.hints import simple_hint
from patience.session import Session

FORMAT = "reloaded/standard/300"
GAME = "reloaded"
KINDS = ("farm-quit", "farm-effort", "farm-rotate", "launder", "rematch-after-mark", "mark-mid-match",
         "puppet-self-mark", "playnow-marked-host")
EFFORT_MOVES, EFFORT_S = 12, 32.0  # a loser's show of an attempt before it gives up


LADDER_PEOPLE = 19 * 64516  # person numbers from here: addresses 127.20.x.y and up, apart from fairplay.py's


class Person(Client):
    """One person (:class:`fairplay.Client`: an account, an HTTP client and a websocket, from a loopback address
    of their own) on one of the server processes, who also notes the refusals it is told and the end of
    its match, and reads its rating, refunds and place from the server's APIs."""

    def __init__(self, base: str, number: int, login: str) -> None:
        super().__init__(base, LADDER_PEOPLE + number, login)
        self.refusals: list[str] = []
        self.end: dict[str, Any] | None = None  # the end of the match on this page, once told

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        self.http.close()

    def until(self, wanted: Any, timeout: float = 60.0) -> dict[str, Any]:
        def noted(msg: dict[str, Any]) -> bool:
            if msg["t"] == "err":
                self.refusals.append(str(msg["d"].get("code")))
            if msg["t"] == "dev" and msg["d"].get("end") is not None:
                self.end = msg["d"]["end"]
            if msg["t"] == "duel":
                self.end = msg["d"].get("end")
            return bool(wanted(msg))

        return super().until(noted, timeout)

    def rating(self) -> float:
        found = self.http.get(f"/api/profile/{self.id}").json()
        return float((found.get("ratings") or {}).get(GAME, {}).get("rating", 1500))

    def refunds(self) -> float:
        found = self.http.get(f"/api/profile/{self.id}").json()
        return float(sum(r["points"] for r in (found.get("fairplay") or {}).get("refunds", [])))

    def place(self) -> int | None:
        board = self.http.get(f"/api/leaderboard?game={GAME}").json()["players"]
        return next((n for n, p in enumerate(board, start=1) if p["id"] == self.id), None)


def intent_of(session: Session, move: Any) -> tuple[str, dict[str, Any]]:
    if move in (DRAW, REDEAL):
        return "stock", {"how": "click"}
    return "move", {"src": move.src, "dst": move.dst, "n": move.n, "how": "drag", "ms": 380, "px": 300}


def act(person: Person, t: str, d: dict[str, Any]) -> dict[str, Any]:
    person.ack += 1
    ack = person.ack
    person.send(t, {"ack": ack, **d})
    return person.until(lambda m: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack)


def deal_of(database_url: str, match_id: str) -> Session:
    """The match's deal, read from the database beside the server (a cheater's engine sees the table; these
    players only need legal moves)."""
    return Session(*match_deal(database_url, match_id))


def play(person: Person, duel: dict[str, Any], database_url: str, how: str, rng: random.Random,
         lead_over: Callable[[], int | None] = lambda: None) -> int:
    """Play one side of a match as ``how`` until its game is over; returns the game's score.

    ``quit``: one stock turn, then give up. ``effort``: :data:`EFFORT_MOVES` real moves over
    :data:`EFFORT_S` s, then give up. ``lead``: the hint's moves at 0.6–1.2 s until the score passes the other
    side's final score (``lead_over()``, once it is known) and at least 3 moves were made, then give up."""
    session = deal_of(database_url, duel["id"])
    time.sleep(duel.get("starts_in", 0) / 1000 + 0.1)
    started = time.monotonic()
    real = 0
    score = 0
    while not session.is_over:
        if how == "quit":
            t, d = ("stock", {"how": "click"}) if session.moves_made == 0 else ("giveup", {})
        else:
            move = simple_hint(session.state)
            if how == "effort":  # a show of an attempt, not a good game: any real move rather than the best
                real_moves = [m for m in session.state.useful_moves() if m not in (DRAW, REDEAL)]
                move = rng.choice(real_moves) if real_moves else move
            done = (how == "effort" and real >= EFFORT_MOVES and time.monotonic() - started >= EFFORT_S) or (
                how == "machine" and real >= 40) or (
                how == "lead" and real >= 3 and (other := lead_over()) is not None and score > other) or (
                time.monotonic() - started > 120)  # no lead in two minutes: give up, as a person would
            if move is None or done:
                t, d = "giveup", {}
            else:
                t, d = intent_of(session, move)
            pause = (rng.uniform(0.6, 1.2) if how == "lead" else 0.1 if how == "machine"
                     else EFFORT_S / (EFFORT_MOVES + 4))
            time.sleep(pause)
        answer = act(person, t, d)
        if t == "giveup" or answer["t"] != "dev" or not answer["d"].get("ok", False):
            if t != "giveup":
                act(person, "giveup", {})
            break
        if t == "move":
            real += 1
        try:
            session.play(move if t == "move" else (DRAW if session.state.check(DRAW) is None else REDEAL))
        except PatienceError:  # the local copy ran out of time: the server's answer above said what counts
            break
        score = session.score
    return score


def match(a: Person, b: Person, duels: tuple[dict[str, Any], dict[str, Any]], database_url: str, how_b: str,
          rng: random.Random, a_wins: bool = True) -> dict[str, Any]:
    """One match: B plays ``how_b``; A leads past B when ``a_wins``, else A tries and gives up."""
    b_final: list[int] = []
    how_a = "lead" if a_wins else "effort"
    if not a_wins:
        how_b = "lead"
    a_final: list[int] = []
    threads = [threading.Thread(target=lambda: a_final.append(play(a, duels[0], database_url, how_a, rng,
                                                                   lambda: b_final[0] if b_final else None))),
               threading.Thread(target=lambda: b_final.append(play(b, duels[1], database_url, how_b, rng,
                                                                   lambda: a_final[0] if a_final else None)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for p in (a, b):
        if p.end is None:
            p.until(lambda m, p=p: p.end is not None, 400)
    return a.end or {}


def challenge(a: Person, b: Person) -> tuple[dict[str, Any], dict[str, Any]] | None:
    a.send("challenge", {"format": FORMAT, "cid": f"c-{a.login}"})
    made = a.until(lambda m: m["t"] in ("challenge", "err"))
    if made["t"] == "err":
        return None
    b.send("accept", {"code": made["d"]["code"], "cid": f"c-{b.login}"})
    try:
        return a.until(lambda m: m["t"] == "duel", 20)["d"], b.until(lambda m: m["t"] == "duel", 20)["d"]
    except TimeoutError:
        return None


def rematch(a: Person, b: Person, match_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    for p in (a, b):
        p.send("rematch", {"id": match_id, "cid": f"r-{p.login}"})
    try:
        return a.until(lambda m: m["t"] == "duel", 15)["d"], b.until(lambda m: m["t"] == "duel", 15)["d"]
    except TimeoutError:
        return None


class Site:
    """The servers, a moderator, and a counter of people."""

    def __init__(self, bases: list[str], database_url: str) -> None:
        self.bases, self.database_url = bases, database_url
        self.number = 0
        self.lock = threading.Lock()
        self.tag = random.randrange(10**6)
        self.moderator = self.person("mod")
        from patience.server.storage.roles import grant
        from patience.server.storage.store import Store

        store = Store(database_url)
        try:
            grant(store, self.moderator.login, "moderator")
        finally:
            store.close()

    def person(self, name: str) -> Person:
        with self.lock:
            self.number += 1
            number = self.number
        return Person(self.bases[number % len(self.bases)], number, f"{name}{self.tag}n{number}")

    def mark(self, who: Person) -> int:
        m = self.moderator
        return m.http.post(f"/api/mod/account/{who.id}", data={"csrf": m.csrf(), "action": "mark_bot",
                                                               "note": "ladder benchmark"}).status_code

    def state(self, who: Person) -> str | None:
        return self.moderator.http.get(f"/api/mod/account/{who.id}").json().get("state")


def farm(site: Site, matches: int, how_b: str, rotate: bool, rng: random.Random) -> dict[str, Any]:
    a = site.person("farmer")
    a.open()
    before = a.rating()
    puppets: list[Person] = []
    played = 0
    duels = None
    last: str | None = None
    try:
        for n in range(matches):
            if rotate or not puppets:
                puppet = site.person("puppet")
                puppet.open()
                puppets.append(puppet)
                duels = challenge(a, puppet)
            elif last is not None:
                duels = rematch(a, puppets[-1], last)
                if duels is None:  # refused (or the pool said no): a new challenge link, as a person would
                    duels = challenge(a, puppets[-1])
            if duels is None:
                break
            end = match(a, puppets[-1], duels, site.database_url, how_b, rng)
            played = n + 1
            last = duels[0]["id"]
            del end
        time.sleep(2.0)
        return {"matches": played, "before": before, "after": a.rating(), "place": a.place(),
                "state": site.state(a), "puppet_state": site.state(puppets[-1]) if puppets else None,
                "refusals": sorted(set(a.refusals + [r for p in puppets for r in p.refusals]))}
    finally:
        for p in [a, *puppets]:
            p.close()


def launder(site: Site, matches: int, rng: random.Random) -> dict[str, Any]:
    a, b = site.person("launderer"), site.person("puppet")
    for p in (a, b):
        p.open()
    try:
        before = a.rating()
        lost = gained = 0.0
        duels = challenge(a, b)
        played = 0
        for n in range(matches):
            if duels is None:
                break
            a_before = a.rating()
            match(a, b, duels, site.database_url, "effort", rng, a_wins=n >= 2)
            time.sleep(1.0)
            change = a.rating() - a_before
            lost, gained = lost + max(0.0, -change), gained + max(0.0, change)
            played = n + 1
            duels = rematch(a, b, duels[0]["id"]) or challenge(a, b)
        status = site.mark(b)
        time.sleep(2.0)
        return {"matches": played, "before": before, "after": a.rating(), "lost_to_b": lost, "won_from_b": gained,
                "refunded": a.refunds(), "mark": status, "place": a.place()}
    finally:
        a.close()
        b.close()


def rematch_after_mark(site: Site, rng: random.Random) -> dict[str, Any]:
    a, b = site.person("victim"), site.person("marked")
    for p in (a, b):
        p.open()
    try:
        duels = challenge(a, b)
        if duels is None:
            return {"error": "no first match"}
        match(a, b, duels, site.database_url, "quit", rng)
        status = site.mark(b)
        time.sleep(1.0)
        again = rematch(a, b, duels[0]["id"])
        fresh = challenge(a, b)
        return {"mark": status, "rematch_started": again is not None, "challenge_started": fresh is not None,
                "refusals": sorted(set(a.refusals + b.refusals))}
    finally:
        a.close()
        b.close()


def mark_mid_match(site: Site, rng: random.Random) -> dict[str, Any]:
    a, b = site.person("victim"), site.person("cheat")
    for p in (a, b):
        p.open()
    try:
        before = a.rating()
        duels = challenge(a, b)
        if duels is None:
            return {"error": "no first match"}
        match(a, b, duels, site.database_url, "effort", rng, a_wins=False)
        time.sleep(1.0)
        after_first = a.rating()
        duels = rematch(a, b, duels[0]["id"]) or challenge(a, b)
        if duels is None:
            return {"error": "no second match"}
        marker = threading.Timer(10.0, site.mark, args=(b,))
        marker.start()
        match(a, b, duels, site.database_url, "effort", rng, a_wins=False)
        marker.join()
        time.sleep(2.0)
        return {"before": before, "after_first": after_first, "after": a.rating(), "refunded": a.refunds()}
    finally:
        a.close()
        b.close()


def puppet_self_mark(site: Site, rng: random.Random) -> dict[str, Any]:
    a, b = site.person("main"), site.person("puppet")
    for p in (a, b):
        p.open()
    try:
        lost = gained = 0.0
        duels = challenge(a, b)
        for n in range(4):
            if duels is None:
                return {"error": f"no match {n + 1}"}
            a_before = a.rating()
            if n < 3:
                match(a, b, duels, site.database_url, "effort", rng, a_wins=n >= 1)
            else:  # the puppet at machine speed: the detection marks it after the match
                match(a, b, duels, site.database_url, "machine", rng)
            time.sleep(1.0)
            change = a.rating() - a_before
            lost, gained = lost + max(0.0, -change), gained + max(0.0, change)
            if n < 3:
                duels = rematch(a, b, duels[0]["id"]) or challenge(a, b)
        ended = time.monotonic()
        while site.state(b) != "marked" and time.monotonic() - ended < 120:
            time.sleep(1.0)
        marked_after = time.monotonic() - ended
        time.sleep(1.0)
        return {"lost_to_b": lost, "won_from_b": gained, "refunded": a.refunds(), "marked": site.state(b) == "marked",
                "marked_after_s": round(marked_after, 1)}
    finally:
        a.close()
        b.close()


def play_solo(p: Person, game_id: str, draws: int) -> None:
    """Play a game of Play now on the page's socket: ``draws`` stock turns, then give up."""
    p.send("join", {"id": game_id, "v": 0, "cid": f"g-{p.login}"})
    p.until(lambda m: m["t"] == "game")
    for n in range(draws + 1):
        p.ack += 1
        ack = p.ack
        p.send("giveup" if n == draws else "stock", {"ack": ack})
        p.until(lambda m, ack=ack: m["d"].get("ack") == ack if isinstance(m.get("d"), dict) else False)


def playnow_marked_host(site: Site, rng: random.Random) -> dict[str, Any]:
    h, c, d = site.person("host"), site.person("taker"), site.person("later")
    for p in (h, c, d):
        p.open()
    try:
        def start(p: Person) -> dict[str, Any]:
            answer = p.http.post(f"/api/playnow/{FORMAT}", data={"csrf": p.csrf()},
                                 headers={"accept": "application/json"})
            return dict(answer.json())

        first = start(h)
        play_solo(h, first["game_id"], 3)
        second = start(h)
        play_solo(h, second["game_id"], 3)
        taken = start(c)
        if taken.get("id") != first.get("id"):
            return {"error": f"the challenger was dealt {taken.get('role')} {taken.get('id')}"}
        c.send("join", {"id": taken["game_id"], "v": 0, "cid": f"g-{c.login}"})
        c.until(lambda m: m["t"] == "game")
        c.send("lobby", {})  # the page shows the lobby too: where Play now's news come
        c.until(lambda m: m["t"] == "lobby")
        before = c.rating()
        status = site.mark(h)
        told = c.until(lambda m: m["t"] == "playnow", 20)["d"]
        c.ack += 1
        c.send("giveup", {"ack": c.ack})
        time.sleep(2.0)
        states = {g["id"]: g["state"] for g in c.http.get("/api/playnow").json()["games"]}
        later = start(d)
        return {"mark": status, "told": told.get("state"), "taken_state": states.get(first["id"]),
                "rating_before": before, "rating_after": c.rating(), "later_role": later.get("role"),
                "later_dealt_closed": later.get("id") == second.get("id")}
    finally:
        for p in (h, c, d):
            p.close()


def run_kind(site: Site, kind: str, matches: int, seed: int) -> dict[str, Any]:
    rng = random.Random(f"{seed}:{kind}")
    if kind == "farm-quit":
        return farm(site, matches, "quit", False, rng)
    if kind == "farm-effort":
        return farm(site, matches, "effort", False, rng)
    if kind == "farm-rotate":
        return farm(site, matches, "quit", True, rng)
    if kind == "launder":
        return launder(site, max(3, matches // 2 + 2), rng)
    if kind == "rematch-after-mark":
        return rematch_after_mark(site, rng)
    if kind == "puppet-self-mark":
        return puppet_self_mark(site, rng)
    if kind == "playnow-marked-host":
        return playnow_marked_host(site, rng)
    return mark_mid_match(site, rng)


def verdict(kind: str, r: dict[str, Any]) -> str:
    if "error" in r:
        return f"stopped: {r['error']}"
    if kind.startswith("farm"):
        gain = r["after"] - r["before"]
        # a place among players all still at 1500 says nothing: a top-10 place counts once something was won
        ok = gain < 100 and (gain <= 0 or r["place"] is None or r["place"] > 10)
        return f"{'held' if ok else 'BROKEN'}: +{gain:.0f} in {r['matches']} matches"
    if kind == "launder":
        owed = max(0.0, r["lost_to_b"] - r["won_from_b"])
        ok = r["refunded"] <= owed + 0.5
        return f"{'held' if ok else 'BROKEN'}: refunded {r['refunded']:.0f}, genuinely lost {owed:.0f}"
    if kind == "puppet-self-mark":
        owed = max(0.0, r["lost_to_b"] - r["won_from_b"])
        ok = r["marked"] and r["refunded"] <= owed + 0.5
        return (f"{'held' if ok else 'BROKEN'}: marked {r['marked']} after {r['marked_after_s']} s, refunded "
                f"{r['refunded']:.0f}, genuinely lost {owed:.0f}")
    if kind == "playnow-marked-host":
        ok = (r["taken_state"] == "void" and r["rating_after"] == r["rating_before"]
              and not r["later_dealt_closed"])
        return (f"{'held' if ok else 'BROKEN'}: the taken match {r['taken_state']} (told {r['told']}), rating "
                f"{r['rating_before']:.0f} -> {r['rating_after']:.0f}, the closed one dealt again "
                f"{r['later_dealt_closed']}")
    if kind == "rematch-after-mark":
        ok = not r["rematch_started"] and not r["challenge_started"]
        return f"{'held' if ok else 'BROKEN'}: rematch started {r['rematch_started']}"
    # the first match's loss comes back with the refund, its win stays; the second match's loss never counts
    owed = max(r["before"], r["after_first"])
    kept = r["after"] - owed
    ok = abs(kept) <= 1.0
    return (f"{'held' if ok else 'BROKEN'}: {r['after']:.0f} at the end where {owed:.0f} is due "
            f"(refunded {r['refunded']:.0f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--matches", type=int, default=8, help="matches of a farming kind (2..30)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", default=None, help="the servers' database (default: an SQLite file)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0",
                        help="the servers' Redis (with it this process may read an SQLite database beside them)")
    parser.add_argument("--processes", type=int, default=1, help="server processes, each on its own port (1..4)")
    args = parser.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not kinds or any(k not in KINDS for k in kinds):
        parser.error(f"--kinds: comma-separated names among {', '.join(KINDS)}")
    processes = min(4, max(1, args.processes))
    if processes > 1 and not args.database_url:
        parser.error("--processes > 1 needs --database-url (PostgreSQL)")
    matches = min(30, max(2, args.matches))
    with tempfile.TemporaryDirectory() as folder:
        database_url = args.database_url or f"sqlite:///{folder}/patience.sqlite3"
        extra = ["--database-url", database_url, "--redis-url", args.redis_url]
        with serving_many(folder, processes, extra) as served:
            site = Site([base for base, _ in served], database_url)
            results: dict[str, dict[str, Any]] = {}
            started = time.monotonic()

            def one(kind: str) -> None:
                try:
                    results[kind] = run_kind(site, kind, matches, args.seed)
                except (RuntimeError, TimeoutError, httpx.HTTPError) as exc:
                    results[kind] = {"error": str(exc)[:200]}

            threads = [threading.Thread(target=one, args=(kind,)) for kind in kinds]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            took = time.monotonic() - started
    print(f"ladder attacks through {processes} `patience serve` process(es) on "
          f"{'PostgreSQL' if 'postgresql' in database_url else 'SQLite'}, {FORMAT}, {took:.0f} s")
    for kind in kinds:
        r = results.get(kind, {"error": "did not run"})
        print(f"{kind:>20}: {verdict(kind, r)}")
        print(f"{'':>20}  {json.dumps(r, sort_keys=True)[:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
