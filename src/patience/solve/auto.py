"""Auto-move: the cards a player may let go to the foundations by themselves.

:func:`auto_move` names one move that can never cost the game, or None:

- **safe** cards: in Solitaire Reloaded a face-up card (a tableau pile's top or the waste's)
  that no other card can ever need (:func:`patience.solve.klondike.is_safe`: Aces, 2s, and a
  card whose lower cards of the other colour are all up); in base Teppich any card that fits
  (the order of play never matters there); in Der Fächer any card that fits (cards never leave
  a foundation, and nothing could be put on that card elsewhere: the solver plays them at once
  too). Teppich with the waste has none: a gap filled from the waste or from the stock may
  decide the game.
- **finish**: once every card is face up (Solitaire Reloaded: nothing face down, stock and waste
  empty; Teppich with the waste: stock and waste empty), any card that fits, lowest first: the
  game then always comes out.

The server plays them after a player's move when the player asked for it (the play page's
auto-move setting); the rules engine checks each like any other move.
"""

from __future__ import annotations

from patience.games import Carpet, Faecher, Move, Reloaded, State
from patience.solve.klondike import is_safe

__all__ = ["auto_move", "safe_foundation_move"]


def safe_foundation_move(state: Reloaded, moves: list[Move] | None = None) -> Move | None:
    """A face-up Solitaire Reloaded card to its foundation that no other card can ever need."""
    height = list(state.height)
    for move in state.legal_moves() if moves is None else moves:
        if move.dst != "f":
            continue
        card = state.waste[-1] if move.src == "w" else state.tableau[int(move.src[1:]) - 1][-1]
        if is_safe(int(card), height):
            return move
    return None


def auto_move(state: State) -> Move | None:
    """One move to a foundation that cannot cost the game (see the module docstring), or None."""
    if state.is_won():
        return None
    ups = [m for m in state.legal_moves() if m.dst == "f"]
    if not ups:
        return None
    if isinstance(state, Reloaded):
        if not any(state.down) and not state.stock and not state.waste:
            return min(ups, key=lambda m: int(state.tableau[int(m.src[1:]) - 1][-1]) % 13)
        return safe_foundation_move(state, ups)
    if isinstance(state, Carpet):
        if not state.options.waste or (not state.stock and not state.waste):
            return ups[0]
        return None
    if isinstance(state, Faecher):
        return ups[0]
    return None
