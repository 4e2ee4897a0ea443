"""The win chance's honesty and cost: a calibration table on positions of hint-player games, the Brier
score, the CPU of a game's graph, and the every-card-known verdicts against ``patience solve``.

    nice -n 10 python3 benchmarks/win_chance.py [--games reloaded=400,teppich=400,faecher=300]
        [--samples 12] [--first-seed 900001] [--graphs 3] [--graph-samples 8] [--graph-budget 40]
        [--save FILE] [--jobs N]
    python3 benchmarks/win_chance.py --rows FILE... [--share]       # the tables of saved positions
    python3 benchmarks/win_chance.py --rows TUNE.jsonl --fit-priors  # fit the priors (tuning deals only)

1. **Calibration.** Each deal (seeds from ``--first-seed``, apart from the hint's tuning on seeds 1..1,000)
   is played by the hint player and made into a record (``benchmarks/analysis.py``), and gives **at most one
   position**: the positions of one game share its outcome, so a second position of a deal is hardly a
   second test, while a position's prediction costs as much in a deal of its own (a deal's game costs a
   fraction of one prediction). Its positions fall into *stretches*, the positions between two cards turned
   up (a face-down card, or a stock card seen for the first time), which show the player the same cards.
   A stretch number is drawn uniformly among those a game of the deal can have (its unseen cards, plus
   one), seeded by the game and the deal and never by how the game goes on; if the game has that stretch,
   one of its positions where the game is not over is drawn at random. For it, the win chance is
   predicted by :func:`patience.solve.chance.win_chances` (``--samples`` sampled deals, no time budget;
   the calibrated estimate, under the priors fitted on tuning deals, :mod:`patience.solve.calibration`),
   then the hint player plays **the real deal** on from that position and its result is the observation:
   the very player of the predictions' play-outs (:class:`patience.solve.chance.HintPlayer`, each hint
   capped alike). Printed: the table by decile of the predicted chance (positions, the distinct games they
   come from, mean predicted, observed win rate, the difference with its 95 % interval, clustered by game
   where rows saved by an older run hold several positions of a game), the Brier score (and that of
   always predicting the observed base rate, for scale), per game and pooled.
2. **Verdicts.** The every-card-known verdicts of :func:`patience.solve.analysis.analyse` (the game's
   record, default budgets) at the same positions, and in the first ``--verdict-deals`` deals of each game
   at up to :data:`VERDICT_POSITIONS` more positions spread evenly over the game, against a search of each
   position by the function ``patience solve --position`` runs (:func:`patience.solve.solve`, 10 s,
   128 MB): agreeing, disagreeing, undecided.
3. **Cost.** ``--graphs`` games a game are given their whole graph (every position and action,
   ``--graph-samples`` samples, no budget): CPU seconds a game at the 50th and 95th percentile, play-outs;
   the engine's moves a second (``benchmarks/engine.py``) beside. With ``--graph-budget S``, the same games
   again the server's way (S CPU seconds, up to 32 samples a position): the samples each position reached.

Targets (issue 36): in every decile with at least 50 positions the predicted and the observed rate differ by
at most 5 points; a game's graph in at most 60 s of CPU at the 95th percentile.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from analysis import engine_speed, game_record, percentile
from patience.games import get_game
from patience.solve import Budget, Status, solve
from patience.solve.analysis import analyse
from patience.solve.calibration import Prior, fit, prior_for, priors_path, variant
from patience.solve.chance import DEFAULT_SAMPLES, MAX_BUDGET_S, HintPlayer, estimator, win_chances, with_history

GAMES: dict[str, tuple[str, str, dict[str, Any], str]] = {
    # short name: label, game, options, engine.py's label
    "reloaded": ("Solitaire Reloaded", "reloaded", {}, "Solitaire Reloaded"),
    "teppich": ("Teppich waste", "teppich", {"waste": True}, "Teppich waste"),
    "faecher": ("Der Fächer", "faecher", {}, "Der Fächer"),
}
Z95 = 1.959964
VERDICT_POSITIONS = 10  # positions of a deal whose every-card-known verdict is checked


def stretches(reals: list[Any]) -> list[list[int]]:
    """The positions of a game in stretches: consecutive positions whose unseen cards (which cards, and how
    many of them lie in the stock) are the same, i.e. no card was turned up between them."""
    from patience.solve.unseen import unseen

    out: list[list[int]] = []
    last: Any = None
    for i, state in enumerate(reals):
        cards, in_stock = unseen(state)
        seen = (tuple(cards), in_stock)
        if seen != last:
            out.append([])
            last = seen
        out[-1].append(i)
    return out


def drawn(reals: list[Any], rng: random.Random) -> list[int]:
    """At most one position of a deal, drawn without a look at how its game goes on: a stretch number ``k``
    uniform among those a game of this deal can have (its unseen cards at the deal, plus one: each stretch
    after the first begins with a card turned up), then, if the game has a ``k``-th stretch, one of its
    positions where the game is not over, at random (``rng``: seeded by the game and deal). Every stretch of
    every game is so drawn with the same chance, whatever comes after it, and the positions of one deal
    never share an outcome."""
    from patience.solve.unseen import unseen

    k = rng.randrange(len(unseen(reals[0])[0]) + 1)
    parts = stretches(reals)
    if k >= len(parts):
        return []
    open_ = [i for i in parts[k] if not reals[i].is_won()]
    return [rng.choice(open_)] if open_ else []


def positions_of(record: dict[str, Any]) -> list[Any]:
    """The real positions of a record (its moves only: the hint player neither undoes nor gives up except at
    the end), each with its move stack."""
    from patience.session import ManualClock, Session

    session = Session(record["game"], record["seed"], record.get("options", {}), clock=ManualClock())
    out = [with_history(session.state)]
    for action in record["actions"]:
        if action["m"] == "giveup":
            break
        session.play(action["m"])
        out.append(with_history(session.state))
    return out


@dataclass
class DealPositions:
    """One deal's share of the calibration (and of the verdicts' check): the positions drawn, as saved."""

    rows: list[dict[str, Any]]
    agree: int = 0
    disagree: int = 0
    undecided: int = 0
    disagreements: list[str] = field(default_factory=list)
    cpu: float = 0.0  # CPU seconds of the process that did it


def deal_positions(game: str, options: dict[str, Any], player: str, samples: int, verdicts: bool,
                   spread_below: int, seed: int) -> DealPositions:
    """The position drawn of deal ``seed``'s game (at most one), predicted and then played out on the real
    deal; with ``verdicts``, its every-card-known verdict against a search of it, and for a seed below
    ``spread_below`` those of up to :data:`VERDICT_POSITIONS` more positions of the game, spread evenly."""
    started = time.thread_time()
    record = game_record(game, options, seed, player)
    reals = positions_of(record)
    picked = drawn(reals, random.Random(f"{game}/{seed}"))  # at most one position of a deal
    chances = win_chances(record, budget_s=MAX_BUDGET_S, samples=samples, seed=seed, positions=picked)
    real = HintPlayer(game)  # the very player of the predictions' play-outs, on the real deal
    out = DealPositions([])
    for i in picked:
        p = chances.positions[i]
        if p.chance is None or p.end is not None:
            continue
        out.rows.append({"game": game, "player": player, "seed": seed, "position": i, "won": p.won,
                         "samples": p.samples, "chance": p.chance, "observed": real.wins(reals[i]),
                         "design": "deal"})
    if verdicts:
        analysis = analyse(record)
        checked = set(picked)
        if seed < spread_below:
            open_ = [i for i, state in enumerate(reals) if not state.is_won()]
            checked.update(open_[::max(1, -(-len(open_) // VERDICT_POSITIONS))])
        for i in sorted(checked):
            verdict = analysis.positions[i].verdict
            found = solve(reals[i], Budget(seconds=10.0, memory_mb=128.0)).status
            if verdict == "unknown" or found is Status.UNKNOWN:
                out.undecided += 1
            elif (verdict == "winnable") == (found is Status.WON):
                out.agree += 1
            else:
                out.disagree += 1
                out.disagreements.append(f"  disagree: {game} seed {seed} position {i}: analyse {verdict}, "
                                         f"solve {found.value}")
    out.cpu = time.thread_time() - started
    return out


def difference(rows: list[tuple[float, bool, Any]]) -> tuple[float, float]:
    """The mean of observed minus predicted over ``rows`` and the half width of its 95 % interval, clustered
    by the game each row comes from (rows of one game share its outcome, so they count as one test, weighed
    by their number): the sandwich estimate with the small-sample factor G / (G - 1); inf for one game."""
    n = len(rows)
    mean = sum(o - p for p, o, _ in rows) / n
    sums: dict[Any, float] = {}
    for p, o, g in rows:
        sums[g] = sums.get(g, 0.0) + (o - p - mean)
    g = len(sums)
    if g < 2:
        return mean, math.inf
    variance = g / (g - 1) * sum(s * s for s in sums.values()) / (n * n)
    return mean, Z95 * math.sqrt(variance)


def table(rows: list[tuple[float, bool, Any]], title: str) -> None:
    """The calibration table of ``rows`` (predicted, observed, the game it comes from). ``games``: how many
    distinct games a decile's positions come from; the difference's 95 % interval is clustered by game."""
    if not rows:
        return
    base = sum(o for _, o, _ in rows) / len(rows)
    brier = sum((p - o) ** 2 for p, o, _ in rows) / len(rows)
    base_brier = sum((base - o) ** 2 for _, o, _ in rows) / len(rows)
    print(f"{title}: {len(rows)} positions of {len({g for _, _, g in rows})} games, observed win rate {base:.3f}, "
          f"Brier score {brier:.4f} (always {base:.3f}: {base_brier:.4f})")
    print(f"  {'decile':<10} {'positions':>9} {'games':>6} {'predicted':>9} {'observed':>9} {'diff pts':>8} "
          f"{'95 % interval':>16}")
    worst, where, clearly_off = 0.0, "", []
    for d in range(10):
        lo, hi = d / 10, (d + 1) / 10
        bin_ = [(p, o, g) for p, o, g in rows if lo <= p < hi or (d == 9 and p == 1.0)]
        if not bin_:
            continue
        pred = sum(p for p, _, _ in bin_) / len(bin_)
        obs = sum(o for _, o, _ in bin_) / len(bin_)
        diff, half = difference(bin_)
        interval = "" if math.isinf(half) else f"{100 * (diff - half):+.1f}..{100 * (diff + half):+.1f}"
        if len(bin_) >= 50 and abs(100 * diff) >= worst:
            worst, where = abs(100 * diff), f"{lo:.1f}-{hi:.1f}: {len(bin_)} positions, 95 % interval {interval}"
        if len(bin_) >= 50 and abs(diff) - half > 0.05:
            clearly_off.append(f"{lo:.1f}-{hi:.1f}")
        print(f"  {lo:.1f}-{hi:.1f}    {len(bin_):>9} {len({g for _, _, g in bin_}):>6} {pred:>9.3f} {obs:>9.3f} "
              f"{100 * diff:>+8.1f} {interval:>16}{'' if len(bin_) >= 50 else '  (fewer than 50)'}")
    print(f"  largest difference in a decile with >= 50 positions: {worst:.1f} points ({where}) (target <= 5)")
    print(f"  deciles off by more than 5 points beyond the noise (the whole interval past 5): "
          f"{', '.join(clearly_off) or 'none'}")


def fit_priors(saved: list[dict[str, Any]]) -> None:
    """Fit each game's prior of positions' chances (:mod:`patience.solve.calibration`) on the saved positions
    of hint-player games and write them where the win chance reads them. Only tuning deals may be used: the
    deals from 900,001 are the ones this benchmark measures the calibration on."""
    if any(r["seed"] >= 900_001 for r in saved):
        sys.exit("--fit-priors: these rows hold deals from 900001 on, which the calibration is measured on; "
                 "fit on tuning deals (seeds below 900001) only")
    path = priors_path()
    priors = json.loads(path.read_text()) if path.exists() else {}
    for label, game, options, _ in GAMES.values():
        mine = [r for r in saved if r["game"] == game and r.get("player", "hint") == "hint"]
        if not mine:
            continue
        seeds = sorted({r["seed"] for r in mine})
        name = variant(game, get_game(game).deal(1, options).options)
        weights = fit((r["won"], r["samples"]) for r in mine)
        fitted_on = f"{len(mine)} positions of hint-player games, seeds {seeds[0]}..{seeds[-1]}"
        priors[name] = Prior(tuple(weights), len(mine), fitted_on).to_dict()
        print(f"{label}: {name}: {fitted_on}")
        for won in range(0, 13, 2):
            mean, low, high = Prior(tuple(weights)).estimate(won, 12)
            print(f"  {won:2d} of 12 -> {mean:.3f} ({low:.3f}..{high:.3f})")
    path.write_text(json.dumps(priors, indent=1, sort_keys=True) + "\n")
    print(f"written: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", default="reloaded=400,teppich=400,faecher=300",
                        help="deals a game, at most one position each (default reloaded=400,teppich=400,faecher=300: "
                             "some 1,000 positions, 13 min of CPU)")
    parser.add_argument("--samples", type=int, default=12, help="sampled deals a predicted position (default 12)")
    parser.add_argument("--first-seed", type=int, default=900_001, help="the first seed (default 900001)")
    parser.add_argument("--graphs", type=int, default=3, help="whole graphs timed a game (default 3)")
    parser.add_argument("--graph-samples", type=int, default=8, help="samples a position of a timed graph")
    parser.add_argument("--graph-budget", type=float, metavar="S",
                        help="also give each timed game's graph the server's way: S CPU seconds (the server's "
                             "chance stage has 40) and up to 32 samples a position; print the samples reached")
    parser.add_argument("--verdict-deals", type=int, default=30,
                        help=f"deals a game whose every-card-known verdicts are checked at up to {VERDICT_POSITIONS} "
                             "positions more than the one drawn (default 30)")
    parser.add_argument("--no-verdicts", action="store_true", help="skip the every-card-known verdicts")
    parser.add_argument("--player", default="hint", choices=("hint", "greedy"),
                        help="who plays the games the positions are drawn from (default hint; the predictions are "
                             "the hint player's chances all the same)")
    parser.add_argument("--save", metavar="FILE", help="write each position's figures as JSON lines here")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes the calibration's deals are spread over (default: the machine's cores; each "
                             "process keeps its own memory of the hints' lines, so a rare position may differ from "
                             "one process's run)")
    parser.add_argument("--rows", nargs="+", metavar="FILE",
                        help="print the tables of positions saved by --save (of one or more runs), run nothing; "
                             "the predictions are made again from each position's samples won, by the estimate "
                             "the code has now")
    parser.add_argument("--share", action="store_true",
                        help="with --rows: predict the share of samples won instead (no calibration)")
    parser.add_argument("--fit-priors", action="store_true",
                        help="with --rows of tuning deals (seeds below 900001): fit each game's prior of "
                             "positions' chances on them and write src/patience/data/chance_priors.json")
    args = parser.parse_args()
    if args.rows:
        saved = [json.loads(line) for name in args.rows for line in Path(name).read_text().splitlines() if line]
        if args.fit_priors:
            fit_priors(saved)
            return
        everything: list[tuple[float, bool, Any]] = []
        for label, game, options, _ in GAMES.values():
            estimate = estimator(None if args.share else prior_for(game, get_game(game).deal(1, options).options))
            for player in ("hint", "greedy"):
                mine = [r for r in saved if r["game"] == game and r.get("player", "hint") == player]
                rows = [(estimate(r["won"], r["samples"])[0], bool(r["observed"]), (game, r["seed"])) for r in mine]
                table(rows, f"{label}, {player} player's games ({len({r['seed'] for r in mine})} deals)")
                if player == "hint":
                    everything.extend(rows)
        table(everything, "All games, hint player's games")
        return
    counts = {name: int(n) for name, n in (part.split("=") for part in args.games.split(","))}
    pooled: list[tuple[float, bool, Any]] = []
    agree = disagree = undecided = 0
    for name, deals in counts.items():
        label, game, options, engine_label = GAMES[name]
        rows: list[tuple[float, bool, Any]] = []
        cpu = 0.0
        seeds = range(args.first_seed, args.first_seed + deals)
        work = functools.partial(deal_positions, game, options, args.player, args.samples, not args.no_verdicts,
                                 args.first_seed + args.verdict_deals)
        with contextlib.ExitStack() as stack:
            if args.jobs > 1:  # the deals are independent: spread over processes, read back in the seeds' order
                pool = stack.enter_context(ProcessPoolExecutor(args.jobs))
                results: Iterator[DealPositions] = pool.map(work, seeds)
            else:
                results = map(work, seeds)
            for seed, found in zip(seeds, results, strict=True):
                cpu += found.cpu
                agree, disagree, undecided = agree + found.agree, disagree + found.disagree, undecided + found.undecided
                for line in found.disagreements:
                    print(line, file=sys.stderr)
                for saved in found.rows:
                    rows.append((saved["chance"], saved["observed"], (game, seed)))
                    if args.save:
                        with open(args.save, "a") as out:
                            out.write(json.dumps(saved) + "\n")
        if not deals:
            continue
        print(f"{label}: {deals} deals (seeds {args.first_seed}..{args.first_seed + deals - 1}), "
              f"{cpu:.0f} s of CPU", flush=True)
        table(rows, label)
        pooled.extend(rows)
    table(pooled, "All games")
    if not args.no_verdicts:
        print(f"every-card-known verdicts against patience solve, at the positions drawn and at up to "
              f"{VERDICT_POSITIONS} more of each of the first {args.verdict_deals} deals' games: {agree} agree, "
              f"{disagree} disagree, {undecided} undecided")
    if args.graphs:
        print(f"\nA game's whole graph ({args.graph_samples} samples a position, every action judged):")
        print(f"{'game':<20} {'games':>5} {'actions':>9} {'p50 s':>7} {'p95 s':>7} {'max s':>7} "
              f"{'play-outs':>9} {'engine moves/s':>15}")
        for name in counts:
            label, game, options, engine_label = GAMES[name]
            seconds, actions, playouts = [], [], []
            for seed in range(args.first_seed, args.first_seed + args.graphs):
                record = game_record(game, options, seed, "hint")
                chances = win_chances(record, budget_s=MAX_BUDGET_S, samples=args.graph_samples, seed=seed)
                seconds.append(chances.seconds)
                actions.append(len(chances.actions))
                playouts.append(chances.playouts)
            speed = engine_speed(engine_label, 1.0)
            print(f"{label:<20} {len(seconds):>5} {min(actions):>4}-{max(actions):<4} "
                  f"{percentile(seconds, 0.5):>7.1f} {percentile(seconds, 0.95):>7.1f} {max(seconds):>7.1f} "
                  f"{statistics.median(playouts):>9.0f} {speed:>15,.0f}", flush=True)
        if args.graph_budget:
            print(f"\nThe server's way ({args.graph_budget:g} s of CPU, up to {DEFAULT_SAMPLES} samples a position): "
                  "samples a position reached, the fewest and the median over the game's positions")
            print(f"{'game':<20} {'seed':>7} {'CPU s':>6} {'complete':>8} {'fewest':>6} {'median':>6}")
            for name in counts:
                label, game, options, _ = GAMES[name]
                for seed in range(args.first_seed, args.first_seed + args.graphs):
                    record = game_record(game, options, seed, "hint")
                    chances = win_chances(record, budget_s=args.graph_budget, samples=DEFAULT_SAMPLES, seed=seed)
                    reached = [p.samples for p in chances.positions if p.end is None]
                    print(f"{label:<20} {seed:>7} {chances.seconds:>6.1f} {chances.complete!s:>8} "
                          f"{min(reached, default=0):>6} {statistics.median(reached or [0]):>6.0f}", flush=True)


if __name__ == "__main__":
    main()
