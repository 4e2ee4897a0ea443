"""Solver speed: per game and variant, how many deals are resolved (won or proved unwinnable)
within the budget, median/p95/max time per deal, positions searched per second, peak memory;
how many base-game Teppich deals a study goes through per second; and the CPU time of
``patience solve`` on an easy deal of each game, start-up and imports included.

    python3 benchmarks/solvers.py [--quick] [--deals 1000] [--budget-s 10] [--only faecher]
    python3 benchmarks/solvers.py --only reloaded --budget-nodes 15000000   # a shared machine: see below

Each game runs in a process of its own, one deal after the other (so that times are one
core's and the peak memory is that game's). Seeds 1..1000 for every game; ``--quick`` takes
Solitaire Reloaded on seeds 1..200 only.

The budget is CPU time of the searching thread (as every solver's budget is), so a deal's search
gets as many positions on a machine others share as on a quiet one, and the same deals are
resolved. ``--budget-nodes N`` bounds the positions instead (no time bound: Solitaire Reloaded's
hard deals search about 1.5 million positions a second on one core of the reference machine, so
15 million stand for 10 s), and the times shown are then the CPU time each deal took.

Targets: Teppich and Der Fächer (one pass too) 100 % resolved, median < 50 ms; Solitaire
Reloaded ≥ 99.5 % resolved within 10 s per deal (seeds 1..1000), median < 100 ms, peak memory
no larger than needed (< 1 GB);
10**6 base-game Teppich deals studied in < 10 s; ``patience solve`` of an easy deal well under
100 ms of CPU beyond the interpreter's own start.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("Teppich 4x5", "teppich", {}),
    ("Teppich 5x6", "teppich", {"rows": 5, "cols": 6}),
    ("Teppich waste", "teppich", {"waste": True}),
    ("Teppich 5x6 waste", "teppich", {"rows": 5, "cols": 6, "waste": True}),
    ("Der Fächer", "faecher", {}),
    ("Der Fächer one pass", "faecher", {"passes": 1}),
    ("Solitaire Reloaded", "reloaded", {}),
]


def run_case(game: str, options: dict[str, Any], seeds: range, budget_s: float,
             budget_nodes: int | None = None) -> dict[str, Any]:
    """Solve the seeds one by one in this process; return the figures (CPU times under a node budget)."""
    from patience.solve import Budget, Status, solve_deal

    budget = Budget(seconds=budget_s) if budget_nodes is None else Budget(seconds=None, nodes=budget_nodes)
    clock = time.perf_counter if budget_nodes is None else time.process_time

    times: list[float] = []
    nodes = 0
    counts = {s: 0 for s in Status}
    unknown: list[int] = []
    for seed in seeds:
        start = clock()
        solution = solve_deal(game, seed, options, budget)
        times.append(clock() - start)
        nodes += solution.nodes
        counts[solution.status] += 1
        if solution.status is Status.UNKNOWN:
            unknown.append(seed)
    times.sort()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "deals": len(times),
        "won": counts[Status.WON],
        "unwinnable": counts[Status.UNWINNABLE],
        "unknown": unknown,
        "median": statistics.median(times),
        "p95": times[min(len(times) - 1, int(0.95 * len(times)))],
        "max": times[-1],
        "nodes_per_s": nodes / sum(times) if sum(times) else 0.0,
        "peak_mb": peak_mb,
    }


def _child(args: tuple[str, dict[str, Any], range, float, int | None]) -> dict[str, Any]:
    return run_case(*args)


def carpet_throughput(deals: int) -> tuple[float, float]:
    """Seconds for a study of ``deals`` base-game deals on every core, and the win rate."""
    from patience.solve.study import study

    start = time.perf_counter()
    result = study("teppich", {}, deals, progress=None)
    return time.perf_counter() - start, result.players["solver"].rate()


EASY = (("faecher", "7"), ("teppich", "7"), ("reloaded", "3"))  # deals each game's solver decides at once


def _child_cpu(command: list[str], runs: int) -> float:
    """The least CPU time (user + system) of ``runs`` runs of ``command``: the figure least moved by other work."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: the bytecode cached (apart, in a folder of its own)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(os.environ.get("TMPDIR", "/tmp"), "patience-bench-pycache")
    best = float("inf")
    for _ in range(runs + 1):  # the first run writes the bytecode
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def solve_startup(runs: int = 10) -> None:
    """``patience solve GAME --seed N`` on an easy deal: CPU of the whole command and of a bare interpreter."""
    bare = _child_cpu([sys.executable, "-c", "pass"], runs)
    command = [sys.executable, "-c", "import sys; from patience.cli import main; sys.exit(main())", "solve"]
    for game, seed in EASY:
        cpu = _child_cpu([*command, game, "--seed", seed], runs)
        print(f"patience solve {game} --seed {seed}: {1000 * cpu:.0f} ms CPU "
              f"({1000 * (cpu - bare):.0f} ms beyond the bare interpreter's {1000 * bare:.0f} ms; least of {runs})",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Solitaire Reloaded on seeds 1..200 only")
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--budget-s", type=float, default=10.0)
    parser.add_argument("--budget-nodes", type=int, default=None, help="bound positions, not time (CPU times shown)")
    parser.add_argument("--only", help="only the games whose label contains this text")
    parser.add_argument("--carpet-deals", type=int, default=1_000_000)
    parser.add_argument("--startup", action="store_true", help="only the CPU time of 'patience solve' on easy deals")
    args = parser.parse_args()
    if args.startup:
        solve_startup()
        return 0

    print(f"{'game':<20} {'deals':>6} {'resolved':>9} {'won':>6} {'lost':>6} {'median':>9} {'p95':>9} "
          f"{'max':>8} {'nodes/s':>9} {'peak MB':>8}")
    ctx = multiprocessing.get_context("spawn")
    for label, game, options in CASES:
        if args.only and args.only.lower() not in label.lower():
            continue
        deals = 200 if args.quick and game == "reloaded" else args.deals
        with ctx.Pool(1) as pool:
            r = pool.apply(_child, ((game, options, range(1, deals + 1), args.budget_s, args.budget_nodes),))
        resolved = r["won"] + r["unwinnable"]
        print(f"{label:<20} {r['deals']:>6} {100 * resolved / r['deals']:>8.1f}% {r['won']:>6} {r['unwinnable']:>6} "
              f"{1000 * r['median']:>7.1f}ms {1000 * r['p95']:>7.1f}ms {r['max']:>7.2f}s "
              f"{r['nodes_per_s']:>9,.0f} {r['peak_mb']:>8.0f}", flush=True)
        if r["unknown"]:
            shown = " ".join(str(s) for s in r["unknown"][:20])
            print(f"{'':<20} unknown: {shown}{' ...' if len(r['unknown']) > 20 else ''}", flush=True)
    if not args.only or "carpet" in args.only.lower() or "teppich" in args.only.lower():
        seconds, rate = carpet_throughput(args.carpet_deals)
        print(f"base Teppich study: {args.carpet_deals:,} deals in {seconds:.2f} s "
              f"({args.carpet_deals / seconds:,.0f} deals/s, win rate {100 * rate:.3f} %)")
    if not args.only:
        solve_startup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
