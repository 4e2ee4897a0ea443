"""Terminal commands: ``solve`` a deal or a position, ``analyse`` a finished game, ``study`` win rates, keep
``winnable`` seeds."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patience.cli.play import game_options
from patience.errors import BadInputError
from patience.rng import check_seed
from patience.solve.search import Budget, Status

if TYPE_CHECKING:
    from patience.solve.solution import Solution

# what a command needs beyond its arguments is imported by that command: solving an easy deal loads
# neither records nor sessions nor the other games' solvers

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from patience.cli import add_game_arguments

    p = sub.add_parser("solve", help="solve a deal or a position: won (with the moves), unwinnable, or unknown")
    add_game_arguments(p)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--position", metavar="TEXT", help="a position as printed by 'deal' (str of a state)")
    source.add_argument("--record", metavar="FILE", help="a game record: solve from where it stops")
    _budget_arguments(p, seconds=30.0)
    p.add_argument("--save", metavar="FILE", help="write the winning game as a record (needs a seed)")
    p.add_argument("--json", action="store_true", help="the result as JSON")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("analyse", aliases=["analyze"],
                       help="where a game was lost, every card known: each position winnable, unwinnable or unknown")
    p.add_argument("record", metavar="RECORD", nargs="?",
                   help="a record file: a game's, a finished match's (both games) or a past day's deal (every game)")
    p.add_argument("--day", metavar="YYYY-MM-DD",
                   help="instead of a record: analyse on the server's database every game of that UTC day whose deal "
                        "is shown (the matches that ended that day, the games of its deals of the day once it is "
                        "over), through the queue the servers share, and store the results (docs/analysis.md)")
    p.add_argument("--database-url", default=None, metavar="URL",
                   help="with --day: the server's database (default: $PATIENCE_DATABASE_URL, else the SQLite file "
                        "in the per-user data folder)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --day: run on a Dask cluster (dask.distributed scheduler), as studies do")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="with --day and no --scheduler: worker processes on this machine (default: its cores)")
    p.add_argument("--budget-s", type=float, default=20.0, metavar="S",
                   help="CPU seconds the analysis of one game may take in all (default 20; at most 3600)")
    p.add_argument("--position-s", type=float, default=2.0, metavar="S",
                   help="CPU seconds one position's search may take (default 2)")
    p.add_argument("--position-nodes", type=int, default=None, metavar="N",
                   help="positions one search may visit (the same on every machine)")
    p.add_argument("--memory-mb", type=float, default=128.0, metavar="MB",
                   help="bound of a search's transposition table (default 128)")
    p.add_argument("--chance-s", type=float, default=45.0, metavar="S",
                   help="CPU seconds of the win chance with what the player could see, a game (default 45; "
                        "0: none)")
    p.add_argument("--samples", type=int, default=32, metavar="K",
                   help="sampled deals a position of the win chance at most (default 32)")
    p.add_argument("--chance-seed", type=int, default=0, metavar="N",
                   help="the seed of the win chance's sampled deals (default 0)")
    p.add_argument("--json", action="store_true", help="the result as JSON")
    p.set_defaults(func=cmd_analyse)

    p = sub.add_parser("study", help="win rates with 95%% intervals over many deals: solver, greedy and hint player")
    add_game_arguments(p)
    p.add_argument("--deals", type=int, required=True, help="how many deals (seeds from --first-seed on)")
    p.add_argument("--first-seed", type=int, default=1,
                   help="the first seed (default 1); e.g. --first-seed 900001 --deals 1000 plays seeds 900001..901000")
    p.add_argument("--players", default="solver,greedy",
                   help="comma-separated: solver, greedy, hint (follows the hint at every step); default solver,greedy")
    p.add_argument("--workers", type=int, default=None, help="processes to use (default: every core)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask cluster (dask.distributed scheduler)")
    _budget_arguments(p, seconds=10.0)
    p.add_argument("--plot", metavar="FILE.png", help="draw the rate and its interval against the deals")
    p.add_argument("--json", action="store_true", help="the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_study)

    p = sub.add_parser("winnable", help="seeds proved winnable: list, pick one, or extend the shipped list")
    add_game_arguments(p)
    p.add_argument("--pick", action="store_true", help="print one winnable seed, picked at random")
    p.add_argument("--extend", type=int, metavar="N", help="solve further seeds until N more are proved winnable")
    p.add_argument("--scan", type=int, metavar="M", help="with --extend: look at M seeds at most")
    p.add_argument("--file", metavar="FILE", help="the list file to read and extend (default: the shipped one)")
    p.add_argument("--workers", type=int, default=None, help="processes to use when extending")
    _budget_arguments(p, seconds=10.0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_winnable)


def _budget_arguments(p: argparse.ArgumentParser, seconds: float) -> None:
    p.add_argument("--budget-s", type=float, default=seconds, metavar="S",
                   help=f"seconds a search may take, in CPU time of the searching thread, so that the answer "
                        f"does not depend on the machine's load (default {seconds:g})")
    p.add_argument("--budget-nodes", type=int, default=None, metavar="N", help="positions a search may visit")
    p.add_argument("--memory-mb", type=float, default=512.0, metavar="MB",
                   help="bound of the transposition table (default 512)")


def _budget(args: argparse.Namespace) -> Budget:
    if args.budget_s is not None and args.budget_s <= 0:
        raise BadInputError("--budget-s must be more than 0")
    if args.budget_nodes is not None and args.budget_nodes <= 0:
        raise BadInputError("--budget-nodes must be more than 0")
    if args.memory_mb <= 0:
        raise BadInputError("--memory-mb must be more than 0")
    return Budget(args.budget_s, args.budget_nodes, args.memory_mb)


# -- solve ---------------------------------------------------------------------------------------


def cmd_solve(args: argparse.Namespace) -> int:
    from patience.solve.solution import solve

    cls, options = game_options(args)
    budget = _budget(args)
    if args.save and os.path.lexists(args.save) and not Path(args.save).is_file():  # a FIFO would wait for ever
        raise BadInputError(f"--save {args.save}: it exists and is not a regular file")
    if args.position:
        from patience.games import get_game
        from patience.notation import parse_position_text

        position = parse_position_text(args.position)
        if get_game(position["game"]) is not cls:
            raise BadInputError(f"the position is of {position['game']}, not {cls.INFO.id}")
        solution = solve(cls.from_position(position), budget)
    elif args.record:
        from patience.record import load_record, replay

        session = replay(load_record(args.record), check_result=False)
        if session.game_id != cls.INFO.id:
            raise BadInputError(f"the record is of {session.game_id}, not {cls.INFO.id}")
        solution = solve(session.state if session.is_over else session, budget)
        if session.is_over:
            solution.seed = None  # a finished game cannot go on: the line is for the position
    else:
        if args.seed is None:
            raise BadInputError("say which deal: --seed N (or give --position or --record)")
        seed = check_seed(args.seed)
        state = cls.deal(seed, options)
        solution = solve(state, budget)
        solution.seed = seed
    # solve() has played a winning line through the rules engine; the record's replay (a second check) is
    # made only where a record is written
    if args.save or (args.json and solution.won and solution.seed is not None):
        solution.check()
    if args.save:
        if not solution.won or solution.seed is None:
            raise BadInputError("--save needs a won deal with a seed")
        Path(args.save).write_text(json.dumps(solution.record(), ensure_ascii=False, indent=1) + "\n",
                                   encoding="utf-8")
    if args.json:
        print(json.dumps(solution.to_dict(), ensure_ascii=False, indent=1))
    else:
        _print_solution(solution)
    return 0


def _print_solution(solution: Solution) -> None:
    cost = f"{solution.nodes} positions, {solution.seconds:.3f} s, table {solution.memory_mb:.1f} MB"
    if solution.status is Status.WON:
        print(f"won in {len(solution.moves)} moves ({cost})")
        line = " ".join(str(m) for m in solution.moves)
        print(line)
    elif solution.status is Status.UNWINNABLE:
        print(f"unwinnable: {solution.reason} ({cost})")
    else:
        print(f"unknown: the {solution.reason} budget ran out ({cost})")


# -- analyse -------------------------------------------------------------------------------------


def cmd_analyse(args: argparse.Namespace) -> int:
    from patience.solve.analysis import MAX_GAME_SECONDS, analyse_file

    for name, value in (("--budget-s", args.budget_s), ("--position-s", args.position_s)):
        if not 0 < value <= MAX_GAME_SECONDS:
            raise BadInputError(f"{name} must be more than 0 and at most {MAX_GAME_SECONDS:g}")
    if args.position_nodes is not None and args.position_nodes <= 0:
        raise BadInputError("--position-nodes must be more than 0")
    if not 0 < args.memory_mb <= 65536:
        raise BadInputError("--memory-mb must be more than 0 and at most 65536")
    if not 0 <= args.chance_s <= MAX_GAME_SECONDS:
        raise BadInputError(f"--chance-s must be from 0 to {MAX_GAME_SECONDS:g}")
    if not 1 <= args.samples <= 10_000:
        raise BadInputError("--samples must be from 1 to 10000")
    if args.day is not None:
        return _analyse_day(args)
    if args.record is None:
        raise BadInputError("analyse needs a RECORD file, or --day YYYY-MM-DD for a day's games on the server")
    budget = Budget(args.position_s, args.position_nodes, args.memory_mb)
    kind, analyses = analyse_file(args.record, budget=budget, game_seconds=args.budget_s,
                                  chance_s=args.chance_s or None, chance_samples=args.samples,
                                  chance_seed=args.chance_seed)
    if args.json:
        out: dict[str, Any] = analyses[0].to_dict() if kind == "game" else {
            "kind": kind, "games": [a.to_dict() for a in analyses]}
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    for number, analysis in enumerate(analyses, 1):
        if kind != "game":
            print(f"Game {number} of the {'match' if kind == 'match' else 'day'}:")
        print(analysis.text())
        if number < len(analyses):
            print()
    return 0


def _analyse_day(args: argparse.Namespace) -> int:
    """``patience analyse --day``: queue a day's games whose deals are shown, and work the queue (this machine's
    processes, or a Dask cluster), as the servers' analysis workers do; each game once, stored."""
    import os
    import time
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from patience.daily import check_day, is_over
    from patience.server.analysis import work_queue, worker_init
    from patience.server.app import DB_FILE, default_data_dir
    from patience.server.storage import analysis as db
    from patience.server.storage.store import Store, sqlite_url

    if args.record is not None:
        raise BadInputError("give a RECORD file or --day, not both")
    day = check_day(args.day)
    if args.workers is not None and not 1 <= args.workers <= 256:
        raise BadInputError("--workers is a number of processes from 1 to 256")
    url = args.database_url or os.environ.get("PATIENCE_DATABASE_URL") or sqlite_url(default_data_dir() / DB_FILE)
    store = Store(url)
    store.migrate()
    matches, daily = db.day_games(store.engine, day)
    made = 0
    for key, ref, side, game, record in matches:
        made += db.enqueue(store.engine, key, "match", ref, side, game, record, "bulk")[1]
    if is_over(day, time.time() * 1000):  # a day's deals stay secret until it is over
        for game_id in daily:
            saved = store.load_game(game_id)
            if saved is not None:
                made += db.enqueue(store.engine, f"daily:{game_id}", "daily", game_id, 0, saved.game, saved.record,
                                   "bulk")[1]
    print(f"{day}: {len(matches)} games of matches, {len(daily)} of the deals of the day; {made} newly queued")
    budgets = {"verdict": args.budget_s, **({"chance": args.chance_s} if args.chance_s else {})}
    counts = {"done": 0, "failed": 0}

    def told(key: str, status: str) -> None:
        counts[status] += 1
        print(f"  {key}: {status}")

    if args.scheduler:
        try:
            from dask.distributed import Client
        except ImportError:  # pragma: no cover - depends on the installation
            raise BadInputError("--scheduler needs dask.distributed: pip install 'dask[distributed]'") from None
        from dask.distributed import Queue

        with Client(args.scheduler) as client:
            at_once = max(1, sum(client.nthreads().values()))
            work_queue(store, client.get_executor(pure=False), at_once=at_once, budgets=budgets, on_done=told,
                       enforce=False, progress=Queue(client=client))  # the graphs fill as on a server
    else:
        n = args.workers or os.cpu_count() or 1
        context = get_context("spawn")
        with context.Manager() as manager, ProcessPoolExecutor(n, mp_context=context, initializer=worker_init) as pool:
            work_queue(store, pool, at_once=n, budgets=budgets, on_done=told, progress=manager.Queue())
    store.close()
    print(f"analysed: {counts['done']} done, {counts['failed']} failed")
    return 0


