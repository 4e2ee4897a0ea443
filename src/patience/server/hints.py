"""The hint button: the best move the engine can name now.

If the package has a solver (``patience.solve.hint(session)``) its answer is used; otherwise a
simple choice among the useful moves: a card to a foundation first, then a move that turns up
a face-down card, then a waste card onto the tableau, then any other card move, then the stock.
Whatever the source, the hint is a legal move of the current position.

>>> from patience.session import ManualClock, Session
>>> session = Session("teppich", seed=1, clock=ManualClock())
>>> move = hint(session)
>>> move.dst, move in session.state.legal_moves()
('f', True)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from patience.games import DRAW, REDEAL, Move, State
from patience.session import Session

__all__ = ["hint", "simple_hint", "solver_hint"]

_FOUNDATIONS = ("f", "fs", "fh", "fd", "fc")


def solver_hint() -> Callable[[Session], Any] | None:
    """``patience.solve.hint`` if that module exists."""
    try:
        module = importlib.import_module("patience.solve")
    except ImportError:
        return None
    found = getattr(module, "hint", None)
    return found if callable(found) else None


def hint(session: Session) -> Move | None:
    """A legal useful move of ``session`` now, or None when there is none."""
    state = session.state
    solver = solver_hint()
    if solver is not None:
        try:
            answer = solver(session)
        except Exception:  # a failing solver must not take the hint button with it
            answer = None
        if isinstance(answer, str):
            try:
                answer = state.parse_move(answer)
            except ValueError:
                answer = None
        if isinstance(answer, Move) and state.check(answer) is None:
            return answer
    return simple_hint(state)


def simple_hint(state: State) -> Move | None:
    """The highest-ranked useful move (see the module docstring)."""
    moves = state.useful_moves()
    if not moves:
        return None
    piles = state.piles()
    return min(moves, key=lambda move: _rank(move, piles))


def _rank(move: Move, piles: dict[str, list[tuple[Any, bool]]]) -> int:
    if move in (DRAW, REDEAL):
        return 5
    if move.dst in _FOUNDATIONS:
        return 0
    if move.src in _FOUNDATIONS:
        return 6  # taking a card back from a foundation helps only in rare positions
    pile = piles.get(move.src, [])
    if len(pile) > move.n and not pile[-move.n - 1][1]:
        return 1  # uncovers a face-down card
    if move.src == "w":
        return 2
    if len(pile) > move.n:
        return 3  # uncovers a face-up card that may go somewhere
    return 4
