"""Fair play's detection against adversaries who know its rules, and against people (docs/fairplay.md).

``python benchmarks/fairplay.py`` (offline, about a minute) prints, per kind of player: flagged
(review), marked, games until the first action, and the share with its 95 % Wilson interval;
``--server`` then plays live rated duels through a real ``patience serve`` (one process on SQLite
by default; ``--database-url URL --redis-url URL --workers 2``: two processes on PostgreSQL + Redis).

**Offline** the detector (``patience.fairplay``) judges simulated games. Their decisions are real:
Solitaire Reloaded deals are played by the project's hint (seeds ``--deals``), and at every step the
replay's facts are kept (useful moves, a card new in view, open or forced, whether the hint is the
greedy player's move), as the server's analysis sees them; a simulated game is a stretch of
:data:`STEPS` of those steps. Each kind of player chooses at each open decision (the hint, the greedy
move, another useful move) and thinks for a time of its own. Then the clairvoyance test runs on real
games: a scouted line (the solver's, every card known) against the hint's games (what the table shows).

Adversaries (each a function below; add more kinds as functions of their own and list them in KINDS):

- ``careful-80``, ``careful-75``: the hint at 80 % / 75 % of open decisions, another useful move
  otherwise; log-normal delays, median 0.5 s, sigma 0.8 (CV about 1: passes the clockwork rule), at
  least 0.26 s (passes the machine rule);
- ``evader``: 75 % overall, but every deviation where the hint is not the greedy move (it agrees
  there far less), same delays: the kind the agreement alone cannot see;
- ``always-hint``: the hint at every decision, median 0.45 s;
- ``hick-bot``: the careful bot at 80 %, its delay scaled with log2 of the useful moves (the timing
  rule's own model: what is left when a bot fits it);
- ``scout-then-main`` (``--scout N``, ``--scout-only``): the main plays the solver's winning line of a
  deal a scout saw whole (at a median of 0.75, 2 and 5 s, and with a few of the hint's moves mixed in),
  on a day the server knows was scouted (now only by an established account at machine pace or marked: a
  new scout is dealt a practice deal of its own); against it the false holds of the hint's won games.
  ``--scout-server`` plays it through a real server: the new scout's deal (practice, the cards it shares
  with the day's) is printed, and the mains play the solver's line of the scout's deal on the day's.

People (no parameter taken from the detector; each number's source beside it in HUMANS):
``strong`` (the hint at 65-75 % of open decisions), ``clicker`` (fast), ``thinker`` (slow).

**Through real servers** (``--server``, ``--server-only``): each bot of ``--bots`` (``hint-fast``: the
simple hint at 80-150 ms; ``careful``; ``always-hint``; both on the project's hint of what the table
shows) plays live rated duels against a simulated strong human, and two humans play each other, each
player from a loopback address of its own (127.x.y.z, as benchmarks/duels.py does), websocket clients
sending the intents a page sends; the table reports, from the moderators' API, the rated games each
played until flagged or marked. The players read their deal from the server's database (a cheater's
engine would see the table).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patience.fairplay import (
    AccountScore,
    GameFigures,
    Step,
    account_score,
    climb_sign,
    difficulty,
    game_figures,
    reason_text,
    tail_at_least,
    verdict,
)

STEPS = 100  # actions of a simulated game (a 5-minute Solitaire Reloaded duel has about 100)
DECISIONS = 60  # open decisions a game's analysis compares with the hint (server: MAX_DECISIONS)


# -- the decisions: real games played by the hint --------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One step of a real game as the analysis sees it."""

    useful: int
    new: bool
    obvious: bool  # the hint's move is the greedy player's


def decision_points(seeds: list[int]) -> list[list[Point]]:
    """The steps of Solitaire Reloaded deals played by the hint (as the server's hint answers)."""
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session
    from patience.solve.greedy import greedy_move

    games = []
    for seed in seeds:
        session = Session("reloaded", seed, clock=ManualClock())
        points: list[Point] = []
        down_before = down = _down(session.state)
        while not session.is_over and len(points) < 400:
            move = hint(session)
            if move is None:
                break
            points.append(Point(len(session.state.useful_moves()), down < down_before,
                                str(move) == str(greedy_move(session.state))))
            down_before = down
            session.play(move)
            down = _down(session.state)
        games.append(points)
    return games


def _down(state: Any) -> int:
    return sum(1 for pile in state.piles().values() for _, up in pile if not up)


# -- players: how each chooses and how long it thinks ----------------------------------------------------

# A choice: "hint", "greedy" (the greedy move, where it is not the hint's) or "other" (another useful move).
Chooser = Callable[[Point, random.Random], str]
Thinker = Callable[[Point, random.Random], int]


def choose_at(p_hint: float, p_greedy: float) -> Chooser:
    """The hint with ``p_hint``; otherwise the greedy move with ``p_greedy``, else another useful move."""
    def choose(point: Point, rng: random.Random) -> str:
        if rng.random() < p_hint:
            return "hint"
        if rng.random() < p_greedy:
            return "hint" if point.obvious else "greedy"
        return "other"
    return choose


def evader(point: Point, rng: random.Random) -> str:
    """75 % of open decisions overall, all its deviations where the hint is not the greedy move."""
    if point.obvious:
        return "hint"
    return "hint" if rng.random() < 0.5 else "greedy"


def lognormal(median_ms: float, sigma: float, floor_ms: float = 0.0) -> Thinker:
    def think(point: Point, rng: random.Random) -> int:
        return int(max(floor_ms, rng.lognormvariate(math.log(median_ms), sigma)))
    return think


def hick_bot(point: Point, rng: random.Random) -> int:
    """A bot that fits the timing rule: its delay grows with log2 of the useful moves (and a new card)."""
    return int(max(260, rng.lognormvariate(math.log(350), 0.6) * (1 + difficulty(point.useful, point.new))))


def person(motor_ms: float, base_ms: float, per_bit_ms: float, new_ms: float, sigma: float) -> Thinker:
    """A person's think time: a movement (log-normal, sigma 0.25) plus a deliberation that grows by
    ``per_bit_ms`` a bit of choice (Hick-Hyman: log2 of the alternatives) and by ``new_ms`` after a card
    came into view, its spread log-normal (``sigma``: response times are right-skewed)."""
    def think(point: Point, rng: random.Random) -> int:
        motor = rng.lognormvariate(math.log(motor_ms), 0.25)
        bits = math.log2(max(1, point.useful))
        deliberation = (base_ms + per_bit_ms * bits + (new_ms if point.new else 0.0)) * rng.lognormvariate(0, sigma)
        return int(motor + deliberation)
    return think


