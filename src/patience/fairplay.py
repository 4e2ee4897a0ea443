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
    "AGREE_EXCESS",
    "AGREE_MIN_DECISIONS",
    "AGREE_Z",
    "AT_CHANCE_P",
    "BURST_MPS",
    "CLAIRVOYANT_P",
    "HOW",
    "MACHINE_FAST_SHARE",
    "MACHINE_MEDIAN_MS",
    "MACHINE_MIN_STEPS",
    "REASONS",
    "REGULAR_CV",
    "AccountScore",
    "GameFigures",
    "Reason",
    "Step",
    "Verdict",
    "account_score",
    "climb_sign",
    "difficulty",
    "expected_agreement",
    "expected_nonobvious",
    "game_figures",
    "pace_association",
    "reason_text",
    "scouted",
    "tail_at_least",
    "verdict",
]

HOW = {"drag": "d", "click": "c", "key": "k", "dbl": "2"}
"""How the page says a move was made, as kept in the evidence (``-``: the page did not say)."""

# -- reasons ----------------------------------------------------------------------------------------

REASONS: dict[str, str] = {
    "machine": "a whole game at machine speed: median think {median_ms} ms, {fast}% of {steps} actions under "
               "{under_ms} ms",
    "clairvoyant": "right at {hits} of {n} decisions only the hidden cards decide (a player who sees the table: "
                   "about {expected}; chance {chance})",
    "burst": "{burst} actions within one second",
    "regular": "think times too regular (CV {cv} over {steps} actions)",
    "clairvoyant_games": "{games} game(s) clairvoyant: {first}",
    "clairvoyant_account": "right at {hits} of {n} decisions only the hidden cards decide, over {games} games (a "
                           "player who sees the table: about {expected}; chance {chance})",
    "agreement": "plays the hint's move at {share}% of {n} open decisions (players rated {rating}: about "
                 "{expected}%; z = {z})",
    "agreement_hard": "plays the hint's move at {share}% of {n} decisions where it is not the greedy move (players "
                      "rated {rating}: about {expected}%; z = {z})",
    "flat_pace": "think time does not follow the decisions' difficulty over {n} actions (rank association z = {z}; "
                 "people slow down with more choices and after a new card)",
    "flat_pace_agreement": "{flat}, and plays the hint's move at {share}% of {n} decisions where it is not the "
                           "greedy move (about {expected}% expected)",
    "suspect_games": "{games} game(s): {reasons}",
    "fast_scoring": "{games} games scoring over 400 points a minute",
    "climb": "rating up {gain} points over its recent games (others: at most {bar} in 19 of 20)",
    "series_quits": "{n} matches with one opponent in 24 h: the opponent made no real attempt in {quits}",
    "series_won": "{n} matches with one opponent in 24 h: {won} won, {lost} lost ({excess} more wins than the "
                  "ratings predict)",
    "series": "{why} ({name}, {game})",
    "scouted_linked": "won the deal of the day after an account linked to it (one browser, one address group or "
                      "rated matches between them) had played it",
    "scouted": "won a deal of the day a scout had played first, right at {hits} of {n} decisions only the hidden "
               "cards decide (a player who sees the table: about {expected}; chance {chance}): on a scouted day every "
               "such win waits",
}
"""The reasons of verdicts and scores in English, by key; the moderators' page has them in German,
English and Italian (``mod.reason`` in ``web/js/arena-text.js``)."""


