"""The hint button: the best move the engine can name now.

The solver's hint (:func:`patience.solve.hint`) is used (in Solitaire Reloaded its "no move is
of use" too: the page then shows its no-hint text); should it fail, a simple choice
among the useful moves: a card to a foundation first, then a move that turns up a face-down
card, then a waste card onto the tableau, then any other card move, then the stock. The
simple choice also answers at once when the server is busy with another search. Whatever the
source, the hint is a legal move of the current position.

>>> from patience.session import ManualClock, Session
>>> session = Session("teppich", seed=1, clock=ManualClock())
>>> move = hint(session)
>>> move.dst, move in session.state.legal_moves()
('f', True)
"""

from __future__ import annotations

import logging
from typing import Any

from patience import solve
from patience.games import DRAW, REDEAL, Move, Reloaded, State
from patience.session import Session

__all__ = ["HINT_SECONDS", "LINE_SECONDS", "hint", "simple_hint"]

log = logging.getLogger(__name__)

_FOUNDATIONS = ("f", "fs", "fh", "fd", "fc")


HINT_SECONDS = 0.25  # a Solitaire Reloaded hint's searches stop by then (on a worker thread, one at a time)
LINE_SECONDS = 1.0  # Teppich and Der Fächer: a search for a winning line, once a game (then it is followed)


def hint(session: Session) -> Move | None:
    """A legal useful move of ``session`` now, or None when there is none."""
    state = session.state
    try:
        answer = solve.hint(session, budget_s=HINT_SECONDS if isinstance(state, Reloaded) else LINE_SECONDS)
    except Exception:  # a failing solver must not take the hint button with it
        log.exception("the solver's hint failed; the simple hint answers")
        return simple_hint(state)
    if answer is None and isinstance(state, Reloaded):
        return None  # every deal that fits the table is lost (or only circles are left): no move is of use
    if answer is not None and state.check(answer) is None:
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