@dataclass(frozen=True)
class Kind:
    name: str
    choose: Callable[[random.Random], Chooser]  # one chooser an account (its skill drawn here)
    think: Thinker
    rating: Callable[[int], float]  # the account's rating after n games
    human: bool = False


def climbing(n: int) -> float:
    return min(2000.0, 1500.0 + 70.0 * n)  # a bot that wins most games climbs about as the issue measured


def steady(rating: float) -> Callable[[int], float]:
    return lambda n: rating


def population_climbs(rng: random.Random, accounts: int = 200, games: int = 10) -> list[float]:
    """Other accounts' rating gains over their first ``games``: a rough model of a new account's rated
    games (won or lost at even odds, steps of 80 points shrinking by 15 % a game as its deviation falls;
    the issue measured about 70 a game for a bot that won six of six)."""
    return [sum(80 * 0.85**k * (1 if rng.random() < 0.5 else -1) for k in range(games)) for _ in range(accounts)]


# Sources of the people's numbers (none is a detector constant):
# - choice: strong players play the hint at 65-75 % of open decisions (the range for strong players):
#   the hint at 52-66 % of them, otherwise the greedy move at half the others (the greedy move is the hint's
#   at about half of the open decisions, so 65-75 % in all). That a person who misses the hint's move falls
#   back on the greedy one at half the others is an assumption: the greedy player is the rule of thumb
#   (docs/solving.md: it wins 11 % where the hint wins 68 %). Clickers and thinkers: the hint at 35-55 %,
#   55-65 % in all.
# - time: the Keystroke-Level Model (Card, Moran & Newell 1983): pointing 1.1 s, a mental act 1.35 s, a
#   keystroke 0.2-0.28 s; Hick (1952) and Hyman (1953): choice time grows about 150 ms a bit of choice
#   (laboratory tasks with one response each; a position's moves take more looking: 300 ms a bit for
#   strong players, 150 ms for clickers, 600 ms for thinkers); a new card costs about one more decision;
#   right-skewed spread (log-normal, sigma 0.6-0.9; Luce 1986, Ratcliff 1993).
HUMANS = {
    "strong": (lambda rng: choose_at(rng.uniform(0.52, 0.66), 0.5), person(600, 700, 300, 400, 0.7), steady(1800)),
    "clicker": (lambda rng: choose_at(rng.uniform(0.35, 0.55), 0.5), person(300, 250, 150, 200, 0.6), steady(1500)),
    "thinker": (lambda rng: choose_at(rng.uniform(0.35, 0.55), 0.5), person(1100, 1350, 600, 700, 0.9),
                steady(1500)),
}

KINDS: list[Kind] = [
    Kind("careful-80", lambda rng: choose_at(0.8, 0.0), lognormal(500, 0.8, 260), climbing),
    Kind("careful-75", lambda rng: choose_at(0.75, 0.0), lognormal(500, 0.8, 260), climbing),
    Kind("evader", lambda rng: evader, lognormal(500, 0.8, 260), climbing),
    Kind("always-hint", lambda rng: choose_at(1.0, 0.0), lognormal(450, 0.5, 200), climbing),
    Kind("hick-bot", lambda rng: choose_at(0.8, 0.0), hick_bot, climbing),
    *(Kind(name, chooser, thinker, rating, human=True) for name, (chooser, thinker, rating) in HUMANS.items()),
]


def one_game(points: list[list[Point]], choose: Chooser, think: Thinker, rng: random.Random) -> GameFigures:
    """One simulated game: a stretch of a real game's steps, played by ``choose`` and ``think``."""
    game = rng.choice([g for g in points if len(g) > 20])
    start = rng.randrange(max(1, len(game) - STEPS))
    stretch = game[start:start + STEPS]
    steps, hardness = [], []
    decisions = agreed = hard = hard_agreed = 0
    for i, point in enumerate(stretch):
        steps.append(Step(i, think(point, rng), "d"))
        hardness.append(difficulty(point.useful, point.new))
        if point.useful > 1 and decisions < DECISIONS:
            pick = choose(point, rng)
            decisions += 1
            agreed += pick == "hint"
            if not point.obvious:
                hard += 1
                hard_agreed += pick == "hint"
    return game_figures(steps, decisions, agreed, hardness=hardness, nonobvious=hard, nonobvious_agreed=hard_agreed)