# -- study ---------------------------------------------------------------------------------------


def cmd_study(args: argparse.Namespace) -> int:
    from patience.solve.study import PLAYERS, plot_study, study

    cls, options = game_options(args)
    if args.seed is not None:  # (every game command takes --seed; a study would have ignored it)
        raise BadInputError("a study plays seeds --first-seed .. --first-seed + --deals - 1: "
                            "choose them with --first-seed, not --seed")
    if args.deals <= 0:
        raise BadInputError("--deals must be more than 0")
    players = tuple(p.strip() for p in args.players.split(",") if p.strip())
    for player in players:
        if player not in PLAYERS:
            raise BadInputError(f"unknown player {player!r} (players: {', '.join(PLAYERS)})")
    if args.workers is not None and args.workers <= 0:
        raise BadInputError("--workers must be more than 0")
    first_seed = check_seed(args.first_seed)
    assert isinstance(first_seed, int)  # --first-seed is read as an int: a game number, never a deal key
    result = study(cls.INFO.id, options, args.deals, first_seed=first_seed,
                   players=players, workers=args.workers, budget=_budget(args), scheduler=args.scheduler,
                   progress=None if args.quiet else sys.stderr)
    if args.plot:
        plot_study(result, args.plot)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
    else:
        print(result.table())
    return 0


