"""What moves a rating (pure functions, no I/O): from the facts of a finished match, how much of each
side's proposed Glicko-2 change is applied, held or voided, and why.

The server (``patience.server.storage.league.finish_match``) gathers the facts (each side's effort in
its game, whether the two accounts are linked, what the winner already took from this loser, the
fair-play standing of both) and writes the decision to its ledger (``rating_changes``) in the same
transaction as the match's end; every change is a delta added to the rating as it is then, never an
absolute value. docs/fairplay.md ("What moves a rating") argues every figure.

>>> quit_fast = Effort(moves=3, distinct=3, active_ms=4_000, outcome="given_up")
>>> played = Effort(moves=40, distinct=25, active_ms=250_000, outcome="time_out")
>>> facts = Facts(efforts=(played, quit_fast), points=(1.0, 0.0), proposed=(170.0, -170.0))
>>> [(c.applied, c.state, c.reason) for c in decide(facts)]
[(0.0, 'void', 'no_attempt_opp'), (0.0, 'void', 'no_attempt')]
>>> facts = Facts(efforts=(played, played), points=(1.0, 0.0), proposed=(60.0, -60.0), taken_day=(30.0, -30.0))
>>> [(c.applied, c.reason) for c in decide(facts)]
[(10.0, 'capped'), (-10.0, 'capped')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from patience.fairplay import Reason
from patience.games import DRAW, REDEAL

__all__ = [
    "DAY_CAP", "MIN_ACTIVE_MS", "MIN_DISTINCT", "MIN_MOVES", "NEW_GAIN", "NEW_RATED", "QUITS_FREE", "SERIES_EXCESS",
    "SERIES_LOSSES", "SERIES_MATCHES", "SERIES_QUITS", "WEEK_CAP", "Change", "Effort", "Facts", "SeriesMatch",
    "attempted", "decide", "effort_of", "series_reason",
]

# -- the figures (docs/fairplay.md, "What moves a rating", says why each is where it is) ----------------

MIN_MOVES = 10  # a real attempt: this many real moves standing at the end (no stock turn, no undone move) ...
MIN_DISTINCT = 5  # ... of this many different moves (a card shuttled between two piles is two)
MIN_ACTIVE_MS = 30_000  # ... and the last of them this long after the start
QUITS_FREE = 3  # no-attempt losses a day that cost the quitter nothing; past them its loss is applied
DAY_CAP = 40.0  # net rating one account may take from one opponent in 24 h ...
WEEK_CAP = 80.0  # ... and in 7 days; past it both changes are cut by the same factor
NEW_RATED = 5  # an account with fewer rated matches with effort than this is new ...
NEW_GAIN = 10.0  # ... and a win over it gives at most this much
SERIES_MATCHES = 6  # a series to the moderators: this many matches between two accounts in 24 h ...
SERIES_LOSSES = 1  # ... the winner losing at most this many of them ...
SERIES_EXCESS = 2.5  # ... and winning this many more than both ratings predicted (sum of score - expected)
SERIES_QUITS = 3  # or this many losses with no attempt to the same account in 24 h

STOCK = frozenset({str(DRAW), str(REDEAL)})
"""The action texts of stock turns (the engine's :data:`~patience.games.DRAW` and :data:`~patience.games.REDEAL`):
no real move."""


@dataclass(frozen=True)
class Effort:
    """What one player did in their game of a match: real moves standing at the end (neither stock
    turns, nor undone, nor refused), how many different ones, the game time of the last one (ms),
    and how the game ended (``won``, ``no_moves``, ``time_out``, ``given_up``)."""

    moves: int
    distinct: int
    active_ms: int
    outcome: str | None


def effort_of(record: Mapping[str, Any]) -> Effort:
    """A game record's effort (:meth:`patience.session.Session.record`).

    >>> effort_of({"actions": [{"m": "draw", "t": 900}, {"m": "t1>t2", "t": 2000}, {"m": "undo", "t": 2500},
    ...                        {"m": "t3>f", "t": 40000}, {"m": "t9>q", "t": 41000, "illegal": True}],
    ...            "end": {"t": 50000, "outcome": "given_up"}})
    Effort(moves=1, distinct=1, active_ms=40000, outcome='given_up')
    """
    standing: list[tuple[str, int]] = []  # the actions an undo may take back, stock turns included
    for action in record.get("actions") or ():
        text, t = str(action.get("m")), int(action.get("t") or 0)
        if action.get("illegal") or text == "giveup":
            continue
        if text == "undo":
            if standing:
                standing.pop()
            continue
        standing.append((text, t))
    real = [(text, t) for text, t in standing if text not in STOCK]
    end = record.get("end") or {}
    return Effort(len(real), len({text for text, _ in real}), max((t for _, t in real), default=0),
                  end.get("outcome"))


def attempted(effort: Effort) -> bool:
    """Did the player make a real attempt? A won game always is one; else :data:`MIN_MOVES` real moves
    of :data:`MIN_DISTINCT` kinds, the last :data:`MIN_ACTIVE_MS` or more into the game.

    >>> attempted(Effort(5, 5, 3_000, "given_up")), attempted(Effort(0, 0, 0, "time_out"))
    (False, False)
    >>> attempted(Effort(12, 2, 60_000, "given_up")), attempted(Effort(12, 9, 60_000, "given_up"))
    (False, True)
    """
    if effort.outcome == "won":
        return True
    return effort.moves >= MIN_MOVES and effort.distinct >= MIN_DISTINCT and effort.active_ms >= MIN_ACTIVE_MS


@dataclass(frozen=True)
class Facts:
    """What the decision reads of a finished match, side 0 and side 1 each.

    ``points``: the rating score (1, ½, 0); ``proposed``: Glicko-2's change of each rating; ``linked``:
    the two accounts share a browser or an address group (docs/fairplay.md); ``taken_day``/``taken_week``:
    the net rating each side already took from the other in 24 h / 7 days (negative: lost);
    ``rated``: each side's rated matches with effort so far (fewer than :data:`NEW_RATED`: new);
    ``quits_day``: each side's losses with no attempt in 24 h, this match not counted; ``review`` and
    ``marked``: each side's fair-play standing at the match's end."""

    efforts: tuple[Effort, Effort]
    points: tuple[float, float]
    proposed: tuple[float, float]
    linked: bool = False
    taken_day: tuple[float, float] = (0.0, 0.0)
    taken_week: tuple[float, float] = (0.0, 0.0)
    rated: tuple[int, int] = (NEW_RATED, NEW_RATED)
    quits_day: tuple[int, int] = (0, 0)
    review: tuple[bool, bool] = (False, False)
    marked: tuple[bool, bool] = (False, False)


@dataclass(frozen=True)
class Change:
    """One side's decision: the change applied now, the change held (applied by a moderator's clear,
    see docs/fairplay.md), the share of Glicko-2's change kept (the deviation moves by that share too),
    the state (``applied``, ``held``, ``void``, ``voided``: void because of a mark, undone by a clear)
    and the reason (``rated``, ``no_attempt``, ``no_attempt_opp``, ``quit``, ``linked``, ``capped``,
    ``new``, ``held``, ``marked``)."""

    proposed: float
    applied: float
    held: float
    share: float
    state: str
    reason: str
    notes: tuple[str, ...] = field(default=())


def _void(proposed: float, reason: str, state: str = "void", held: float = 0.0) -> Change:
    return Change(proposed, 0.0, held, 0.0, state, reason)


def decide(f: Facts) -> tuple[Change, Change]:
    """Each side's :class:`Change`. In this order, the first rule that fits decides:

    1. linked accounts: nothing moves (``linked``; a match of theirs without a real attempt is written with
       the reasons of rule 2, so that the tournaments and the series see it, and moves nothing either);
    2. a side without a real attempt (:func:`attempted`): nothing moves (``no_attempt``, and
       ``no_attempt_opp`` for the side that tried; ``marked`` for both when a side is marked: a match the
       mark cut short, whose give-up counts as no quit), except that a
       quitter with :data:`QUITS_FREE` such losses in the day already loses as Glicko-2 says (``quit``;
       the winner still gains nothing);
    3. a side marked at the end: its change is void, the other's loss void and its gain applied
       (``marked``; the caps below still bound the gain);
    4. either side in review: both changes held, after the caps (``held``);
    5. the caps: the gain from one opponent within :data:`DAY_CAP`/:data:`WEEK_CAP` (both changes cut by
       one factor: ``capped``), a gain from a new opponent at most :data:`NEW_GAIN` (``new``, cut the
       same way: a match between new accounts counts as that share of a match).

    >>> e = Effort(30, 20, 200_000, "time_out")
    >>> decide(Facts((e, e), (1.0, 0.0), (8.0, -8.0), marked=(False, True)))[0].applied
    8.0
    >>> [c.state for c in decide(Facts((e, e), (1.0, 0.0), (8.0, -8.0), review=(True, False)))]
    ['held', 'held']
    >>> [c.held for c in decide(Facts((e, e), (1.0, 0.0), (8.0, -8.0), review=(True, False)))]
    [8.0, -8.0]
    """
    p = f.proposed
    tried = (attempted(f.efforts[0]), attempted(f.efforts[1]))
    if not all(tried) and any(f.marked):  # cut short by a mark (the arena ends such a match): void, no quit counted
        return _void(p[0], "marked"), _void(p[1], "marked")
    if f.linked and all(tried):
        return _void(p[0], "linked"), _void(p[1], "linked")
    if not all(tried):
        out = [_void(p[side], "no_attempt" if not tried[side] else "no_attempt_opp") for side in (0, 1)]
        for side in (0, 1) if not f.linked else ():  # linked: nothing moves, a quit's loss neither
            if not tried[side] and f.points[side] == 0.0 and f.quits_day[side] >= QUITS_FREE and p[side] < 0:
                out[side] = Change(p[side], p[side], 0.0, 1.0, "applied", "quit")
        return out[0], out[1]
    amounts, share, reason = _capped(f)
    if any(f.marked):
        out = []
        for side in (0, 1):
            if f.marked[side] or amounts[side] < 0:
                out.append(_void(p[side], "marked", "voided", amounts[side]))
            elif f.review[side]:
                out.append(Change(p[side], 0.0, amounts[side], share[side], "held", "held"))
            else:
                out.append(Change(p[side], amounts[side], 0.0, share[side], "applied", "marked"))
        return out[0], out[1]
    if any(f.review):
        return (Change(p[0], 0.0, amounts[0], share[0], "held", "held"),
                Change(p[1], 0.0, amounts[1], share[1], "held", "held"))
    return (Change(p[0], amounts[0], 0.0, share[0], "applied", reason),
            Change(p[1], amounts[1], 0.0, share[1], "applied", reason))


def _capped(f: Facts) -> tuple[tuple[float, float], tuple[float, float], str]:
    """Both changes after the caps, the share of Glicko-2's change each keeps, and the reason."""
    p = f.proposed
    gainer = 0 if p[0] > 0 else 1 if p[1] > 0 else None
    if gainer is None:
        return (p[0], p[1]), (1.0, 1.0), "rated"
    gain = p[gainer]
    room = max(0.0, min(DAY_CAP - f.taken_day[gainer], WEEK_CAP - f.taken_week[gainer]))
    reason = "rated"
    if gain > room:
        gain, reason = room, "capped"
    if f.rated[1 - gainer] < NEW_RATED and gain > NEW_GAIN:
        gain, reason = NEW_GAIN, "new"
    if reason == "rated":
        return (p[0], p[1]), (1.0, 1.0), reason
    factor = gain / p[gainer]
    return (p[0] * factor, p[1] * factor), (factor, factor), reason


