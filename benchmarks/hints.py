"""Hints: how long the server's hint takes (p50/p95/max), and how often the hint player wins.

    python3 benchmarks/hints.py [--deals 20] [--only reloaded] [--first-seed 900001]

Latency: per game and variant, deals ``--first-seed``..``--first-seed`` + N - 1 (default 1..N)
are played by following the server's hint (the function behind the hint button,
:func:`patience.server.solo.hints.hint`, with its time cap, counted in CPU time), and every hint is
timed on one thread, as the server's worker thread runs it: its CPU time (what the hint costs the
server, the same on a busy machine) and its wall time (what the player waits on this machine now).
Deals 900001 and up are held apart from those the hints were tuned on (docs/solving.md). The hint
player follows hints without any clock, so its moves are the study's. Win rates: the same deals, the
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


def run_case(game: str, options: dict[str, Any], deals: int, first: int = 1) -> tuple[list[float], list[float], int]:
    """Play deals ``first``..``first + deals - 1`` by the server's hint; return every hint's CPU seconds,
    its wall seconds, and the deals won."""
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session

    times: list[float] = []
    walls: list[float] = []
    won = 0
    for seed in range(first, first + deals):
        session = Session(game, seed, options, clock=ManualClock())
        for _ in range(1500):
            if session.is_over:
                break
            start, cpu = time.perf_counter(), time.thread_time()
            move = hint(session)
            times.append(time.thread_time() - cpu)
            walls.append(time.perf_counter() - start)
            if move is None:
                break
            session.play(move)
        won += session.state.is_won()
    return times, walls, won


def main() -> None:
    from patience.solve.study import wilson

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--only", help="run only the cases whose name or game contains this")
    parser.add_argument("--first-seed", type=int, default=1, help="the first deal (900001: deals held apart)")
    args = parser.parse_args()
    print(f"deals {args.first_seed}..{args.first_seed + args.deals - 1}; CPU time of each hint (wall time)")
    print(f"{'case':<20} {'hints':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'max wall':>9}   "
          "hint player won (95 % Wilson)")
    for name, game, options in CASES:
        if args.only and args.only.lower() not in f"{name} {game}".lower():
            continue
        times, walls, won = run_case(game, options, args.deals, args.first_seed)
        cuts = statistics.quantiles(times, n=20) if len(times) > 1 else times * 19
        low, high = wilson(won, args.deals)
        print(f"{name:<20} {len(times):>6} {1000 * statistics.median(times):>8.1f} {1000 * cuts[18]:>8.1f} "
              f"{1000 * max(times):>8.1f} {1000 * max(walls):>9.1f}   "
              f"{won}/{args.deals} = {100 * won / args.deals:.1f} % ({100 * low:.1f} % – {100 * high:.1f} %)",
              flush=True)


if __name__ == "__main__":
    main()
