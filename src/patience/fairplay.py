"""Fair play: what a rated game's evidence says about who played it (pure functions, no I/O).

The server keeps, for every rated game (live and async duels, tournament duels, the deal of the day),
one :class:`Step` a player action: the think time as the server saw it (ms since the previous action
of that player in that game), and how the page says the move was made (drag with its duration and
path length, click, key, double click; never trusted alone: a script can send anything). After the
game a worker thread replays it and counts how often the player's move was the project's own hint at
decisions that were not forced (see :func:`game_figures`). This module turns those figures into a
verdict per game and a score per account; docs/fairplay.md argues every threshold.

>>> steps = [Step(i, 90, "c") for i in range(40)]
>>> figures = game_figures(steps, decisions=0, agreed=0)
>>> verdict(figures).kind
'machine'
>>> verdict(game_figures([Step(i, 1500 + 700 * (i % 5), "d", 400, 300) for i in range(40)], 0, 0)).kind
'clear'
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "AGREE_EXCESS", "AGREE_MIN_DECISIONS", "AGREE_Z", "BURST_MPS", "HOW", "MACHINE_FAST_SHARE", "MACHINE_MEDIAN_MS",
    "MACHINE_MIN_STEPS", "REGULAR_CV", "AccountScore", "GameFigures", "Step", "Verdict", "account_score",
    "expected_agreement", "game_figures", "verdict",
]

HOW = {"drag": "d", "click": "c", "key": "k", "dbl": "2"}
"""How the page says a move was made, as kept in the evidence (``-``: the page did not say)."""

# -- thresholds (docs/fairplay.md says why each is where it is) -------------------------------------

MACHINE_MIN_STEPS = 20  # a game is judged on its speed only with this many actions
MACHINE_MEDIAN_MS = 250  # median think time under this over a whole game: no human sustains it
MACHINE_FAST_MS = 300  # an action this fast is "machine fast"
MACHINE_FAST_SHARE = 0.8  # ... and this share of a game's actions that fast
BURST_MPS = 8.0  # this many actions in one second anywhere in a game: flagged (a burst, several sockets)
REGULAR_CV = 0.25  # think times this regular (coefficient of variation) over a game: flagged
REGULAR_MIN_STEPS = 30
AGREE_MIN_DECISIONS = 40  # the hint agreement of an account counts from this many non-forced decisions
AGREE_EXCESS = 0.25  # agreement this far above what players of its rating show ...
AGREE_Z = 4.0  # ... and this many standard deviations above it: flagged
AGREE_BASE = 0.55  # the hint agreement expected of a player rated 1500 (see docs/fairplay.md)
AGREE_SLOPE = 0.10  # ... and its change per 500 rating points (clipped at +-1)
SCORE_FLAG = 50  # an account scored this much (0-100) goes to the moderators' queue
RECENT_GAMES = 30  # an account's score reads this many of its recent rated games


@dataclass(frozen=True)
class Step:
    """One action of a player: its place in the game's log, think time (ms, server side), how it was
    made (:data:`HOW` or ``-``) and, for a drag, its duration (ms) and path length (px)."""

    i: int
    think_ms: int
    how: str = "-"
    drag_ms: int | None = None
    drag_px: int | None = None

    def pack(self) -> list[Any]:
        return [self.i, self.think_ms, self.how, self.drag_ms, self.drag_px]

    @classmethod
    def unpack(cls, row: Sequence[Any]) -> Step:
        return cls(int(row[0]), int(row[1]), str(row[2]), row[3], row[4])


@dataclass(frozen=True)
class GameFigures:
    """What one rated game of one player shows (kept with the game's analysis)."""

    steps: int
    median_ms: float
    iqr_ms: float
    cv: float
    fast_share: float  # share of actions made in under MACHINE_FAST_MS
    burst: float  # most actions within one second
    decisions: int  # hint agreement: non-forced decisions looked at
    agreed: int  # ... where the player's move was the hint's
    kinds: dict[str, int] = field(default_factory=dict)  # actions per input kind
    score_per_min: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameFigures:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _burst(times: list[int]) -> float:
    """Most actions inside any one second of the game (times in ms, ascending)."""
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= 1000:
            start += 1
        best = max(best, end - start + 1)
    return float(best)


def game_figures(steps: Sequence[Step], decisions: int, agreed: int, *, score: int | None = None,
                 ms: int | None = None) -> GameFigures:
    """The figures of one game's steps, with the hint agreement counted by the replay."""
    thinks = [max(0, s.think_ms) for s in steps]
    kinds: dict[str, int] = {}
    for s in steps:
        kinds[s.how] = kinds.get(s.how, 0) + 1
    if len(thinks) >= 2:
        q = statistics.quantiles(thinks, n=4)
        median, iqr = statistics.median(thinks), q[2] - q[0]
        mean = statistics.fmean(thinks)
        cv = statistics.pstdev(thinks) / mean if mean > 0 else 0.0
    else:
        median, iqr, cv = (float(thinks[0]) if thinks else 0.0), 0.0, 0.0
    times, t = [], 0
    for think in thinks:
        t += think
        times.append(t)
    fast = sum(1 for think in thinks if think < MACHINE_FAST_MS) / len(thinks) if thinks else 0.0
    per_min = None if score is None or not ms else round(score / (ms / 60_000), 1)
    return GameFigures(len(thinks), float(median), float(iqr), round(cv, 3), round(fast, 3), _burst(times),
                       decisions, agreed, kinds, per_min)


@dataclass(frozen=True)
class Verdict:
    """One game's verdict: ``machine`` (marked at once), ``suspect`` (to review) or ``clear``."""

    kind: str
    reasons: tuple[str, ...] = ()


def verdict(fig: GameFigures) -> Verdict:
    """A game at machine speed from start to end is marked at once; a burst or clockwork timing is
    flagged for review; anything else is clear on its own (the account's score looks further)."""
    if fig.steps >= MACHINE_MIN_STEPS and fig.median_ms < MACHINE_MEDIAN_MS and fig.fast_share >= MACHINE_FAST_SHARE:
        return Verdict("machine", (f"a whole game at machine speed: median think {fig.median_ms:.0f} ms, "
                                   f"{fig.fast_share:.0%} of {fig.steps} actions under {MACHINE_FAST_MS} ms",))
    reasons = []
    if fig.burst >= BURST_MPS:
        reasons.append(f"{fig.burst:.0f} actions within one second")
    if fig.steps >= REGULAR_MIN_STEPS and fig.cv < REGULAR_CV:
        reasons.append(f"think times too regular (CV {fig.cv:.2f} over {fig.steps} actions)")
    return Verdict("suspect", tuple(reasons)) if reasons else Verdict("clear")


def expected_agreement(rating: float) -> float:
    """The share of non-forced decisions at which players of this rating play the hint's move."""
    return AGREE_BASE + AGREE_SLOPE * max(-1.0, min(1.0, (rating - 1500.0) / 500.0))


@dataclass(frozen=True)
class AccountScore:
    """An account's fair-play score (0: nothing seen, 100: certain), why, and its state: ``clear``,
    ``review`` (to the moderators' queue) or ``mark`` (a game at machine speed)."""

    score: int
    state: str
    reasons: tuple[str, ...]
    games: int
    decisions: int
    agreed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def account_score(games: Iterable[GameFigures], rating: float = 1500.0) -> AccountScore:
    """The score over an account's recent rated games (newest first; :data:`RECENT_GAMES` read).

    Four signs, the strongest counts: a game at machine speed (100, marked); hint agreement far above
    players of its rating, as a binomial z-score over all the non-forced decisions (up to 95); bursts
    or clockwork timing in several games (60, or 30 for one game); a score per minute no human of the
    site reached (30, never enough alone)."""
    recent = list(games)[:RECENT_GAMES]
    verdicts = [verdict(g) for g in recent]
    decisions = sum(g.decisions for g in recent)
    agreed = sum(g.agreed for g in recent)
    reasons: list[str] = []
    score = 0
    machine = [v for v in verdicts if v.kind == "machine"]
    if machine:
        return AccountScore(100, "mark", machine[0].reasons, len(recent), decisions, agreed)
    if decisions >= AGREE_MIN_DECISIONS:
        p0 = expected_agreement(rating)
        share = agreed / decisions
        z = (share - p0) / math.sqrt(p0 * (1 - p0) / decisions)
        if share - p0 >= AGREE_EXCESS and z >= AGREE_Z:
            score = max(score, min(95, 60 + round(4 * (z - AGREE_Z))))
            reasons.append(f"plays the hint's move at {share:.0%} of {decisions} open decisions "
                           f"(players rated {rating:.0f}: about {p0:.0%}; z = {z:.1f})")
    suspects = [v for v in verdicts if v.kind == "suspect"]
    if suspects:
        score = max(score, 60 if len(suspects) >= 2 else 30)
        reasons.append(f"{len(suspects)} game(s): " + "; ".join(sorted({r for v in suspects for r in v.reasons})))
    fast_scoring = [g for g in recent if g.score_per_min is not None and g.score_per_min > 400]
    if len(fast_scoring) >= 3:
        score = max(score, 30)
        reasons.append(f"{len(fast_scoring)} games scoring over 400 points a minute")
    state = "review" if score >= SCORE_FLAG else "clear"
    return AccountScore(score, state, tuple(reasons), len(recent), decisions, agreed)
