"""Patience Arena: exact rules, scores, solvers and duels for Teppich, Solitaire Reloaded and Der Fächer.

>>> from patience import get_game
>>> state = get_game("teppich").deal(seed=42)
>>> [str(m) for m in state.legal_moves()]  # doctest: +SKIP
['c3>f']
"""

from typing import TYPE_CHECKING, Any

from patience.cards import CARDS, Card, Suit, parse_card
from patience.errors import BadInputError, GameOverError, IllegalMoveError, PatienceError, RecordError

if TYPE_CHECKING:
    from patience.games import DRAW, REDEAL, Event, Move, Outcome, State, get_game

_FROM_GAMES = frozenset({"DRAW", "REDEAL", "Event", "Move", "Outcome", "State", "get_game"})

__all__ = [
    "CARDS", "DRAW", "REDEAL", "BadInputError", "Card", "Event", "GameOverError", "IllegalMoveError",
    "Move", "Outcome", "PatienceError", "RecordError", "State", "Suit", "get_game", "parse_card",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """The games' names are loaded on first use (``import patience.cli`` for one command need not load them)."""
    if name in _FROM_GAMES:
        import patience.games

        return getattr(patience.games, name)
    raise AttributeError(f"module 'patience' has no attribute {name!r}")