@dataclass(frozen=True)
class Reason:
    """Why a game or an account looks as it does: a key of :data:`REASONS` and its figures (a figure may
    be a reason itself, or a list of them). ``str()`` is its English text (logs, the audit's notes);
    the server keeps and sends ``{"k", "p"}`` (:meth:`to_dict`), which the moderators' page writes in
    its language.

    >>> why = Reason("suspect_games", {"games": 2, "reasons": [Reason("burst", {"burst": 9})]})
    >>> str(why), why.to_dict()
    ('2 game(s): 9 actions within one second', {'k': 'suspect_games', 'p': {'games': 2, 'reasons': [{'k': 'burst', \
'p': {'burst': 9}}]}})
    """

    k: str
    p: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return reason_text(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reason_text(data: Any) -> str:
    """The English text of a reason as the server keeps and sends it (``{"k", "p"}``; a list: each, with
    "; " between; a row of before reasons had keys: its text as it is)."""
    if isinstance(data, dict) and data.get("k") in REASONS:
        return REASONS[data["k"]].format(**{name: reason_text(v) for name, v in (data.get("p") or {}).items()})
    if isinstance(data, list | tuple):
        return "; ".join(reason_text(v) for v in data)
    return str(data)


# -- thresholds (docs/fairplay.md says why each is where it is) -------------------------------------

MACHINE_MIN_STEPS = 20  # a game is judged on its speed only with this many actions
MACHINE_MEDIAN_MS = 250  # median think time under this over a whole game: no human sustains it
MACHINE_FAST_MS = 300  # an action this fast is "machine fast"
MACHINE_FAST_SHARE = 0.8  # ... and this share of a game's actions that fast
BURST_MPS = 8.0  # this many actions in one second anywhere in a game: flagged (a burst, several sockets)
REGULAR_CV = 0.25  # think times this regular (coefficient of variation) over a game: flagged
REGULAR_MIN_STEPS = 30
AGREE_MIN_DECISIONS = 150  # the hint agreement of an account counts from this many open decisions (three games)
AGREE_EXCESS = 0.25  # agreement this far above what players of its rating show ...
AGREE_ROOM = 0.7  # ... or, nearer 100 %, this share of the way from the expected to 100 % ...
AGREE_Z = 4.0  # ... and this many standard deviations above it: flagged
AGREE_BASE = 0.55  # the hint agreement expected of a player rated 1500 (see docs/fairplay.md)
AGREE_SLOPE = 0.10  # ... and its change per 500 rating points (clipped at +-1)
OBVIOUS_AGREE = 0.85  # the hint agreement expected of a player where the hint is the greedy (obvious) move
NONOBVIOUS_BASE = 0.40  # the hint agreement expected of a player rated 1500 where the hint is not the greedy move
NONOBVIOUS_EXCESS = 0.30  # agreement there this far above it (and AGREE_Z): flagged on its own
NONOBVIOUS_MIN = 100  # ... counted from this many such decisions
PACE_MIN_STEPS = 800  # think time against difficulty is judged over this many actions
PACE_FLAT_RHO = 0.07  # flat: the pooled rank association's z below this times sqrt(actions) (at most PACE_FLAT_Z)
PACE_FLAT_Z = 3.5
PACE_AGREE_EXCESS = 0.15  # flat pace and non-obvious agreement this far above expected (z >= PACE_AGREE_Z): flagged
PACE_AGREE_Z = 2.5
CLAIRVOYANT_P = 1e-3  # a game whose hits where only the hidden cards decide are this unlikely by chance
CLAIRVOYANT_MIN = 4  # ... among at least this many such decisions
CLAIRVOYANT_ACCOUNT_P = 1e-4  # the same pooled over an account's recent games
AT_CHANCE_P = 0.25  # the single-game bar before practice deals (a scouted win at least this likely by chance was
# shown): the verdict holds every scouted win the hidden cards decided now; benchmarks/fairplay.py compares
SCOUTED_SCORE = 50  # ... else it waits for a moderator (the account goes to the queue with it)
CLIMB_POINTS = 150  # a rating climb over recent games this large, and above the population's 95th percentile
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
    nonobvious: int = 0  # decisions looked at where the hint was not the greedy move
    nonobvious_agreed: int = 0  # ... where the player's move was the hint's
    pace_s: float = 0.0  # think time against difficulty: the rank statistic (see pace_association)
    pace_var: float = 0.0  # ... its variance when think time does not depend on difficulty
    paced: int = 0  # ... over this many actions
    open_ms: float | None = None  # median think time at open decisions
    forced_ms: float | None = None  # ... at forced moves (one useful move or none)
    hidden: list[float] = field(default_factory=list)  # where only hidden cards decide: the chance of a hit
    hidden_hits: int = 0  # ... the hits (the move kept the real deal won)
    scouted: str = ""  # a won deal of the day seen first by a scout: "day" (some scout), "linked" (a linked account's)

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


def difficulty(useful: int, new: bool) -> float:
    """How hard a decision is, in bits: log2 of the useful moves to choose from (Hick-Hyman: a
    person's choice time grows with it; a forced move is 0), one more when a card came into view
    since the player's previous action (a new card to take in)."""
    return math.log2(max(1, useful)) + (1.0 if new else 0.0)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pace_association(thinks: Sequence[float], hardness: Sequence[float]) -> tuple[float, float]:
    """Does think time grow with difficulty within a game: the linear rank statistic
    S = sum (rank of think - mean rank) * (difficulty - mean difficulty), and its variance when think
    times are exchangeable within the game (a delay that does not depend on the decision): summed
    over games, S / sqrt(variance) is a z-score (a stratified Spearman test), near 0 for such a
    delay and large for a person who slows down at harder decisions.

    >>> s, v = pace_association([300, 800, 1500, 2500], [0, 1, 2, 3])
    >>> round(s / math.sqrt(v), 2)
    1.73
    """
    n = len(thinks)
    if n < 3:
        return 0.0, 0.0
    ranks = _ranks(thinks)
    mean_r, mean_d = (n + 1) / 2, statistics.fmean(hardness)
    s = sum((r - mean_r) * (d - mean_d) for r, d in zip(ranks, hardness, strict=True))
    var = sum((r - mean_r) ** 2 for r in ranks) * sum((d - mean_d) ** 2 for d in hardness) / (n - 1)
    return s, var


def tail_at_least(chances: Sequence[float], hits: int) -> float:
    """P(at least ``hits`` successes) of independent trials with these chances (Poisson binomial, exact).

    >>> round(tail_at_least([0.5] * 10, 10), 6)
    0.000977
    """
    dist = [1.0]
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        for k, q in enumerate(dist):
            nxt[k] += q * (1 - p)
            nxt[k + 1] += q * p
        dist = nxt
    return min(1.0, sum(dist[max(0, hits):]))


def game_figures(steps: Sequence[Step], decisions: int, agreed: int, *, score: int | None = None,
                 ms: int | None = None, hardness: Sequence[float | None] | None = None, nonobvious: int = 0,
                 nonobvious_agreed: int = 0, hidden: Sequence[float] = (), hidden_hits: int = 0) -> GameFigures:
    """The figures of one game's steps, with what the replay found: the hint agreement, each step's
    difficulty (:func:`difficulty`, aligned with ``steps``; None where the replay could not tell),
    the agreement where the hint was not the greedy move, and the chances and hits where only the
    hidden cards decided (:mod:`patience.solve.clairvoyance`)."""
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
    pairs = [(think, h) for think, h in zip(thinks, hardness or (), strict=False) if h is not None]
    pace_s, pace_var = pace_association([p[0] for p in pairs], [p[1] for p in pairs])
    open_ms = [think for think, h in pairs if h >= 1.0]
    forced_ms = [think for think, h in pairs if h < 1.0]
    return GameFigures(len(thinks), float(median), float(iqr), round(cv, 3), round(fast, 3), _burst(times),
                       decisions, agreed, kinds, per_min, nonobvious, nonobvious_agreed, round(pace_s, 3),
                       round(pace_var, 3), len(pairs), float(statistics.median(open_ms)) if open_ms else None,
                       float(statistics.median(forced_ms)) if forced_ms else None,
                       [round(c, 4) for c in hidden], hidden_hits)


@dataclass(frozen=True)
class Verdict:
    """One game's verdict: ``machine`` (marked at once), ``clairvoyant`` or ``suspect`` (to review), or
    ``clear``."""

    kind: str
    reasons: tuple[Reason, ...] = ()


def scouted(fig: GameFigures) -> Verdict | None:
    """The stricter bar of a won deal of the day that a scout may have seen first (``fig.scouted``):
    ``scouted`` (its result waits for a moderator) when a linked account played the deal before, or, on a
    day scouted by another account (``"day"``: an established account whose attempt was at machine pace or
    suspect, or that is marked; a new account is dealt a practice deal and scouts nothing), when the hidden
    cards decided at least one of its decisions, whatever its hits there (a clairvoyant game is
    ``clairvoyant`` whatever the day); None otherwise. Such days are rare and cost the scout an established
    account; an honest winner of one waits for a moderator (docs/fairplay.md)."""
    if not fig.scouted:
        return None
    if fig.scouted == "linked":
        return Verdict("scouted", (Reason("scouted_linked"),))
    p = tail_at_least(fig.hidden, fig.hidden_hits)
    if not fig.hidden or (p <= CLAIRVOYANT_P and len(fig.hidden) >= CLAIRVOYANT_MIN):
        return None
    return Verdict("scouted", (Reason("scouted", {"hits": fig.hidden_hits, "n": len(fig.hidden),
                                                  "expected": round(sum(fig.hidden), 1), "chance": f"{p:.2f}"}),))


def verdict(fig: GameFigures) -> Verdict:
    """A game at machine speed from start to end is marked at once; a won deal of the day a scout saw
    first (:func:`scouted`), a clairvoyant game, a burst or clockwork timing is flagged for review;
    anything else is clear on its own (the account's score looks further)."""
    if fig.steps >= MACHINE_MIN_STEPS and fig.median_ms < MACHINE_MEDIAN_MS and fig.fast_share >= MACHINE_FAST_SHARE:
        return Verdict("machine", (Reason("machine", {"median_ms": round(fig.median_ms), "steps": fig.steps,
                                                      "fast": round(100 * fig.fast_share),
                                                      "under_ms": MACHINE_FAST_MS}),))
    seen = scouted(fig)
    if seen is not None:
        return seen
    if len(fig.hidden) >= CLAIRVOYANT_MIN:
        p = tail_at_least(fig.hidden, fig.hidden_hits)
        if p <= CLAIRVOYANT_P:
            return Verdict("clairvoyant", (Reason("clairvoyant", {
                "hits": fig.hidden_hits, "n": len(fig.hidden), "expected": round(sum(fig.hidden), 1),
                "chance": f"{p:.1e}"}),))
    reasons = []
    if fig.burst >= BURST_MPS:
        reasons.append(Reason("burst", {"burst": round(fig.burst)}))
    if fig.steps >= REGULAR_MIN_STEPS and fig.cv < REGULAR_CV:
        reasons.append(Reason("regular", {"cv": round(fig.cv, 2), "steps": fig.steps}))
    return Verdict("suspect", tuple(reasons)) if reasons else Verdict("clear")


def expected_agreement(rating: float, obvious: float | None = None) -> float:
    """The share of non-forced decisions at which players of this rating play the hint's move; with
    ``obvious``, the share of those decisions where the hint is the greedy move, the mix of the two
    kinds: :data:`OBVIOUS_AGREE` where it is, :func:`expected_nonobvious` where it is not (a strong
    player plays the obvious move when it is the best one: how often depends on the deals, and live
    deals have more such decisions than the 55 % of :data:`AGREE_BASE`'s)."""
    if obvious is not None:
        share = max(0.0, min(1.0, obvious))
        return share * OBVIOUS_AGREE + (1 - share) * expected_nonobvious(rating)
    return AGREE_BASE + AGREE_SLOPE * max(-1.0, min(1.0, (rating - 1500.0) / 500.0))


def expected_nonobvious(rating: float) -> float:
    """The same where the hint is not the greedy move (the move that looks obvious)."""
    return NONOBVIOUS_BASE + AGREE_SLOPE * max(-1.0, min(1.0, (rating - 1500.0) / 500.0))


def climb_sign(own: float | None, population: Sequence[float]) -> Reason | None:
    """A rating climb far faster than the population's: ``own`` is the account's rating gain over its
    recent rated games, ``population`` the same gain of other accounts over as many games; a sign
    when it is at least :data:`CLIMB_POINTS` and above the population's 95th percentile (with fewer
    than 20 accounts to compare with, above all of them)."""
    if own is None or own < CLIMB_POINTS:
        return None
    ranked = sorted(population)
    bar = ranked[int(0.95 * (len(ranked) - 1))] if len(ranked) >= 20 else (ranked[-1] if ranked else 0.0)
    if own <= bar:
        return None
    return Reason("climb", {"gain": round(own), "bar": round(bar)})


def _binomial_z(share: float, p0: float, n: int) -> float:
    return (share - p0) / math.sqrt(p0 * (1 - p0) / n)


@dataclass(frozen=True)
class AccountScore:
    """An account's fair-play score (0: nothing seen, 100: certain), why, and its state: ``clear``,
    ``review`` (to the moderators' queue) or ``mark`` (a game at machine speed)."""

    score: int
    state: str
    reasons: tuple[Reason, ...]
    games: int
    decisions: int
    agreed: int
    hard: int = 0  # decisions where the hint was not the greedy move
    hard_agreed: int = 0  # ... where the player's move was the hint's
    paced: int = 0  # actions whose think time was set against difficulty
    pace_z: float | None = None  # ... the pooled rank association (a z-score; None: no action)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def account_score(games: Iterable[GameFigures], rating: float = 1500.0, climb: Reason | None = None) -> AccountScore:
    """The score over an account's recent rated games (newest first; :data:`RECENT_GAMES` read).

    The signs, the strongest counts: a game at machine speed (100, marked); a clairvoyant game (70);
    hint agreement far above players of its rating, over all open decisions or over those where the
    hint is not the greedy move, as a binomial z-score (60 to 95); think times that do not follow the
    decisions' difficulty (:func:`pace_association`, pooled) together with agreement above its
    rating's where the hint is not the greedy move (65); bursts or clockwork timing in several games
    (60, or 30 for one game); flat pace alone (35); a score per minute no human of the site reached
    (30). ``climb`` (:func:`climb_sign`) adds 15 to another sign of 30 or more, never enough alone."""
    recent = list(games)[:RECENT_GAMES]
    verdicts = [verdict(g) for g in recent]
    decisions = sum(g.decisions for g in recent)
    agreed = sum(g.agreed for g in recent)
    reasons: list[Reason] = []
    score = 0
    machine = [v for v in verdicts if v.kind == "machine"]
    if machine:
        return AccountScore(100, "mark", machine[0].reasons, len(recent), decisions, agreed)
    seer = [v for v in verdicts if v.kind == "clairvoyant"]
    chances = [c for g in recent for c in g.hidden]
    hits = sum(g.hidden_hits for g in recent)
    scout = [v for v in verdicts if v.kind == "scouted"]
    if seer:
        score = 70
        reasons.append(Reason("clairvoyant_games", {"games": len(seer), "first": seer[0].reasons[0]}))
    elif len(chances) >= CLAIRVOYANT_MIN and tail_at_least(chances, hits) <= CLAIRVOYANT_ACCOUNT_P:
        score = 70
        reasons.append(Reason("clairvoyant_account", {
            "hits": hits, "n": len(chances), "games": len(recent), "expected": round(sum(chances), 1),
            "chance": f"{tail_at_least(chances, hits):.1e}"}))
    elif scout:
        score = SCOUTED_SCORE
        reasons.append(scout[0].reasons[0])
    hard = sum(g.nonobvious for g in recent)
    if decisions >= AGREE_MIN_DECISIONS:
        p0 = expected_agreement(rating, (decisions - hard) / decisions)
        share = agreed / decisions
        z = _binomial_z(share, p0, decisions)
        if share - p0 >= min(AGREE_EXCESS, AGREE_ROOM * (1 - p0)) and z >= AGREE_Z:
            score = max(score, min(95, 60 + round(4 * (z - AGREE_Z))))
            reasons.append(Reason("agreement", {"share": round(100 * share), "n": decisions, "rating": round(rating),
                                                "expected": round(100 * p0), "z": round(z, 1)}))
    hard_agreed = sum(g.nonobvious_agreed for g in recent)
    hard_z, hard_excess = 0.0, 0.0
    if hard >= NONOBVIOUS_MIN:
        p0 = expected_nonobvious(rating)
        hard_excess = hard_agreed / hard - p0
        hard_z = _binomial_z(hard_agreed / hard, p0, hard)
        if hard_excess >= NONOBVIOUS_EXCESS and hard_z >= AGREE_Z:
            score = max(score, min(95, 60 + round(4 * (hard_z - AGREE_Z))))
            reasons.append(Reason("agreement_hard", {"share": round(100 * hard_agreed / hard), "n": hard,
                                                     "rating": round(rating), "expected": round(100 * p0),
                                                     "z": round(hard_z, 1)}))
    paced = sum(g.paced for g in recent)
    pace_var = sum(g.pace_var for g in recent)
    pace_z = sum(g.pace_s for g in recent) / math.sqrt(pace_var) if pace_var > 0 else None
    if paced >= PACE_MIN_STEPS and pace_z is not None and pace_z < min(PACE_FLAT_Z, PACE_FLAT_RHO * math.sqrt(paced)):
        flat = Reason("flat_pace", {"n": paced, "z": round(pace_z, 1)})
        if hard >= NONOBVIOUS_MIN and hard_excess >= PACE_AGREE_EXCESS and hard_z >= PACE_AGREE_Z:
            score = max(score, 65)
            reasons.append(Reason("flat_pace_agreement", {
                "flat": flat, "share": round(100 * hard_agreed / hard), "n": hard,
                "expected": round(100 * expected_nonobvious(rating))}))
        else:
            score = max(score, 35)
            reasons.append(flat)
    suspects = [v for v in verdicts if v.kind == "suspect"]
    if suspects:
        score = max(score, 60 if len(suspects) >= 2 else 30)
        seen = {str(r): r for v in suspects for r in v.reasons}  # each once
        reasons.append(Reason("suspect_games", {"games": len(suspects), "reasons": [seen[t] for t in sorted(seen)]}))
    fast_scoring = [g for g in recent if g.score_per_min is not None and g.score_per_min > 400]
    if len(fast_scoring) >= 3:
        score = max(score, 30)
        reasons.append(Reason("fast_scoring", {"games": len(fast_scoring)}))
    if climb is not None and score >= 30:
        score = min(95, score + 15)
        reasons.append(climb)
    state = "review" if score >= SCORE_FLAG else "clear"
    return AccountScore(score, state, tuple(reasons), len(recent), decisions, agreed, hard, hard_agreed, paced,
                        None if pace_z is None else round(pace_z, 2))
