"""Win-rate studies: many deals, each played by the solver, the greedy player and the hint player.

The hint player follows the hint (:func:`patience.solve.hints.hint`, the very function behind
the browser's hint button) at every step, so it sees only what a person sees.
For every kind of player the study counts won, lost and (solver only) unknown deals, and
gives the win rate with a 95 % **Wilson score interval**. The solver's rate is over the
deals it decided (won / (won + lost)); the unknown ones are counted apart, and
``rate_low``/``rate_high`` bound the rate had they all been lost or all been won.

Deals are seeds ``first_seed .. first_seed + deals - 1``. The work is split into chunks of
seeds, run on every core (:mod:`multiprocessing`) or on a Dask cluster (``scheduler``); a
progress bar (rich: deals done, their rate, the time left) goes to stderr on a terminal, one
closing line elsewhere. Base-game Teppich is done by the vectorised path
(:mod:`patience.solve.fastcarpet`): there the order of play does not matter, so the solver
and the greedy player are one and the same playout.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from patience.games import get_game
from patience.options import options_to_dict
from patience.solve.calibration import wilson
from patience.solve.search import Budget, Status

__all__ = ["DEFAULT_PLAYERS", "PLAYERS", "PlayerResult", "StudyResult", "plot_study", "run_chunk", "study", "wilson"]

PLAYERS = ("solver", "greedy", "hint")
DEFAULT_PLAYERS = ("solver", "greedy")  # the hint player thinks at every step: asked for by name


@dataclass
class PlayerResult:
    """Counts and the win rate of one kind of player."""

    player: str
    won: int = 0
    lost: int = 0
    unknown: int = 0
    seconds: float = 0.0  # CPU time spent playing or solving, summed over the deals
    history: list[tuple[int, int, int]] = field(default_factory=list)  # (deals, won, decided) checkpoints

    @property
    def deals(self) -> int:
        return self.won + self.lost + self.unknown

    @property
    def decided(self) -> int:
        return self.won + self.lost

    def rate(self) -> float:
        return self.won / self.decided if self.decided else 0.0

    def interval(self) -> tuple[float, float]:
        return wilson(self.won, self.decided)

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval()
        out: dict[str, Any] = {
            "player": self.player,
            "deals": self.deals,
            "won": self.won,
            "lost": self.lost,
            "unknown": self.unknown,
            "rate": round(self.rate(), 6),
            "ci_low": round(low, 6),
            "ci_high": round(high, 6),
            "interval": "wilson-95",
            "seconds": round(self.seconds, 3),
        }
        if self.unknown:
            out["rate_low"] = round(self.won / self.deals, 6)
            out["rate_high"] = round((self.won + self.unknown) / self.deals, 6)
        return out


@dataclass
class StudyResult:
    game: str
    options: dict[str, Any]
    first_seed: int
    deals: int
    players: dict[str, PlayerResult]
    seconds: float
    unknown_seeds: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "options": self.options,
            "first_seed": self.first_seed,
            "deals": self.deals,
            "seconds": round(self.seconds, 3),
            "players": {name: p.to_dict() for name, p in self.players.items()},
            "unknown_seeds": self.unknown_seeds[:1000],
        }

    def table(self) -> str:
        opts = " ".join(f"{k}={v}" for k, v in self.options.items())
        lines = [f"{self.game} {opts}".strip() + f": seeds {self.first_seed}..{self.first_seed + self.deals - 1}"
                 f" ({self.seconds:.1f} s)",
                 f"{'player':<8} {'deals':>8} {'won':>8} {'lost':>8} {'unknown':>8} {'rate':>8}"
                 "   95% interval (Wilson)"]
        for p in self.players.values():
            low, high = p.interval()
            lines.append(f"{p.player:<8} {p.deals:>8} {p.won:>8} {p.lost:>8} {p.unknown:>8} "
                         f"{100 * p.rate():>7.2f}%   {100 * low:.2f}% .. {100 * high:.2f}%")
        return "\n".join(lines)


# -- the work ------------------------------------------------------------------------------------

# per deal: (seed, solver status or "", greedy won or None, solver seconds, greedy seconds,
# hint player won or None, hint player seconds)
DealRow = tuple[int, str, bool | None, float, float, bool | None, float]


def run_chunk(game: str, options: Mapping[str, Any], seeds: Sequence[int], players: Sequence[str],
              budget: Budget) -> list[DealRow]:
    """Play ``seeds`` with each player; a plain function so that processes and Dask can run it."""
    cls = get_game(game)
    opts = cls.make_options(dict(options))
    if cls.INFO.id == "teppich" and not opts.waste:
        return _carpet_chunk(opts, seeds, players)
    from patience.solve.greedy import play_greedy
    from patience.solve.hints import play_hints
    from patience.solve.solution import solve

    rows: list[DealRow] = []
    for seed in seeds:
        state = cls.deal(seed, opts)
        status, greedy_won, t_solver, t_greedy = "", None, 0.0, 0.0
        hint_won, t_hint = None, 0.0
        if "solver" in players:
            t = time.thread_time()
            status = solve(state, budget).status.value
            t_solver = time.thread_time() - t
        if "greedy" in players:
            t = time.thread_time()
            greedy_won = play_greedy(state)[0]
            t_greedy = time.thread_time() - t
        if "hint" in players:
            t = time.thread_time()
            hint_won = play_hints(state, budget_s=budget.seconds or 10.0)[0]
            t_hint = time.thread_time() - t
        rows.append((seed, status, greedy_won, t_solver, t_greedy, hint_won, t_hint))
    return rows


def _carpet_chunk(opts: Any, seeds: Sequence[int], players: Sequence[str]) -> list[DealRow]:
    from patience.solve.fastcarpet import carpet_outcomes

    t = time.thread_time()
    won, _ = carpet_outcomes(list(seeds), opts.rows * opts.cols)
    each = (time.thread_time() - t) / max(1, len(seeds))
    rows: list[DealRow] = []
    for seed, w in zip(seeds, won.tolist(), strict=True):
        status = (Status.WON if w else Status.UNWINNABLE).value if "solver" in players else ""
        rows.append((int(seed), status, bool(w) if "greedy" in players else None, each, each,
                     bool(w) if "hint" in players else None, each))
    return rows


def _chunks(first: int, deals: int, size: int) -> Iterator[list[int]]:
    for start in range(first, first + deals, size):
        yield list(range(start, min(first + deals, start + size)))


class _Progress:
    """The deals done, their rate and the time left, on a text stream (stderr), drawn by rich: a live bar on a
    terminal; elsewhere (a log, a pipe) no bar, only one line at the end."""

    def __init__(self, stream: TextIO | None, total: int, label: str) -> None:
        self.stream, self.total, self.label = stream, total, label
        self.done = 0
        self.start = time.perf_counter()
        self.bar: Any = None
        if stream is None or not stream.isatty():
            return
        from rich import progress as rp
        from rich.console import Console

        self.bar = rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
                               rp.TextColumn("deals, {task.fields[rate]}/s,"), rp.TimeElapsedColumn(),
                               rp.TextColumn("gone,"), rp.TimeRemainingColumn(), rp.TextColumn("left"),
                               console=Console(file=stream),
                               redirect_stdout=False, redirect_stderr=False)
        self.task = self.bar.add_task(label, total=total, rate="–")

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def add(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            elapsed = time.perf_counter() - self.start
            self.bar.update(self.task, advance=n, rate=f"{self.done / elapsed:,.0f}" if elapsed > 0 else "–")

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif self.stream is not None:
            elapsed = time.perf_counter() - self.start
            rate = self.done / elapsed if elapsed > 0 else 0.0
            self.stream.write(f"{self.label}: {self.done}/{self.total} deals in {elapsed:.1f} s, {rate:,.0f}/s\n")
            self.stream.flush()


def study(game: str, options: Mapping[str, Any] | None, deals: int, *, first_seed: int = 1,
          players: Sequence[str] = DEFAULT_PLAYERS, workers: int | None = None, budget: Budget | None = None,
          scheduler: str | None = None, progress: TextIO | None = sys.stderr,
          chunk: int | None = None, rows_out: list[DealRow] | None = None) -> StudyResult:
    """Play ``deals`` deals from ``first_seed`` on with each player; see the module docstring.

    ``rows_out``, when given, receives one row per deal: (seed, solver status, greedy won,
    solver seconds, greedy seconds, hint player won, hint player seconds).
    """
    cls = get_game(game)
    opts = cls.make_options(dict(options or {}))
    opts_dict = options_to_dict(opts, only_changed=True)
    budget = budget or Budget(seconds=10.0)
    fast = cls.INFO.id == "teppich" and not opts.waste
    size = chunk or (65536 if fast else (200 if cls.INFO.id == "teppich" else 10))
    if not fast and cls.INFO.id == "reloaded":
        size = chunk or 2
    tasks = list(_chunks(first_seed, deals, size))
    label = f"{cls.INFO.id} {' '.join(f'{k}={v}' for k, v in opts_dict.items())}".strip()
    started = time.perf_counter()
    rows: list[DealRow] = []
    args = (cls.INFO.id, opts_dict)
    with _Progress(progress, deals, label) as bar:
        if scheduler:
            rows = _run_dask(scheduler, args, tasks, players, budget, bar)
        else:
            n = workers or os.cpu_count() or 1
            if n == 1 or len(tasks) == 1:
                for seeds in tasks:
                    part = run_chunk(*args, seeds, players, budget)
                    rows.extend(part)
                    bar.add(len(part))
            else:
                with multiprocessing.get_context("spawn").Pool(n) as pool:
                    jobs = [(*args, seeds, tuple(players), budget) for seeds in tasks]
                    for part in pool.imap_unordered(_run_chunk_star, jobs):
                        rows.extend(part)
                        bar.add(len(part))
    rows.sort()
    if rows_out is not None:
        rows_out.extend(rows)
    result = StudyResult(cls.INFO.id, opts_dict, first_seed, deals,
                         {p: PlayerResult(p) for p in players}, time.perf_counter() - started)
    checkpoints = _checkpoints(deals)
    for count, (seed, status, greedy_won, t_solver, t_greedy, hint_won, t_hint) in enumerate(rows, 1):
        if "solver" in players:
            p = result.players["solver"]
            p.seconds += t_solver
            if status == Status.WON:
                p.won += 1
            elif status == Status.UNWINNABLE:
                p.lost += 1
            else:
                p.unknown += 1
                result.unknown_seeds.append(seed)
        if "greedy" in players:
            p = result.players["greedy"]
            p.seconds += t_greedy
            if greedy_won:
                p.won += 1
            else:
                p.lost += 1
        if "hint" in players:
            p = result.players["hint"]
            p.seconds += t_hint
            if hint_won:
                p.won += 1
            else:
                p.lost += 1
        if count in checkpoints:
            for p in result.players.values():
                p.history.append((count, p.won, p.decided))
    return result


def _run_chunk_star(job: tuple[Any, ...]) -> list[DealRow]:
    return run_chunk(*job)


def _run_dask(address: str, args: tuple[str, dict[str, Any]], tasks: list[list[int]], players: Sequence[str],
              budget: Budget, bar: _Progress) -> list[DealRow]:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:  # pragma: no cover - depends on the installation
        from patience.errors import BadInputError

        raise BadInputError("--scheduler needs dask.distributed: pip install 'dask[distributed]'") from None
    rows: list[DealRow] = []
    with Client(address) as client:
        futures = [client.submit(run_chunk, *args, seeds, tuple(players), budget, pure=False) for seeds in tasks]
        for future in as_completed(futures):
            part = future.result()
            rows.extend(part)
            bar.add(len(part))
    return rows


def _checkpoints(deals: int) -> set[int]:
    """About 60 deal counts, spread evenly on a log scale, for the plot."""
    points = {deals}
    k = 1.0
    while k < deals:
        points.add(int(k))
        k *= 1.15
    return points


def plot_study(result: StudyResult, path: str) -> None:
    """Draw each player's win rate and its interval against the number of deals (PNG)."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the installation
        from patience.errors import BadInputError

        raise BadInputError("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for p in result.players.values():
        xs, rates, lows, highs = [], [], [], []
        for count, won, decided in p.history:
            if decided == 0:
                continue
            low, high = wilson(won, decided)
            xs.append(count)
            rates.append(100 * won / decided)
            lows.append(100 * low)
            highs.append(100 * high)
        if not xs:
            continue
        (line,) = ax.plot(xs, rates, label=f"{p.player}: {100 * p.rate():.2f}%")
        ax.fill_between(xs, lows, highs, alpha=0.2, color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel("deals")
    ax.set_ylabel("win rate, % (95% Wilson interval)")
    opts = " ".join(f"{k}={v}" for k, v in result.options.items())
    ax.set_title(f"{result.game} {opts}".strip())
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
