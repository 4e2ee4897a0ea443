"""Solvers, hints, win-rate studies and lists of winnable deals for the three games.

A solver looks at a whole position, every card known, and says one of three things: won
(with the whole line of moves, which replays through the rules engine as a won game),
unwinnable (every line was searched), or unknown (the budget ran out)::

    solution = solve_deal("faecher", seed=7)
    solution.status, len(solution.moves)     # (Status.WON, 88)
    solution.record()                         # a game record that replays as a win

Teppich (:mod:`patience.solve.carpet`), Der Fächer (:mod:`patience.solve.faecher`) and
Solitaire Reloaded, i.e. Klondike draw-one with unlimited redeals and every card known
(:mod:`patience.solve.klondike`), share one depth-first search
(:mod:`patience.solve.search`). :func:`hint` suggests a move while playing,
:mod:`patience.solve.analysis` tells where a finished game was lost, :mod:`patience.solve.chance` gives
each position's win chance with what the player could see, :mod:`patience.solve.study`
measures win rates, :mod:`patience.solve.winnable` keeps the seeds proved winnable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patience.errors import PatienceError
from patience.solve.search import Budget, Status
from patience.solve.solution import Solution, SolverError, solve, solve_deal

if TYPE_CHECKING:
    from patience.games import Move, State
    from patience.session import Session

__all__ = [
    "Budget",
    "HintsOffError",
    "Solution",
    "SolverError",
    "Status",
    "hint",
    "solve",
    "solve_deal",
]


class HintsOffError(PatienceError):
    """Hints are not given in this game (duels)."""


def hint(target: State | Session, *, duel: bool = False, budget_s: float = 1.0) -> Move | None:
    """A good move in this position, or None when no move is left. See :mod:`patience.solve.hints`.

    Hints are off in duels: ``duel=True`` raises HintsOffError.
    """
    from patience.solve.hints import hint as _hint

    if duel:
        raise HintsOffError("hints are off in duels")
    return _hint(target, budget_s=budget_s)