def run(kind: Kind, points: list[list[Point]], rng: random.Random, games: int,
        population: list[float]) -> tuple[int | None, int | None, AccountScore]:
    """Games until flagged, until marked (None: not within ``games``), and the last score (the rating
    climb read as the server reads it: over the last 10 games, against ``population``)."""
    played: list[GameFigures] = []
    flagged = marked = None
    choose = kind.choose(rng)
    score = account_score([])
    for n in range(1, games + 1):
        played.insert(0, one_game(points, choose, kind.think, rng))
        climb = climb_sign(kind.rating(n) - kind.rating(max(0, n - 10)), population) if n >= 3 else None
        score = account_score(played, kind.rating(n), climb)
        if score.state == "mark" and marked is None:
            marked = n
        if score.state in ("mark", "review") and flagged is None:
            flagged = n
        if flagged is not None:
            break
    return flagged, marked, score


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval of k in n."""
    if n == 0:
        return 0.0, 1.0
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def model_phase(players: int, games: int, seeds: list[int], rng: random.Random) -> None:
    started = time.process_time()
    points = decision_points(seeds)
    population = population_climbs(rng)
    took = time.process_time() - started
    every = [p for g in points for p in g]
    opened = [p for p in every if p.useful > 1]
    obvious = sum(p.obvious for p in opened) / len(opened)
    print(f"decisions from {len(seeds)} deals played by the hint ({took:.1f} s): {len(every)} steps, "
          f"{len(opened) / len(every):.0%} open, the hint is the greedy move at {obvious:.0%} of open decisions, "
          f"a new card before {sum(p.new for p in every) / len(every):.0%} of steps")
    print(f"\n{'kind':<12} {'accounts':>8} {'flagged (review)':>22} {'marked':>7} {'games to flag':>22}  "
          "agreement (open / not greedy)")
    for kind in KINDS:
        results = [run(kind, points, rng, games, population) for _ in range(players)]
        flagged = [f for f, _, _ in results if f is not None]
        marked = [m for _, m, _ in results if m is not None]
        low, high = wilson(len(flagged), players)
        spread = (f"median {statistics.median(flagged):.0f}, max {max(flagged)}" if flagged else "-")
        last = [s for _, _, s in results]
        share = statistics.fmean(s.agreed / s.decisions for s in last if s.decisions)
        hard = statistics.fmean(s.hard_agreed / s.hard for s in last if s.hard)
        print(f"{kind.name:<12} {players:>8} {len(flagged) / players:>7.1%} [{low:.1%}-{high:.1%}] "
              f"{len(marked) / players:>7.1%} {spread:>22}  {share:.0%} / {hard:.0%}"
              + (f"  (people: {games} games each)" if kind.human else ""))


# -- clairvoyance: a scouted line against what the table shows ------------------------------------------


def clairvoyance_phase(seeds: list[int]) -> None:
    """The solver's winning line (a scouted deal: every card known) and the hint's game (what the table
    shows) on the same deals, each through the server's analysis (the hint and the clairvoyance test)."""
    from patience.games import get_game
    from patience.server.solo.fairplay import analyse
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session
    from patience.solve import Budget, Status, solve

    rows = []
    pace = random.Random(7)  # both play at a median of 0.75 s a move, heavy-tailed (the timing rules pass)
    for seed in seeds:
        solution = solve(get_game("reloaded").deal(seed), Budget(seconds=10))
        lines = {"hint": None}
        if solution.status is Status.WON:
            lines["scout"] = [str(m) for m in solution.moves]
        for who, line in lines.items():
            clock = ManualClock()
            session = Session("reloaded", seed, clock=clock)
            t = 0
            while not session.is_over and session.moves_made < 400:
                move = (line[session.moves_made] if line is not None and session.moves_made < len(line)
                        else (str(hint(session) or "")) if line is None else "")
                if not move:
                    break
                t += 750
                clock.set_ms(t)
                session.play(move)
            if session.outcome is None:
                session.give_up()
            record = session.record()
            steps = [Step(i, int(pace.lognormvariate(math.log(750), 0.6)), "d") for i in range(len(record["actions"]))]
            cpu = time.process_time()
            figures = analyse(record, steps, clairvoyance=True)
            cpu = time.process_time() - cpu
            rows.append((who, seed, record["result"]["outcome"], figures, verdict(figures).kind, cpu))
    print(f"\n{'player':<8} {'deal':>5} {'outcome':>9} {'decided by hidden cards':>24} {'hits':>5} {'expected':>8} "
          f"{'verdict':>12} {'analysis CPU':>12}")
    for who, seed, outcome, fig, kind, cpu in rows:
        print(f"{who:<8} {seed:>5} {outcome:>9} {len(fig.hidden):>24} {fig.hidden_hits:>5} {sum(fig.hidden):>8.1f} "
              f"{kind:>12} {cpu:>10.1f} s")
    for who in ("scout", "hint"):
        mine = [r for r in rows if r[0] == who]
        seen = sum(r[4] == "clairvoyant" for r in mine)
        won = sum(r[2] == "won" for r in mine)
        low, high = wilson(seen, len(mine))
        chances = [c for r in mine for c in r[3].hidden]
        hits = sum(r[3].hidden_hits for r in mine)
        print(f"{who}: clairvoyant in {seen} of {len(mine)} games ({won} won) [{low:.0%}-{high:.0%}], "
              f"analysis CPU median {statistics.median(r[5] for r in mine):.1f} s, "
              f"max {max(r[5] for r in mine):.1f} s; "
              f"all its games together: {hits} hits of {len(chances)} where {sum(chances):.1f} were expected "
              f"(chance {tail_at_least(chances, hits):.1e})")


# -- scout-then-main: a deal of the day scouted, then won by the main account ------------------------------

SCOUT_PACES = (("0.75 s", 750), ("1.25 s", 1250), ("2 s", 2000), ("5 s", 5000))  # the main's median think time
GENUINE_MS = 1000  # the genuine winners' median think time (a won game's 150-270 actions fit in 5 minutes)
MIXED_DEVIATIONS = 3  # the mixed main plays the hint's move (what the table shows) this many times


