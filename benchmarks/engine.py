"""Engine speed: random legal playouts per second per game (move generation + apply, one core),
and the size of one state in memory.

    python3 benchmarks/engine.py [--seconds 3]

Targets (issue: rules engine): ≥ 100,000 moves/s for Teppich, ≥ 20,000 moves/s for Solitaire
Reloaded and Der Fächer.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from patience.games import get_game

CASES: list[tuple[str, str, dict[str, Any], int]] = [
    # label, game, options, target moves/s
    ("Teppich 4x5", "teppich", {}, 100_000),
    ("Teppich 5x6", "teppich", {"rows": 5, "cols": 6}, 100_000),
    ("Teppich waste", "teppich", {"waste": True}, 100_000),
    ("Solitaire Reloaded", "reloaded", {}, 20_000),
    ("Der Fächer", "faecher", {}, 20_000),
]
MAX_PLIES = 500  # Klondike and Der Fächer can cycle; a playout stops after this many moves


def deep_size(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes held by ``obj`` and everything it references that is not shared (cards, ints)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, int | bool | type(None) | type):
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, list | tuple | set | frozenset):
        size += sum(deep_size(x, seen) for x in obj)
    for slot in getattr(type(obj), "__slots__", ()):
        if slot != "options" and hasattr(obj, slot):
            size += deep_size(getattr(obj, slot), seen)
    for cls in type(obj).__mro__[1:]:
        for slot in getattr(cls, "__slots__", ()):
            if slot != "options" and hasattr(obj, slot):
                size += deep_size(getattr(obj, slot), seen)
    return size


def run(game: str, options: dict[str, Any], seconds: float) -> tuple[float, float, float]:
    """Random playouts for ``seconds``: moves/s, playouts/s, mean moves per playout."""
    cls = get_game(game)
    rng = random.Random(2026)
    seed = 0
    moves = playouts = 0
    spent = 0.0
    while spent < seconds:
        state = cls.deal(seed, options)  # dealing is not timed: the target is about play
        seed += 1
        start = time.perf_counter()
        legal = state.legal_moves
        apply = state._apply
        choice = rng.choice
        n = 0
        while n < MAX_PLIES:
            options_now = legal()
            if not options_now:
                break
            apply(choice(options_now))
            n += 1
        spent += time.perf_counter() - start
        moves += n
        playouts += 1
    return moves / spent, playouts / spent, moves / playouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game (default 3)")
    args = parser.parse_args()
    print(f"{'game':<20} {'moves/s':>10} {'target':>9} {'playouts/s':>11} {'moves/playout':>14} {'state bytes':>12}")
    for label, game, options, target in CASES:
        per_move, per_playout, mean = run(game, options, args.seconds)
        size = deep_size(get_game(game).deal(1, options))
        verdict = "ok" if per_move >= target else "BELOW"
        print(f"{label:<20} {per_move:>10,.0f} {target:>9,} {per_playout:>11,.0f} {mean:>14.1f} {size:>12,}  {verdict}")


if __name__ == "__main__":
    main()
