"""Arena tournaments: the scoring and pairing rules, without any network or database.

A tournament is played in one duel format for a fixed length of time (lichess's arena as the model).
While it goes on, each player is paired again as soon as their last duel has ended, with the closest
free player by score and rating, never with the same opponent twice in a row (:func:`pair_free`).

A duel scores 2 points for a win, 1 for a draw and 0 for a loss. A player who has won two duels in a
row is *on fire*: from then on each win scores double (4), until a loss puts the fire out; a draw
scores 1 and neither lights nor puts out the fire (:func:`duel_points`)::

    >>> duel_points(["w", "w", "w", "d", "w", "l", "w"])
    [2, 2, 4, 1, 4, 0, 2]

A duel in which a side made no real attempt (:func:`patience.ladder.attempted`: the rating's rule of no
attempt) buys no points either (:func:`counted`): a side that made none and did not win has it as a loss
(0, and its fire goes out: giving up a bad deal at once is no way to keep the fire); a win with no real
attempt on either side counts as *void* (``v``: 0, and the winner's row of wins and its fire stay as they
were: an opponent who gives up at once is not the winner's doing, even when the winner had no time to make
an attempt of its own)::

    >>> [counted("w", True, False), counted("w", False, False), counted("l", False, True), counted("d", True, True)]
    ['v', 'v', 'l', 'd']
    >>> duel_points(["w", "w", "v", "w"])
    [2, 2, 0, 4]

The standings are the players by points, then by wins, then by rating (:func:`rank`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patience.errors import BadInputError

__all__ = ["DRAW", "LOSS", "MAX_MINUTES", "MIN_MINUTES", "POINTS", "VOID", "WIN", "Entrant", "Standing",
           "check_minutes", "counted", "duel_points", "on_fire", "pair_free", "rank"]

WIN, DRAW, LOSS, VOID = "w", "d", "l", "v"
POINTS = {WIN: 2, DRAW: 1, LOSS: 0, VOID: 0}
FIRE_AFTER = 2  # wins in a row that light the fire
MIN_MINUTES, MAX_MINUTES = 15, 120
"""How long a tournament a player makes may last."""


def check_minutes(minutes: int) -> int:
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise BadInputError(f"a tournament lasts {MIN_MINUTES} to {MAX_MINUTES} minutes")
    return minutes


def _check(result: str) -> str:
    if result not in POINTS:
        raise BadInputError(f"a duel's result is w, d, l or v, not {result!r}")
    return result


def counted(result: str, tried: bool, other_tried: bool) -> str:
    """What a duel's ``result`` counts as in the standings when the player did (``tried``) or did not make a
    real attempt, and their opponent did or did not: a win without attempts on both sides is void; any
    other result without the player's own attempt is a loss, and without the opponent's, void."""
    if _check(result) == WIN:
        return WIN if tried and other_tried else VOID
    if not tried:
        return LOSS
    return result if other_tried else VOID


def duel_points(results: Sequence[str]) -> list[int]:
    """The points of each of a player's duels, in the order they ended (``w``, ``d``, ``l``)."""
    out = []
    row = 0  # wins in a row
    fire = False
    for result in map(_check, results):
        if result == WIN:
            out.append(2 * POINTS[WIN] if fire else POINTS[WIN])
            row += 1
            fire = fire or row >= FIRE_AFTER
        elif result == DRAW:
            out.append(POINTS[DRAW])
            row = 0
        elif result == VOID:
            out.append(POINTS[VOID])
        else:
            out.append(POINTS[LOSS])
            row = 0
            fire = False
    return out


def on_fire(results: Sequence[str]) -> bool:
    """Does the player's next win score double?"""
    row = 0
    fire = False
    for result in map(_check, results):
        if result == VOID:
            continue
        row = row + 1 if result == WIN else 0
        fire = (fire or row >= FIRE_AFTER) and result != LOSS
    return fire


@dataclass(frozen=True)
class Standing:
    """A player's line of the standings before ranking: who, their rating, their results in order."""

    user: str
    rating: float
    results: tuple[str, ...]

    @property
    def points(self) -> int:
        return sum(duel_points(self.results))

    @property
    def wins(self) -> int:
        return self.results.count(WIN)


def rank(standings: Sequence[Standing]) -> list[tuple[int, Standing]]:
    """The standings in order with each player's rank (equal points, wins and rating: the same rank)."""
    ordered = sorted(standings, key=lambda s: (-s.points, -s.wins, -s.rating, s.user))
    out: list[tuple[int, Standing]] = []
    for n, standing in enumerate(ordered, start=1):
        if out and (out[-1][1].points, out[-1][1].wins, out[-1][1].rating) == (
                standing.points, standing.wins, standing.rating):
            out.append((out[-1][0], standing))
        else:
            out.append((n, standing))
    return out


@dataclass(frozen=True)
class Entrant:
    """A free player to pair: who, their tournament points, their rating, their last opponent."""

    user: str
    points: int
    rating: float
    last: str | None = None


def pair_free(free: Sequence[Entrant]) -> list[tuple[str, str]]:
    """Pairs to make of the free players now: from the top of the standings down, each player with the
    closest one by points, then rating, who was not their last opponent. A player whose only possible
    opponent is the last one waits for someone else to be free.

    >>> pair_free([Entrant("a", 4, 1500, "b"), Entrant("b", 4, 1600, "a"), Entrant("c", 0, 1500)])
    [('b', 'c')]
    """
    users = [e.user for e in free]
    if len(set(users)) != len(users):
        raise BadInputError("a player is free at most once")
    left = sorted(free, key=lambda e: (-e.points, -e.rating, e.user))
    made = []
    while left:
        first = left.pop(0)
        fits = [e for e in left if e.user != first.last and e.last != first.user]
        if not fits:
            continue
        other = min(fits, key=lambda e: (abs(e.points - first.points), abs(e.rating - first.rating), e.user))
        left.remove(other)
        made.append((first.user, other.user))
    return made