def _scouted_line(seed: int, rng: random.Random, deviations: int) -> list[str] | None:
    """The main's moves on deal ``seed`` knowing every card (the scout saw them): the solver's winning line;
    with ``deviations``, that many times (early in the game, where it still wins) the hint's move, the
    line solved again from there."""
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session
    from patience.solve import Budget, Status, solve

    session = Session("reloaded", seed, clock=ManualClock())
    solution = solve(session.state, Budget(seconds=10))
    if solution.status is not Status.WON:
        return None
    line, played = [str(m) for m in solution.moves], []
    turns = sorted(rng.sample(range(2, max(3, len(line) // 2)), min(deviations, max(0, len(line) // 2 - 2))))
    while line and not session.is_over:
        if turns and len(played) >= turns[0]:
            turns.pop(0)
            other = hint(session)
            if other is not None and str(other) != line[0]:
                trial = Session("reloaded", seed, clock=ManualClock())
                for move in [*played, str(other)]:
                    trial.play(move)
                again = solve(trial.state, Budget(seconds=5))
                if again.status is Status.WON:
                    session.play(str(other))
                    played.append(str(other))
                    line = [str(m) for m in again.moves]
                    continue
        session.play(line[0])
        played.append(line.pop(0))
    return played if session.outcome == "won" else None


def _hint_line(seed: int) -> list[str] | None:
    """The hint's game on deal ``seed`` (a good player who sees only the table), if it wins."""
    from patience.server.solo.hints import hint
    from patience.session import ManualClock, Session

    session = Session("reloaded", seed, clock=ManualClock())
    while not session.is_over and session.moves_made < 400:
        move = hint(session)
        if move is None:
            break
        session.play(move)
    return [str(a["m"]) for a in session.record()["actions"]] if session.outcome == "won" else None


def _judged(seed: int, line: list[str], median_ms: int, rng: random.Random) -> tuple[GameFigures, str, str] | None:
    """A deal of the day played along ``line`` at a log-normal pace (median ``median_ms``, sigma 0.6),
    through the server's analysis: its figures, its verdict on a day with a scout and on a day without;
    None when it is not won in the deal's time (5 minutes)."""
    import dataclasses

    from patience.server.solo.fairplay import analyse
    from patience.session import ManualClock, Session

    clock = ManualClock()
    session = Session("reloaded", seed, clock=clock)
    steps, t = [], 0
    for move in line:
        think = max(260, int(rng.lognormvariate(math.log(median_ms), 0.6)))
        t += think
        clock.set_ms(t)
        if session.is_over or session.time_left_ms() == 0:
            return None
        steps.append(Step(session.moves_made, think, "d"))
        session.play(move)
    record = session.record()
    if session.outcome != "won":
        return None
    steps = [Step(i, s.think_ms, "d") for i, s in enumerate(steps[:len(record["actions"])])]
    figures = analyse(record, steps, clairvoyance=True)
    return figures, verdict(dataclasses.replace(figures, scouted="day")).kind, verdict(figures).kind


def _held_at(fig: GameFigures, bar: float) -> bool:
    """Is a win held on a scouted day if the bar were ``bar`` (above 1: any win the hidden cards decided, the
    server's rule now; AT_CHANCE_P, 0.25, was the bar before practice deals)."""
    import dataclasses

    kind = verdict(fig).kind
    return kind in ("machine", "suspect", "clairvoyant") or (
        verdict(dataclasses.replace(fig, scouted="day")).kind == "scouted"
        and tail_at_least(fig.hidden, fig.hidden_hits) < bar) or (bar > 1 and bool(fig.hidden))


def kept_decision(state: Any, move: str, deadline: float) -> tuple[bool, float] | None:
    """A candidate for more power (not in the server): does ``move`` keep the **real** deal won (the
    solver finds a win after it), against the share of sampled deals that look like the table, won before
    it, that it keeps won. For a player who sees only the table the real deal is one more such deal; a
    player who knows the cards keeps it won every time (also where the solver, asked again, would pick
    another winning move). None where it cannot be told or every sampled deal agrees."""
    from patience.solve.clairvoyance import MIN_SOLVED, REAL_NODES, SAMPLE_NODES, SAMPLES, solver_move
    from patience.solve.unseen import unseen, visible_deals

    if state.is_won() or not unseen(state)[0]:
        return None

    def after(world: Any) -> Any:
        legal = {str(m): m for m in world.legal_moves()}
        if move not in legal:
            return None
        nxt = world.copy()
        nxt.push(legal[move])
        return nxt

    def won(world: Any, nodes: int) -> bool:
        return bool(world.is_won() or solver_move(world, nodes, deadline) is not None)

    real = after(state)
    if real is None:
        return None
    hit = won(real, REAL_NODES)
    if not hit and not won(state, REAL_NODES):
        return None  # the real deal was lost already: nothing to tell
    kept = []
    for world in visible_deals(state, SAMPLES):
        if time.thread_time() > deadline:
            return None
        moved = after(world)
        if moved is not None and won(moved, SAMPLE_NODES):
            kept.append(True)
        elif won(world, SAMPLE_NODES):
            kept.append(False)
    if len(kept) < MIN_SOLVED or all(kept):
        return None
    return hit, (sum(kept) + 1) / (len(kept) + 2)


def kept_tail(seed: int, line: list[str], seconds: float = 8.0) -> tuple[int, int, float]:
    """The keep-won test over a game (the same decisions as the server's test: card moves, the first after
    each card turned up): decisions, hits, and the chance of at least as many hits."""
    from patience.session import ManualClock, Session

    session = Session("reloaded", seed, clock=ManualClock())
    chances, hits, segment = [], 0, -1
    deadline = time.thread_time() + seconds
    for move in line:
        state = session.state
        if move not in ("draw", "redeal") and sum(state.down) != segment and len(state.useful_moves()) > 1 \
                and time.thread_time() < deadline:
            found = kept_decision(state.copy(), move, deadline)
            if found is not None:
                segment = sum(state.down)
                chances.append(found[1])
                hits += found[0]
        session.play(move)
    return len(chances), hits, tail_at_least(chances, hits)


def kept_phase(scout_seeds: list[int], genuine_seeds: list[int]) -> None:
    """The keep-won candidate on the scouted mains' lines and genuine winners' games (its bar's trade-off)."""
    rng = random.Random(33)
    mains = [(seed, line) for seed in scout_seeds if (line := _scouted_line(seed, rng, 0)) is not None]
    genuine = [(seed, line) for seed in genuine_seeds if (line := _hint_line(seed)) is not None]
    scouts = [kept_tail(seed, line) for seed, line in mains]
    fair = [kept_tail(seed, line) for seed, line in genuine]
    print(f"\nkeep-won candidate: {len(scouts)} scouted mains' lines, {len(fair)} genuine winners' games "
          f"(decisions median {statistics.median(d for d, _, _ in scouts) if scouts else 0} and "
          f"{statistics.median(d for d, _, _ in fair) if fair else 0}; hits {sum(h for _, h, _ in scouts)} of "
          f"{sum(d for d, _, _ in scouts)} and {sum(h for _, h, _ in fair)} of {sum(d for d, _, _ in fair)})")
    for bar in (0.1, 0.25, 0.5):
        shown = sum(p >= bar for _, _, p in scouts)
        held = sum(p < bar for _, _, p in fair)
        print(f"  {bar}: mains shown {shown}/{len(scouts)}, genuine held {held}/{len(fair)} "
              f"[{wilson(held, len(fair))[0]:.0%}-{wilson(held, len(fair))[1]:.0%}]", flush=True)


def scout_phase(scout_seeds: list[int], genuine_seeds: list[int]) -> None:
    """``scout-then-main``: a scout saw every card of the deal of the day; the main plays the solver's winning
    line at a human pace (or mixes in the hint's moves) on a day the server knows was scouted (a scout's
    attempt came first: see patience.server.storage.daily.scouting). Shown on the board unless its verdict
    is held (machine, suspect, clairvoyant, scouted) before a moderator acts. Against it, the false holds
    of genuine winners on such a day: the hint's won games at a median of :data:`GENUINE_MS`; and the
    trade-off of the bar (AT_CHANCE_P) between the two."""
    from patience.fairplay import AT_CHANCE_P

    held = ("machine", "suspect", "clairvoyant", "scouted")
    rng = random.Random(33)
    mains: dict[str, list[tuple[int, list[str]]]] = {"plain": [], "mixed": []}
    for seed in scout_seeds:
        for kind, deviations in (("plain", 0), ("mixed", MIXED_DEVIATIONS)):
            line = _scouted_line(seed, rng, deviations)
            if line is not None:
                mains[kind].append((seed, line))
    print(f"\nscout-then-main: {len(scout_seeds)} deals (seeds {scout_seeds[0]}-{scout_seeds[-1]}), the main's "
          f"won lines through the server's analysis on a scouted day (a main shown = not held before a moderator)",
          flush=True)
    print(f"{'main':<22} {'won in time':>11} {'shown':>6} {'95 % interval':>14} {'old rule: shown':>16}  "
          "decisions (median)")
    fast: dict[str, list[GameFigures]] = {}
    for kind, paces in (("plain", SCOUT_PACES), ("mixed", SCOUT_PACES[:1])):
        for label, median_ms in paces:
            judged = [_judged(seed, line, median_ms, rng) for seed, line in mains[kind]]
            rows = [r for r in judged if r is not None]
            if median_ms == SCOUT_PACES[0][1]:
                fast[kind] = [f for f, _, _ in rows]
            shown = sum(new not in held for _, new, _ in rows)
            old = sum(before not in held for _, _, before in rows)
            low, high = wilson(shown, len(rows))
            name = f"{'solver line' if kind == 'plain' else f'+{MIXED_DEVIATIONS} hint moves'}, {label}"
            print(f"{name:<22} {f'{len(rows)}/{len(judged)}':>11} {shown:>6} {f'{low:.0%}-{high:.0%}':>14} {old:>16}  "
                  f"{statistics.median(len(f.hidden) for f, _, _ in rows) if rows else 0}", flush=True)
    genuine = [(seed, line) for seed in genuine_seeds if (line := _hint_line(seed)) is not None]
    rows = [r for seed, line in genuine if (r := _judged(seed, line, GENUINE_MS, rng)) is not None]
    false = sum(new in held for _, new, _ in rows)
    low, high = wilson(false, len(rows))
    print(f"genuine winners (the hint at a median of {GENUINE_MS / 1000:g} s, {len(genuine_seeds)} deals): "
          f"{len(rows)} won, held on a scouted day {false} ({false / max(1, len(rows)):.0%}, [{low:.0%}-{high:.0%}]); "
          f"on a day without a scout {sum(before in held for _, _, before in rows)}")
    print(f"the bar on a scouted day (the server holds 'any' now; {AT_CHANCE_P} before practice deals): mains shown "
          "(solver line / mixed, 0.75 s) against genuine winners held; 'any' holds every win where the hidden cards "
          "decided a move")
    for bar in (0.1, 0.25, 0.5, 0.75, 2.0):
        plain, mixed = (sum(not _held_at(f, bar) for f in fast.get(k, [])) for k in ("plain", "mixed"))
        wrong = sum(_held_at(f, bar) for f, _, _ in rows)
        print(f"  {('any' if bar > 1 else bar)!s:>5}: shown {plain}/{len(fast.get('plain', []))} and "
              f"{mixed}/{len(fast.get('mixed', []))}; genuine held {wrong}/{len(rows)} "
              f"[{wilson(wrong, len(rows))[0]:.0%}-{wilson(wrong, len(rows))[1]:.0%}]")


# -- the server phase: live rated duels through a real `patience serve` ----------------------------------

FORMAT = "reloaded/standard/300"
PASSWORD = "a long enough password"
HUMAN_ACTIONS = 30  # the simulated human gives up after this many actions (keeps a round under a minute)
BOT_ACTIONS = 150  # the bot gives up after this many (the simple hint may draw round the stock for ever)
ANALYSIS_S = 60.0  # how long to wait for the server's analysis of a round's games


def address_of(number: int) -> str:
    """The loopback address player ``number`` connects from (as benchmarks/duels.py: 127.1.1.1 and up)."""
    return f"127.{1 + number // 64516}.{1 + (number // 254) % 254}.{1 + number % 254}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Client:
    """One person: an account, an HTTP client and a websocket, all from a loopback address of its own."""

    def __init__(self, url: str, number: int, login: str) -> None:
        import httpx

        self.url, self.address, self.login = url, address_of(number), login
        self.http = httpx.Client(base_url=url, timeout=15.0,
                                 transport=httpx.HTTPTransport(local_address=self.address))
        answer = self.http.post("/account/signup", headers={"accept": "application/json"}, data={
            "csrf": self.csrf(), "login": login, "name": login.title(), "password": PASSWORD})
        answer.raise_for_status()
        self.id: str = answer.json()["user"]["id"]
        self.ws: Any = None
        self.ack = 0
        self.ended = False  # the match's end came (with whichever message)

    def csrf(self) -> str:
        return str(self.http.get("/api/me").json()["csrf"])

    def open(self) -> None:
        from websockets.sync.client import connect

        cookie = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())
        self.ws = connect(self.url.replace("http://", "ws://") + "/ws", additional_headers={"Cookie": cookie},
                          source_address=(self.address, 0), open_timeout=20, max_size=2**22, ping_interval=None,
                          max_queue=None)  # never stop reading (and answering pings) while a side waits
        self.ended = False

    def send(self, t: str, d: dict[str, Any]) -> None:
        self.ws.send(json.dumps({"t": t, "d": d}))

    def until(self, wanted: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.login}: no wanted message in {timeout} s")
            try:
                msg: dict[str, Any] = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                continue
            if msg["t"] == "dev" and msg["d"].get("end") is not None:
                self.ended = True
            if wanted(msg):
                return msg


def match_deal(database_url: str, match_id: str) -> tuple[str, str, dict[str, Any]]:
    from sqlalchemy import create_engine, select

    from patience.server.storage.store import MatchRow

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            for _ in range(100):
                row = connection.execute(select(MatchRow.game, MatchRow.seed, MatchRow.options)
                                         .where(MatchRow.id == match_id)).first()
                if row is not None:
                    return row.game, row.seed, json.loads(row.options or "{}")
                time.sleep(0.1)
    finally:
        engine.dispose()
    raise RuntimeError(f"match {match_id} never reached the database")


def _server_move(kind: str, session: Any, rng: random.Random) -> Any:
    """The move ``kind`` plays now in the server phase (None: give up)."""
    from patience.server.solo.hints import hint, simple_hint
    from patience.solve.greedy import greedy_move

    moves = session.state.useful_moves()
    if kind == "hint-fast":
        return simple_hint(session.state)
    best = hint(session)
    if best is None or len(moves) < 2:
        return best
    share = {"careful": 0.8, "always-hint": 1.0}.get(kind, 0.6)  # people: the strong model's middle
    if rng.random() < share:
        return best
    greedy = greedy_move(session.state)
    if kind == "human" and greedy is not None and rng.random() < 0.5:
        return greedy
    others = [m for m in moves if m != best]
    return rng.choice(others) if others else best


def _server_think(kind: str, session: Any, new: bool, rng: random.Random) -> float:
    """Seconds ``kind`` waits before its next action (the offline models' times)."""
    if kind == "hint-fast":
        return rng.uniform(0.08, 0.15)
    if kind == "careful":
        return max(0.26, rng.lognormvariate(math.log(0.5), 0.8))
    if kind == "always-hint":
        return max(0.2, rng.lognormvariate(math.log(0.45), 0.5))
    point = Point(len(session.state.useful_moves()), new, False)
    return float(HUMANS["strong"][1](point, rng)) / 1000


SERVER_BOTS = ("hint-fast", "careful", "always-hint")


def play_side(player: Client, kind: str, duel: dict[str, Any], database_url: str, rng: random.Random,
              tally: dict[str, int]) -> None:
    """Play one side of a live match as ``kind`` (one of SERVER_BOTS, or human) until its game is over:
    the bots on the project's hint of what the table shows (hint-fast: the simple hint), the human as
    the offline strong model."""
    from patience.games import DRAW, REDEAL
    from patience.session import Session

    game, seed, options = match_deal(database_url, duel["id"])
    session = Session(game, seed, options)
    time.sleep(duel.get("starts_in", 0) / 1000 + 0.05)
    actions = 0
    down_before = down = _down(session.state)
    while not session.is_over:
        best = _server_move(kind, session, rng)
        if best is None or actions >= (HUMAN_ACTIONS if kind == "human" else BOT_ACTIONS):
            intent: dict[str, Any] = {"t": "giveup"}
        elif best in (DRAW, REDEAL):
            intent = {"t": "stock", "how": "click"}
        elif kind == "human":
            drag = int(rng.lognormvariate(6.2, 0.4))
            intent = {"t": "move", "src": best.src, "dst": best.dst, "n": best.n, "how": "drag", "ms": drag,
                      "px": int(rng.uniform(120, 600))}
        else:
            intent = {"t": "move", "src": best.src, "dst": best.dst, "n": best.n, "how": "click"}
        time.sleep(_server_think(kind, session, down < down_before, rng))
        player.ack += 1
        ack = player.ack
        t = intent.pop("t")
        player.send(t, {"ack": ack, **intent})
        answer = player.until(lambda m, ack=ack: m["t"] in ("dev", "rej", "err") and m["d"].get("ack") == ack)
        actions += 1
        tally[kind] = tally.get(kind, 0) + 1
        if t == "giveup":
            break
        if answer["t"] != "dev" or not answer["d"].get("ok", False):
            player.ack += 1
            player.send("giveup", {"ack": player.ack})  # out of step with the server: stop this game
            break
        down_before = down
        session.play(best)
        down = _down(session.state)


def one_match(players: tuple[Client, Client], kinds: tuple[str, str], database_url: str, rng: random.Random,
              tally: dict[str, int]) -> None:
    first, second = players
    for p in players:
        p.ended = False
    first.send("challenge", {"format": FORMAT, "cid": f"bench-{first.login}"})
    made = first.until(lambda m: m["t"] in ("challenge", "err"))
    if made["t"] == "err":
        raise RuntimeError(f"{first.login}: the challenge was refused: {made['d']}")
    code = made["d"]["code"]
    second.send("accept", {"code": code, "cid": f"bench-{second.login}"})
    duels = [p.until(lambda m: m["t"] == "duel")["d"] for p in players]
    sides = [threading.Thread(target=play_side, args=(p, kind, d, database_url, random.Random(rng.random()), tally))
             for p, kind, d in zip(players, kinds, duels, strict=True)]
    for thread in sides:
        thread.start()
    for thread in sides:
        thread.join()
    for p in players:
        if not p.ended:
            p.until(lambda m: m["t"] == "dev" and m["d"].get("end") is not None, timeout=90)
        p.ended = False


def standing(moderator: Client, account: Client, games: int) -> dict[str, Any]:
    """The account's standing as the moderators' API says it, once ``games`` of its games are analysed."""
    deadline = time.monotonic() + ANALYSIS_S
    while True:
        view = moderator.http.get(f"/api/mod/account/{account.id}").json()
        analysed = sum(g["verdict"] is not None for g in view["games"])
        if analysed >= games or view["state"] == "marked" or time.monotonic() > deadline:
            return view  # type: ignore[no-any-return]
        time.sleep(0.5)


def run_pair(url: str, database_url: str, moderator: Client, number: int, kinds: tuple[str, str], rounds: int,
             rng: random.Random, tally: dict[str, int]) -> list[dict[str, Any]]:
    """Matches between two players of ``kinds`` until one is marked (it is then refused the next) or
    ``rounds``; per player: its kind, when it was flagged and marked, and the moderators' view of it."""
    tag = rng.randrange(10**6)
    players = (Client(url, 10 + 2 * number, f"p{number}a{tag}"), Client(url, 11 + 2 * number, f"p{number}b{tag}"))
    for p in players:
        p.open()
    out = [{"kind": kind, "flagged": None, "marked": None, "view": None} for kind in kinds]
    try:
        for n in range(1, rounds + 1):
            try:
                one_match(players, kinds, database_url, rng, tally)
            except (RuntimeError, TimeoutError) as exc:
                for entry in out:
                    entry["error"] = str(exc)[:160]
                break
            for entry, account in zip(out, players, strict=True):
                view = standing(moderator, account, n)
                entry["view"] = view
                if view["state"] in ("review", "marked") and entry["flagged"] is None:
                    entry["flagged"] = n
                if view["state"] == "marked" and entry["marked"] is None:
                    entry["marked"] = n
            if any(entry["marked"] is not None for entry in out):
                break  # a marked account is refused the next challenge
    finally:
        for p in players:
            p.ws.close()
            p.http.close()
    return out


@contextlib.contextmanager
def serving(redis_url: str, database: str | None, workers: int) -> Iterator[tuple[str, str]]:
    """A real ``patience serve`` (``workers`` processes) on ``database`` (default: a new SQLite file) and an
    emptied Redis database: its URL and the database's, until the block ends."""
    import httpx
    import redis

    redis.Redis.from_url(redis_url).flushdb()  # this run's keys alone
    with tempfile.TemporaryDirectory() as folder:
        from patience.server.storage.store import sqlite_url

        database_url = database or sqlite_url(Path(folder) / "bench.sqlite3")
        port = free_port()
        log = (Path(folder) / "serve.log").open("w")
        command = [sys.executable, "-m", "patience", "serve", "--port", str(port), "--database-url", database_url,
                   "--redis-url", redis_url, "--deal-stock", "0"]
        server = subprocess.Popen(command + (["--workers", str(workers)] if workers > 1 else []),
                                  stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).text == "ok":
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start: " + (Path(folder) / "serve.log").read_text())
                time.sleep(0.2)
            yield url, database_url
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()


def moderator_of(url: str, database_url: str, rng: random.Random) -> Client:
    from patience.server.storage.roles import grant
    from patience.server.storage.store import Store

    moderator = Client(url, 1, f"mod{rng.randrange(10**6)}")
    store = Store(database_url)
    grant(store, moderator.login, "moderator")
    store.close()
    return moderator


def server_phase(bots: list[str], rounds: int, redis_url: str, seed: int, database: str | None = None,
                 workers: int = 1) -> None:
    rng = random.Random(seed)
    with serving(redis_url, database, workers) as (url, database_url):
        moderator = moderator_of(url, database_url, rng)
        tally: dict[str, int] = {}
        started = time.monotonic()
        matchups = [(bot, "human") for bot in bots] + [("human", "human")]  # humans also against humans
        results: list[list[dict[str, Any]]] = [[] for _ in matchups]
        threads = [threading.Thread(target=lambda i=i, kinds=kinds: results.__setitem__(
            i, run_pair(url, database_url, moderator, i, kinds, rounds, random.Random(rng.random()), tally)))
            for i, kinds in enumerate(matchups)]
        for w in threads:
            w.start()
        for w in threads:
            w.join()
        took = time.monotonic() - started
    where = f"{workers} processes" if workers > 1 else "one process"
    print(f"\nserver phase: {len(bots)} bot-and-human pairs and a human pair, live rated duels {FORMAT} through "
          f"`patience serve` ({where}, {database_url.split(':')[0]}; {took:.0f} s, actions sent: {tally})")
    print(f"{'player':<10} {'games':>5} {'flagged at':>10} {'marked at':>9} {'score':>5}  "
          "verdicts (newest first) · reasons")
    for pair in results:
        for entry in pair:
            view = entry["view"]
            if entry.get("error"):
                print(f"{entry['kind']:<10} stopped: {entry['error']}")
            if not view:
                continue
            verdicts = ",".join(str(g["verdict"]) for g in view["games"])
            reasons = reason_text(view["score"]["reasons"])[:90]
            flagged, marked = entry["flagged"] or "-", entry["marked"] or "-"
            print(f"{entry['kind']:<10} {len(view['games']):>5} {flagged!s:>10} {marked!s:>9} "
                  f"{view['score']['score']:>5}  {verdicts} · {reasons}")



def establish(database_url: str, user_id: str, opponents: list[str]) -> None:
    """Give ``user_id`` the board's entry rule, as weeks of play would (10 days old, 6 rated duels with
    effort against 3 unlinked opponents): a main account that met the rule."""
    from sqlalchemy import create_engine, update

    from patience.server.storage.ladder import RatingChangeRow
    from patience.server.storage.store import UserRow

    engine = create_engine(database_url)
    now = int(time.time() * 1000)
    try:
        with engine.begin() as connection:
            connection.execute(update(UserRow).where(UserRow.id == user_id).values(created_ms=now - 10 * 86_400_000))
            for n in range(6):
                connection.execute(RatingChangeRow.__table__.insert(), [{
                    "match_id": f"e{user_id[:10]}{n}", "user_id": user_id, "game": "reloaded",
                    "opponent_id": opponents[n % 3], "points": 1.0, "expected": 0.5, "proposed": 10.0,
                    "applied": 10.0, "held": 0.0, "dev_delta": 0.0, "state": "applied", "reason": "rated",
                    "at_ms": now - 86_400_000 + n}])
    finally:
        engine.dispose()


def play_daily(player: Client, database_url: str, line: Callable[[Any], Any], median_s: float, rng: random.Random,
               give_up_after: int | None = None) -> str:
    """Play ``player``'s attempt at today's deal of Solitaire Reloaded through the server: ``line(session)``
    names each move (None: give up), at a log-normal pace of median ``median_s``; the outcome."""
    from patience.daily import daily_options
    from patience.games import DRAW, REDEAL
    from patience.session import ManualClock, Session

    answer = player.http.post("/api/daily/reloaded/start", data={"csrf": player.csrf()},
                              headers={"accept": "application/json"})
    answer.raise_for_status()
    game_id = answer.json()["id"]
    key = game_key(database_url, game_id)  # the day's deal, or the player's practice deal (a new account)
    session = Session("reloaded", key, daily_options("reloaded"), clock=ManualClock())  # the server keeps time
    player.open()
    try:
        player.send("join", {"id": game_id, "v": 0, "cid": f"c{player.login}"})
        player.until(lambda m: m["t"] == "game")
        while not session.is_over:
            move = line(session)
            if move is None or (give_up_after is not None and session.moves_made >= give_up_after):
                intent: dict[str, Any] = {"t": "giveup"}
            elif move in (DRAW, REDEAL):
                intent = {"t": "stock", "how": "click"}
            else:
                intent = {"t": "move", "src": move.src, "dst": move.dst, "n": move.n, "how": "drag",
                          "ms": int(rng.lognormvariate(6.2, 0.4)), "px": int(rng.uniform(120, 600))}
            time.sleep(max(0.05, rng.lognormvariate(math.log(median_s), 0.6)) if median_s else 0.0)
            player.ack += 1
            ack, t = player.ack, intent.pop("t")
            player.send(t, {"ack": ack, **intent})
            reply = player.until(lambda m, ack=ack: m["t"] in ("ev", "rej", "err") and m["d"].get("ack") == ack)
            if reply["t"] != "ev":
                return f"refused at action {session.moves_made}: {reply['d'].get('msg') or reply['d']}"[:120]
            if t == "giveup":
                break
            session.play(move)
        status = reply["d"].get("status") or {}
        return str(status.get("outcome") or session.outcome or "?")
    finally:
        player.ws.close()


def daily_figures(database_url: str, user_id: str) -> str:
    """What the analysis of ``user_id``'s attempt found where only the hidden cards decide, and whether
    the day was scouted (read from the database: the moderators' API shows the timing figures)."""
    from sqlalchemy import create_engine, select

    from patience.server.storage.fairplay import EvidenceRow

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            raw = connection.scalar(select(EvidenceRow.figures).where(EvidenceRow.user_id == user_id,
                                                                      EvidenceRow.kind == "daily"))
    finally:
        engine.dispose()
    fig = GameFigures.from_dict(json.loads(raw)) if raw else None
    if fig is None:
        return "not analysed"
    return (f"scouted {fig.scouted or '-'}: hits {fig.hidden_hits} of {len(fig.hidden)} where {sum(fig.hidden):.1f} "
            f"expected (chance {tail_at_least(fig.hidden, fig.hidden_hits):.2f})")


def game_key(database_url: str, game_id: str) -> str:
    """The key of the deal the server dealt in game ``game_id`` (read where the server keeps it: what the
    player's attempt shows, every card once turned)."""
    from patience.server.storage.store import Store

    store = Store(database_url)
    try:
        saved = store.load_game(game_id)
        assert saved is not None, game_id
        return str(saved.record["seed"])
    finally:
        store.close()


def daily_key(database_url: str) -> str:
    """Today's key of Solitaire Reloaded's deal of the day, read where the server keeps it (what a scout's
    attempt shows: every card, once turned)."""
    from sqlalchemy import create_engine, select

    from patience.server.storage.daily import DailyDealRow

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            return str(connection.scalar(select(DailyDealRow.deal).where(DailyDealRow.game == "reloaded")
                                         .order_by(DailyDealRow.day.desc())))
    finally:
        engine.dispose()


def scout_key(database_url: str, user_id: str) -> str:
    """The key of the deal ``user_id``'s attempt of the day was dealt (a new account's: its practice deal)."""
    from sqlalchemy import create_engine, select

    from patience.server.storage.daily import AttemptRow

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            game_id = connection.scalar(select(AttemptRow.game_id).where(AttemptRow.user_id == user_id))
    finally:
        engine.dispose()
    return game_key(database_url, str(game_id))


def same_cards(one: str, other: str) -> int:
    """How many of the 52 places (pile and depth) hold the same card in the deals of keys ``one`` and ``other``."""
    from patience.daily import daily_options
    from patience.games import get_game

    a, b = (get_game("reloaded").deal(k, daily_options("reloaded")).piles() for k in (one, other))
    return sum(x == y for name in a for x, y in zip(a[name], b.get(name, []), strict=False))


def scout_server_phase(redis_url: str, database: str | None, workers: int, paces: list[float]) -> None:
    """``scout-then-main`` through a real server, on today's deal: a new account plays its attempt at full
    speed and gives up after seeing the stock (it is dealt a practice deal of its own: printed, with the
    cards its deal shares with the day's); mains that met the board's entry rule play the solver's winning
    line of the scout's deal at each pace of ``paces``; a genuine player (met the rule) plays the hint at 1 s.
    Per player: its outcome, whether the board shows it and its verdict, from the day's board and the
    moderators' API."""
    from patience.games import get_game
    from patience.server.solo.hints import hint
    from patience.solve import Budget, Status, solve

    rng = random.Random(34)
    started = time.monotonic()
    with serving(redis_url, database, workers) as (url, database_url):
        moderator = moderator_of(url, database_url, rng)
        tag = rng.randrange(10**6)
        opponents = [Client(url, 60 + n, f"opp{n}x{tag}").id for n in range(3)]
        scout = Client(url, 70, f"scout{tag}")
        scout.http.get("/api/daily/reloaded", timeout=600)  # today's deal, proved now (no stock): minutes
        outcome = play_daily(scout, database_url, hint, 0.0, rng, give_up_after=40)
        scout_game = scout.http.get("/api/daily/reloaded").json()
        scouted = scout_key(database_url, scout.id)
        day_key = daily_key(database_url)
        print(f"\nscout-then-main through `patience serve` ({workers} process(es), {database_url.split(':')[0]}): "
              f"the scout (a new account, machine pace) {outcome} after 40 moves, dealt "
              f"{'a practice deal of its own' if scout_game.get('practice') else 'the DAY' + chr(39) + 'S DEAL'} "
              f"(its key {'differs from' if scouted != day_key else 'IS'} today's; cards in the same place as "
              f"today's: {same_cards(scouted, day_key)} of 52)")
        # all the scout could learn is its own deal, every card of it: the solver's line there is the main's
        solution = solve(get_game("reloaded").deal(scouted), Budget(seconds=20))
        if solution.status is not Status.WON:
            print("the scout's deal: the solver found no winning line in 20 s (no main plays)")
            paces = []
        players: list[tuple[str, Client, str]] = []
        for n, pace in enumerate(paces):
            main = Client(url, 71 + n, f"main{n}x{tag}")
            establish(database_url, main.id, opponents)
            moves = list(solution.moves)
            players.append((f"main, {pace:g} s", main, play_daily(
                main, database_url, lambda s, moves=moves: moves[s.moves_made] if s.moves_made < len(moves) else None,
                pace, rng)))
        genuine = Client(url, 90, f"fair{tag}")
        establish(database_url, genuine.id, opponents)
        players.append(("genuine, 1 s", genuine, play_daily(genuine, database_url, hint, 1.0, rng)))
        for name, player, outcome in players:
            view = standing(moderator, player, 1)
            board = {e["user"] for e in moderator.http.get("/api/daily/reloaded").json()["entries"]}
            verdicts = ",".join(str(g["verdict"]) for g in view["games"])
            seen = daily_figures(database_url, player.id)
            print(f"{name:<14} {outcome:>9}  on the board: {'yes' if player.id in board else 'no':<3}  verdict "
                  f"{verdicts}  state {view['state']}  {seen}  {'; '.join(view['score']['reasons'])[:110]}")
    print(f"({time.monotonic() - started:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=200, help="accounts of each kind")
    parser.add_argument("--games", type=int, default=100, help="rated games an account plays at most")
    parser.add_argument("--deals", type=int, default=12, help="Solitaire Reloaded deals the decisions come from")
    parser.add_argument("--clairvoyance", type=int, default=8, help="deals of the clairvoyance phase (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scout", type=int, default=0,
                        help="deals of the scout-then-main phase (0: none; the issue asks for 30 and more)")
    parser.add_argument("--genuine", type=int, default=100, help="scout-then-main: deals the genuine winners play")
    parser.add_argument("--scout-only", action="store_true", help="the scout-then-main phase alone")
    parser.add_argument("--kept", action="store_true", help="with --scout-only: the keep-won candidate instead")
    parser.add_argument("--scout-server", default="",
                        help="scout-then-main through a real server: the mains' median think s (comma-separated)")
    parser.add_argument("--server", action="store_true", help="then play live duels through a real patience serve")
    parser.add_argument("--server-only", action="store_true", help="the server phase alone")
    parser.add_argument("--bots", default=",".join(SERVER_BOTS),
                        help="server phase: the bots, each against a simulated human (comma-separated)")
    parser.add_argument("--rounds", type=int, default=2, help="server phase: most matches a pair plays")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13",
                        help="server phase: a Redis database this run may empty")
    parser.add_argument("--database-url", default=None, help="server phase: the database (default: a new SQLite file)")
    parser.add_argument("--workers", type=int, default=1, help="server phase: server processes (2: PostgreSQL + Redis)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bots = [b for b in args.bots.split(",") if b]
    if any(b not in SERVER_BOTS for b in bots):
        parser.error(f"--bots: among {', '.join(SERVER_BOTS)}")
    if args.scout_server:
        scout_server_phase(args.redis_url, args.database_url, args.workers,
                           [float(x) for x in args.scout_server.split(",")])
        return
    if args.scout_only and args.kept:
        kept_phase(list(range(1001, 1001 + args.scout)), list(range(2001, 2001 + args.genuine)))
        return
    if args.scout_only:
        scout_phase(list(range(1001, 1001 + args.scout)), list(range(2001, 2001 + args.genuine)))
        return
    if args.server_only:
        server_phase(bots, args.rounds, args.redis_url, args.seed, args.database_url, args.workers)
        return
    model_phase(args.players, args.games, list(range(1, args.deals + 1)), rng)
    if args.clairvoyance:
        clairvoyance_phase(list(range(101, 101 + args.clairvoyance)))
    if args.scout:
        scout_phase(list(range(1001, 1001 + args.scout)), list(range(2001, 2001 + args.genuine)))
    if args.server:
        server_phase(bots, args.rounds, args.redis_url, args.seed, args.database_url, args.workers)


if __name__ == "__main__":
    main()