# -- series to the moderators ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeriesMatch:
    """One match of a series, seen from the side looked at: its rating score (1, ½, 0), the score both
    ratings predicted at the start, and whether the other side lost without a real attempt."""

    points: float
    expected: float
    quit: bool = False


def series_reason(matches: Sequence[SeriesMatch] | Iterable[SeriesMatch]) -> Reason | None:
    """Why a series between two accounts in 24 h goes to the moderators (None: it does not): at least
    :data:`SERIES_MATCHES` matches, all won but :data:`SERIES_LOSSES`, :data:`SERIES_EXCESS` wins more
    than the ratings predicted; or :data:`SERIES_QUITS` losses of the other side with no attempt.

    >>> str(series_reason([SeriesMatch(1.0, 0.5)] * 6))
    '6 matches with one opponent in 24 h: 6 won, 0 lost (3.0 more wins than the ratings predict)'
    >>> series_reason([SeriesMatch(1.0, 0.9)] * 6) is None  # a strong friend beating a weaker one
    True
    >>> str(series_reason([SeriesMatch(1.0, 0.5, quit=True)] * 3))
    '3 matches with one opponent in 24 h: the opponent made no real attempt in 3'
    >>> series_reason([SeriesMatch(1.0, 0.5), SeriesMatch(0.0, 0.5)] * 4) is None  # friends trading wins
    True
    """
    matches = list(matches)
    quits = sum(1 for m in matches if m.quit)
    if quits >= SERIES_QUITS:
        return Reason("series_quits", {"n": len(matches), "quits": quits})
    won = sum(1 for m in matches if m.points == 1.0)
    lost = sum(1 for m in matches if m.points == 0.0)
    excess = sum(m.points - m.expected for m in matches)
    if len(matches) >= SERIES_MATCHES and lost <= SERIES_LOSSES and excess >= SERIES_EXCESS:
        return Reason("series_won", {"n": len(matches), "won": won, "lost": lost, "excess": round(excess, 1)})
    return None
