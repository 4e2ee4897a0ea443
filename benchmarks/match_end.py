"""Benchmark of a rated match's end in the database: what writing a result costs with the ladder's rules.

A duel's end is written by ``patience.server.storage.league.finish_match`` in the group writer's
transaction: the match's row, the ladder's facts (``patience.server.storage.ladder.facts``: the fair-play
standing of both players, whether they are linked, what each already took from the other in a day and a
week, their rated matches, their give-ups of the day), the ledger, both ratings and history lines, and the
series check. This benchmark makes ``--players`` accounts, plays ``--ends`` matches between random pairs of
them in memory (both sides make a real attempt, so every rule reads its facts), and then writes each end in
a transaction of its own, as the server does for a match ending alone, timing it and counting the SQL
statements it sends (an SQLAlchemy event); the facts' statements are counted apart. It prints the engine's
moves/s beside the figures (``benchmarks/engine.py``'s playouts of Solitaire Reloaded for one second), as
the machine's speed at the time.

    python benchmarks/match_end.py                          # SQLite (a file in a temporary folder)
    python benchmarks/match_end.py --database-url postgresql+psycopg://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import run as engine_run
from patience.duel import Format, Match, Player
from patience.games import DRAW, REDEAL
from patience.server.storage import ladder, league
from patience.server.storage.store import Store, UserRow, name_key
from patience.session import ManualClock

FMT = Format("reloaded", None, 300)


def attempt(match: Match, clock: ManualClock, side: int, rng: random.Random) -> None:
    """A real attempt of one side: 12 different real moves (stock turns between), 2 s apart, then give up."""
    session = match.sessions[side]
    played: set[str] = set()
    for _ in range(60):
        if session.is_over or len(played) >= 12:
            break
        clock.advance(2.0)
        state = session.state
        fresh = [m for m in state.useful_moves() if m not in (DRAW, REDEAL) and str(m) not in played]
        if fresh:
            move = rng.choice(fresh)
            played.add(str(move))
        elif state.check(DRAW) is None:
            move = DRAW
        elif state.check(REDEAL) is None:
            move = REDEAL
        else:
            break
        match.act(side, str(move))
    if not session.is_over:
        match.act(side, "giveup")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None, help="the database (default: an SQLite file of its own)")
    parser.add_argument("--ends", type=int, default=200, help="match ends to write")
    parser.add_argument("--players", type=int, default=40, help="accounts the matches are between")
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    url = args.database_url or f"sqlite:///{Path(folder.name) / 'ends.sqlite3'}"
    store = Store(url)
    store.migrate()
    tag = secrets.token_hex(3)
    ids = [f"e{tag}{n}" for n in range(args.players)]
    with store.engine.begin() as c:
        c.execute(insert(UserRow), [{"id": u, "login": u, "name": u, "name_key": name_key(u), "password_hash": "-",
                                     "created_ms": 0} for u in ids])
    rng = random.Random(2026)
    statements = {"all": 0, "facts": 0}
    in_facts = [False]

    @event.listens_for(store.engine, "before_cursor_execute")
    def _count(*_: Any) -> None:
        statements["all"] += 1
        statements["facts"] += in_facts[0]

    facts = ladder.facts

    facts_ms: list[float] = []

    def counted_facts(*a: Any, **k: Any) -> Any:
        in_facts[0] = True
        started = time.perf_counter()
        try:
            return facts(*a, **k)
        finally:
            in_facts[0] = False
            facts_ms.append((time.perf_counter() - started) * 1000)

    ladder.facts = counted_facts  # type: ignore[assignment]
    spent: list[float] = []
    for n in range(args.ends):
        a, b = rng.sample(ids, 2)
        players = (Player(a, a, league.load_rating(store.engine, a, "reloaded")),
                   Player(b, b, league.load_rating(store.engine, b, "reloaded")))
        clock = ManualClock()
        match = Match(f"m{tag}{n}", FMT, rng.randrange(1, 10**6), "n", clock=clock, players=players)
        attempt(match, clock, 0, rng)
        attempt(match, clock, 1, rng)
        with store.engine.begin() as c:
            league.insert_match(c, match)
        result, after = match.finish()
        before = dict(statements)
        started = time.perf_counter()
        with store.engine.begin() as c:
            league.finish_match(c, match, result, after)
        spent.append((time.perf_counter() - started) * 1000)
        if n == 0:
            first = {k: statements[k] - before[k] for k in statements}
    ladder.facts = facts  # type: ignore[assignment]
    per_end = {k: v / args.ends for k, v in statements.items()}
    moves_s, _, _ = engine_run("reloaded", {}, 1.0)
    spent.sort()
    print(f"database: {store.engine.dialect.name}; {args.ends} match ends between {args.players} accounts")
    print(f"{'ms/end p50':>11} {'p95':>7} {'max':>7} {'facts ms p50':>13} {'statements/end':>15} "
          f"{'of them facts':>14} {'engine moves/s':>15}")
    print(f"{statistics.median(spent):>11.2f} {spent[int(0.95 * (len(spent) - 1))]:>7.2f} {spent[-1]:>7.2f} "
          f"{statistics.median(facts_ms):>13.2f} {per_end['all']:>15.1f} {per_end['facts']:>14.1f} {moves_s:>15,.0f}")
    print(f"(the first end: {first['all']} statements, {first['facts']} of them the facts')")
    store.close()
    folder.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
