"""The analysis of a finished game with every card known: CPU seconds per game, per game and player.

    python3 benchmarks/analysis.py [--deals 30] [--first-seed 900001] [--players hint,greedy]

Each deal is played out by the hint player (and by the greedy player, whose games lose more winnable
deals and so need more searching), made into a game record (a give-up where the player stops short of
the end), and analysed by :func:`patience.solve.analysis.analyse` with the command's default budgets.
Printed per game and player: the games, their actions (fewest-most), won, lost though winnable (the first
losing action found), never winnable, left open; the positions searched a game (median, max), and the
CPU seconds of an analysis at the 50th and 95th percentile and at most. The engine's moves a second
(``benchmarks/engine.py``) are printed beside, for the machine's speed.

Target (issue 36): a typical game (Solitaire Reloaded: 150-250 actions; Teppich and Der Fächer
likewise) analysed in at most 5 s of CPU at the 95th percentile.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from patience.games import get_game
from patience.session import ManualClock, Session
from patience.solve.analysis import DEFAULT_GAME_SECONDS, DEFAULT_POSITION_BUDGET, analyse
from patience.solve.greedy import play_greedy
from patience.solve.hints import play_hints

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # label, game, options, engine.py's label
    ("Solitaire Reloaded", "reloaded", {}, "Solitaire Reloaded"),
    ("Teppich waste", "teppich", {"waste": True}, "Teppich waste"),
    ("Der Fächer", "faecher", {}, "Der Fächer"),
]
HINT_S = {"reloaded": 0.25, "teppich": 1.0, "faecher": 1.0}  # what the server gives a hint


def engine_speed(label: str, seconds: float) -> float:
    """Moves a second of ``benchmarks/engine.py``'s random playouts for its case ``label``."""
    path = Path(__file__).with_name("engine.py")
    spec = importlib.util.spec_from_file_location("engine_benchmark", path)
    assert spec is not None and spec.loader is not None
    engine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(engine)
    for case_label, game, options, _ in engine.CASES:
        if case_label == label:
            return float(engine.run(game, options, seconds)[0])
    raise KeyError(label)


def game_record(game: str, options: dict[str, Any], seed: int, player: str) -> dict[str, Any]:
    """The record of ``player``'s game of deal ``seed``, its moves 100 ms apart, up to where the rules end it,
    given up where the player stops before."""
    state = get_game(game).deal(seed, options)
    _, moves = play_hints(state, budget_s=HINT_S[game]) if player == "hint" else play_greedy(state)
    clock = ManualClock()
    session = Session(game, seed, {**options, "time_limit": 0} if game == "reloaded" else options, clock=clock)
    for move in moves:
        if session.outcome is not None:
            break  # the rules ended the game (no useful move left) where the player would still turn the stock
        clock.advance(0.1)
        session.play(move)
    if session.outcome is None:
        session.give_up()
    return session.record()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=30, help="deals a game and player (default 30)")
    parser.add_argument("--first-seed", type=int, default=900_001, help="the first seed (default 900001)")
    parser.add_argument("--players", default="hint,greedy", help="hint, greedy or both (default)")
    parser.add_argument("--only", help="run only the cases whose name or game contains this")
    parser.add_argument("--engine-seconds", type=float, default=1.0, help="time of each engine figure")
    args = parser.parse_args()
    budget = DEFAULT_POSITION_BUDGET
    print(f"budgets: {DEFAULT_GAME_SECONDS:g} s of CPU a game, {budget.seconds:g} s a position, "
          f"{budget.memory_mb:g} MB; seeds {args.first_seed}..{args.first_seed + args.deals - 1}")
    print(f"{'game':<20} {'player':<7} {'games':>5} {'actions':>11} {'won':>4} {'lost':>5} {'never':>6} {'open':>5} "
          f"{'searched':>9} {'max':>4} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'engine moves/s':>15}")
    for label, game, options, engine_label in CASES:
        if args.only and args.only.lower() not in f"{label} {game}".lower():
            continue
        for player in args.players.split(","):
            seconds: list[float] = []
            actions: list[int] = []
            searched: list[int] = []
            won = lost = never = open_ = 0
            for seed in range(args.first_seed, args.first_seed + args.deals):
                record = game_record(game, options, seed, player)
                started = time.thread_time()
                analysis = analyse(record)
                seconds.append(time.thread_time() - started)
                actions.append(analysis.actions)
                searched.append(analysis.searches)
                if analysis.outcome == "won":
                    won += 1
                elif analysis.never_winnable:
                    never += 1
                elif analysis.first_losing_action is not None:
                    lost += 1
                else:
                    open_ += 1
                    print(f"  open: {game} seed {seed} ({player}): deal {analysis.positions[0].verdict}, "
                          f"range {analysis.first_losing_range}", file=sys.stderr)
            speed = engine_speed(engine_label, args.engine_seconds)
            span = f"{min(actions)}-{max(actions)}"
            print(f"{label:<20} {player:<7} {len(seconds):>5} {span:>11} {won:>4} {lost:>5} "
                  f"{never:>6} {open_:>5} {statistics.median(searched):>9.0f} {max(searched):>4} "
                  f"{percentile(seconds, 0.5):>7.3f} {percentile(seconds, 0.95):>7.3f} {max(seconds):>7.3f} "
                  f"{speed:>15,.0f}", flush=True)


if __name__ == "__main__":
    main()