# -- winnable ------------------------------------------------------------------------------------


def cmd_winnable(args: argparse.Namespace) -> int:
    from patience.solve import winnable

    cls, options = game_options(args)
    path = Path(args.file) if args.file else None
    if args.extend is not None:
        if args.extend <= 0:
            raise BadInputError("--extend must be more than 0")
        added = winnable.extend(cls.INFO.id, options, args.extend, budget=_budget(args), scan=args.scan,
                                path=path, workers=args.workers, progress=None if args.json else sys.stderr)
        entry = winnable.entry(cls.INFO.id, options, path)
        out: dict[str, Any] = {"added": added, "seeds": len(entry.seeds), "checked": entry.checked}
        print(json.dumps(out) if args.json else
              f"{len(added)} seeds added; {len(entry.seeds)} winnable among seeds 1..{entry.checked}")
        return 0
    if args.pick:
        seed = winnable.pick(cls.INFO.id, options, path=path)
        print(json.dumps({"seed": seed}) if args.json else seed)
        return 0
    entry = winnable.entry(cls.INFO.id, options, path)
    if args.json:
        print(json.dumps({"key": entry.key, "checked": entry.checked, "seeds": entry.seeds,
                          "unknown": entry.unknown}))
    else:
        print(f"{entry.key}: {len(entry.seeds)} winnable among seeds 1..{entry.checked}"
              f"{f' ({len(entry.unknown)} undecided)' if entry.unknown else ''}")
        print(" ".join(str(s) for s in entry.seeds))
    return 0
