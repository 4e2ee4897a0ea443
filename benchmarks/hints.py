"""Hints: how long the server's hint takes (p50/p95/max), and how often the hint player wins.

    python3 benchmarks/hints.py [--deals 20] [--only reloaded]

Latency: per game and variant, deals 1..N are played by following the server's hint (the
function behind the hint button, :func:`patience.server.solo.hints.hint`, with its time cap), and
every hint is timed on one thread, as the server's worker thread runs it (the hint player
follows hints without any clock, so its moves are the study's). Win rates: the same deals, the
hint player's wins with the 95 % Wilson interval (``patience study GAME --players hint`` gives
them for more deals, on every core).

Target (issue: hints): a hint answers in < 300 ms at the 95th percentile on the server.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("Teppich 4x5", "teppich", {}),
    ("Teppich waste", "teppich", {"waste": True}),
    ("Teppich 5x6 waste", "teppich", {"rows": 5, "cols": 6, "waste": True}),
    ("Der Fächer", "faecher", {}),
    ("Solitaire Reloaded", "reloaded", {}),
]


def run_case(game: str, options: dict[str, Any], deals: int) -> tuple[list[float], int]:
    """Play deals 1..``deals`` by the server's hint; return every hint's seconds and the deals won."""
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session

    times: list[float] = []
    won = 0
    for seed in range(1, deals + 1):
        session = Session(game, seed, options, clock=ManualClock())
        for _ in range(1500):
            if session.is_over:
                break
            start = time.perf_counter()
            move = hint(session)
            times.append(time.perf_counter() - start)
            if move is None:
                break
            session.play(move)
        won += session.state.is_won()
    return times, won


def main() -> None:
    from patience.solve.study import wilson

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--only", help="run only the cases whose name or game contains this")
    args = parser.parse_args()
    print(f"{'case':<20} {'hints':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}   hint player won (95 % Wilson)")
    for name, game, options in CASES:
        if args.only and args.only.lower() not in f"{name} {game}".lower():
            continue
        times, won = run_case(game, options, args.deals)
        cuts = statistics.quantiles(times, n=20) if len(times) > 1 else times * 19
        low, high = wilson(won, args.deals)
        print(f"{name:<20} {len(times):>6} {1000 * statistics.median(times):>8.1f} {1000 * cuts[18]:>8.1f} "
              f"{1000 * max(times):>8.1f}   {won}/{args.deals} = {100 * won / args.deals:.1f} % "
              f"({100 * low:.1f} % – {100 * high:.1f} %)", flush=True)


if __name__ == "__main__":
    main()
